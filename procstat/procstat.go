// Package procstat reads a process's start time from Linux's
// /proc/PID/stat, the one fact jail uses to tell a live process from a
// later one that reuses its pid: the run registry, the agent-config guard's
// records and the cgroup names of stale runs all pair a pid with it. It
// also gives the parent's pid (job control walks up to the shell), and
// one field of a /proc/PID/status text (StatusField: a namespace's pid, a
// signal mask, the seccomp filters' count).
//
// It is a leaf: it imports no jail package, so the mechanism packages
// (cgroup, agentcfg, ...) may import it without breaking the rule that no
// mechanism package imports another. Parse and StatusField are pure and
// build on every GOOS; StartTick reads /proc and answers 0 where there is
// none.
package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// Stat is what jail takes from one /proc/PID/stat line.
type Stat struct {
	Pid   int
	Comm  string // the name between the parentheses, as the kernel wrote it
	State byte   // field 3: R, S, D, T, Z, ...
	PPid  int    // field 4: the parent's pid (0 for init and kernel threads' parent)
	Pgrp  int    // field 5: the process group
	// Session is field 6: the session id.
	Session int
	// Flags is field 9: the kernel's PF_* flags of the task.
	Flags uint64
	// StartTime is field 22: the start time in clock ticks after boot.
	StartTime uint64
}

// PFExiting is the PF_EXITING bit of Flags: the task is in do_exit and
// runs no more code of its own.
const PFExiting = 0x4

// ErrFormat says a line is not the stat format this package knows.
var ErrFormat = errors.New("not a /proc/PID/stat line")

// Parse reads one /proc/PID/stat line. The command name (field 2) may hold
// spaces and ')' itself (a process names itself with prctl or its
// executable's name), so the name ends at the LAST ')': fields after it are
// numbers and one state letter, and cannot hold one. Splitting the whole
// line on spaces would let a process shift the fields and pose as another
// start time (pid reuse).
func Parse(b []byte) (Stat, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return Stat{}, fmt.Errorf("%w: no (comm)", ErrFormat)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil || pid < 0 {
		return Stat{}, fmt.Errorf("%w: pid %q", ErrFormat, bytes.TrimSpace(b[:open]))
	}
	f := bytes.Fields(b[end+1:])
	// f[0] is field 3 (state); field 22 (starttime) is f[19].
	if len(f) < 20 {
		return Stat{}, fmt.Errorf("%w: %d fields after comm, want at least 20", ErrFormat, len(f))
	}
	if len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("%w: state %q", ErrFormat, f[0])
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil || ppid < 0 {
		return Stat{}, fmt.Errorf("%w: ppid %q", ErrFormat, f[1])
	}
	pgrp, err := strconv.Atoi(string(f[2]))
	if err != nil || pgrp < 0 {
		return Stat{}, fmt.Errorf("%w: pgrp %q", ErrFormat, f[2])
	}
	sid, err := strconv.Atoi(string(f[3]))
	if err != nil || sid < 0 {
		return Stat{}, fmt.Errorf("%w: session %q", ErrFormat, f[3])
	}
	flags, err := strconv.ParseUint(string(f[6]), 10, 64)
	if err != nil {
		return Stat{}, fmt.Errorf("%w: flags %q", ErrFormat, f[6])
	}
	st, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return Stat{}, fmt.Errorf("%w: starttime %q", ErrFormat, f[19])
	}
	return Stat{Pid: pid, Comm: string(b[open+1 : end]), State: f[0][0], PPid: ppid, Pgrp: pgrp, Session: sid, Flags: flags, StartTime: st}, nil
}

// Descendants lists the pids below root in all (one reading of /proc:
// All), parents before their children. Each pid is named once: a reading
// taken process by process may hold a parent link that pid reuse made
// since, and a loop of such links must not walk for ever.
func Descendants(all []Stat, root int) []int {
	children := map[int][]int{}
	for _, st := range all {
		children[st.PPid] = append(children[st.PPid], st.Pid)
	}
	var out []int
	queue := []int{root}
	seen := map[int]bool{root: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}
