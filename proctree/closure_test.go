package proctree

import (
	"slices"
	"testing"

	"github.com/jail-sandbox/jail/procstat"
)

func TestClosure(t *testing.T) {
	st := func(pid, ppid, pgrp, sid int) procstat.Stat {
		return procstat.Stat{Pid: pid, PPid: ppid, Pgrp: pgrp, Session: sid, State: 'S'}
	}
	all := []procstat.Stat{
		st(1, 0, 1, 1),     // init
		st(5, 1, 5, 1),     // the agent, in init's session
		st(6, 5, 5, 1),     // the agent's child
		st(10, 1, 10, 1),   // the command (its own group, init's session)
		st(11, 10, 10, 1),  // its child
		st(12, 11, 12, 12), // a setsid'd grandchild
		st(13, 1, 12, 12),  // reparented to init, in the grandchild's session
		st(14, 1, 14, 14),  // the same, having left that session too: out of reach
		st(15, 5, 10, 1),   // the agent's, moved into the command's group (setpgid)
		st(20, 1, 20, 20),  // another exec'd command
	}
	zombie := st(16, 10, 10, 1)
	zombie.State = 'Z'
	all = append(all, zombie, st(17, 16, 10, 1))
	got := closure(all, 10, map[int]bool{1: true, 5: true})
	slices.Sort(got)
	want := []int{10, 11, 12, 13, 15, 17}
	if !slices.Equal(got, want) {
		t.Fatalf("closure = %v, want %v", got, want)
	}
	// The command gone: its group and the sessions its processes made
	// still name the rest.
	var gone []procstat.Stat
	for _, s := range all {
		if s.Pid != 10 {
			gone = append(gone, s)
		}
	}
	got = closure(gone, 10, nil)
	slices.Sort(got)
	if want := []int{11, 12, 13, 15, 17}; !slices.Equal(got, want) {
		t.Fatalf("closure without the command = %v, want %v", got, want)
	}
	// never is never touched, whatever links it.
	if got := closure(all, 10, map[int]bool{11: true}); slices.Contains(got, 11) {
		t.Fatalf("closure took a pid of never: %v", got)
	}
}
