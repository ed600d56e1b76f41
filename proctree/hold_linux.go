package proctree

import (
	"syscall"

	"github.com/jail-sandbox/jail/procstat"
)

// Held is one process Hold stopped: its pid and start time, so that
// Release never continues a later process that reuses the pid.
type Held struct {
	Pid   int
	Start uint64
}

// Hold stops every live process found to come from root (package doc;
// root itself and never excluded) that is not stopped already, with
// SIGSTOP, in passes until one finds none new (a stopped process forks no
// more), and returns the ones it stopped. Those stopped before (a job the
// sandbox's own shell stopped, the agent stopped at the terminal) are left
// to whoever stopped them: Release does not continue them. A process in
// the middle of a fork when the pass reads /proc is found by the next one,
// as its parent, stopped, keeps it as its child.
func Hold(proc string, root int, never map[int]bool, send func(pid int, sig syscall.Signal) error) []Held {
	if proc == "" {
		proc = "/proc"
	}
	var held []Held
	seen := map[int]bool{}
	for pass := 0; pass < maxPasses; pass++ {
		all, err := procstat.All(proc)
		if err != nil {
			break
		}
		byPid := make(map[int]procstat.Stat, len(all))
		for _, st := range all {
			byPid[st.Pid] = st
		}
		grew := false
		for _, pid := range closure(all, root, never) {
			if pid == root || seen[pid] {
				continue
			}
			seen[pid] = true
			st := byPid[pid]
			if st.State == 'T' || st.State == 't' {
				continue // stopped by someone else: theirs to continue
			}
			if send(pid, syscall.SIGSTOP) == nil {
				held = append(held, Held{Pid: pid, Start: st.StartTime})
				grew = true
			}
		}
		if !grew {
			break
		}
	}
	return held
}

// Release continues what Hold stopped (SIGCONT), each process only while
// it is still the one Hold stopped (same start time). It returns how many
// it continued.
func Release(proc string, held []Held, send func(pid int, sig syscall.Signal) error) int {
	if proc == "" {
		proc = "/proc"
	}
	n := 0
	for _, h := range held {
		st, err := procstat.Read(proc, h.Pid)
		if err != nil || st.StartTime != h.Start {
			continue
		}
		if send(h.Pid, syscall.SIGCONT) == nil {
			n++
		}
	}
	return n
}
