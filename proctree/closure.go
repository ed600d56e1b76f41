package proctree

import "github.com/jail-sandbox/jail/procstat"

// closure is members' pure part: the processes of all that are root's.
// ids holds every pid of root's found so far: a group or session id among
// them is one a process of root's made. Zombies are left out (dead: only
// their parent's wait removes them), not their children.
func closure(all []procstat.Stat, root int, never map[int]bool) []int {
	ids := map[int]bool{root: true}
	in := map[int]bool{}
	for changed := true; changed; {
		changed = false
		for _, st := range all {
			if in[st.Pid] || never[st.Pid] {
				continue
			}
			if st.Pid == root || ids[st.PPid] || ids[st.Pgrp] || ids[st.Session] {
				in[st.Pid], ids[st.Pid] = true, true
				changed = true
			}
		}
	}
	var out []int
	for _, st := range all {
		if in[st.Pid] && st.State != 'Z' {
			out = append(out, st.Pid)
		}
	}
	return out
}
