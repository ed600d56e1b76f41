package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/procstat"
	"github.com/jail-sandbox/jail/slack"
)

// This file: the kernel's word, before the exit check starts on init's.
//
// init sends its exit message after its kill(-1) and a wait4 that found no
// child left, and forks nothing from then on (ns: reap). The main loop
// starts the exit check on that message (endCheck), while the kernel tears
// init down, instead of after. Before it does, sandboxQuiet makes the
// kernel vouch for what init said, so that neither a bug in init nor an
// init the agent took over can act while the check runs:
//   - init is SIGKILLed (it was exiting anyway) and every one of its
//     threads must be in do_exit (PF_EXITING in /proc/PID/task/TID/stat):
//     init runs no more code of its own, so it writes and forks no more;
//   - with a cgroup, the kernel lists no member but init in it and no
//     group below it;
//   - without one, no thread of init may have a child (task/TID/children,
//     read twice: a child moves between threads' lists as they exit). In
//     the pid namespace (and, degraded, below init the subreaper) every
//     other process of the sandbox descends from init, so none is left.
// When the kernel cannot say so within quietWait (or cannot tell at all:
// no children files), the check waits for init's exit, when the kernel
// has killed and reaped the whole pid namespace, as before.

// quietWait bounds how long sandboxQuiet waits for init's threads to
// reach do_exit after its SIGKILL (they take microseconds).
const quietWait = 3 * time.Millisecond

// sandboxQuiet tells whether the exit check may start now, on init's exit
// message. It SIGKILLs init: call it only once that message came.
func (r *runner) sandboxQuiet() bool {
	pid := r.sb.Pid
	// Unreaped until sb.Done: the pid is still init's.
	_ = unix.Kill(pid, unix.SIGKILL)
	// Every process of the sandbox is in its cgroup, which it cannot leave
	// (v1: root's directories; v2: the cgroup namespace's root is its own
	// group): the membership answers for them. Without one, init's
	// children do.
	grouped := r.group != nil && r.group.Mode() != "none"
	deadline := time.Now().Add(quietWait)
	for {
		select {
		case <-r.sb.Done():
			return false // gone: finish checks after it, as without a message
		default:
		}
		if tids, ok := exitingThreads(pid); ok {
			if grouped && r.group.Only(pid) {
				return true
			}
			if !grouped && childless(pid, tids) && childless(pid, tids) {
				return true
			}
		}
		if time.Now().After(deadline) {
			return false
		}
		// On the run's critical path: a Go timer would wake no sooner
		// than the netpoller's next millisecond plus the supervisor's
		// timer slack (package slack).
		slack.Sleep(100 * time.Microsecond)
	}
}

// threads lists pid's threads.
func threads(pid int) ([]int, bool) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(ents) == 0 {
		return nil, false
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, len(tids) > 0
}

// exitingThreads lists pid's threads if every one is in do_exit.
func exitingThreads(pid int) ([]int, bool) {
	tids, ok := threads(pid)
	if !ok {
		return nil, false
	}
	var buf [1024]byte
	for _, tid := range tids {
		n, err := readSmall(fmt.Sprintf("/proc/%d/task/%d/stat", pid, tid), buf[:])
		if err != nil {
			return nil, false
		}
		st, err := procstat.Parse(buf[:n])
		if err != nil || st.Flags&procstat.PFExiting == 0 {
			return nil, false
		}
	}
	return tids, true
}

// childless tells whether no thread of pid has a child. Without
// CONFIG_PROC_CHILDREN the files are missing: no word from the kernel.
func childless(pid int, tids []int) bool {
	var buf [64]byte
	for _, tid := range tids {
		n, err := readSmall(fmt.Sprintf("/proc/%d/task/%d/children", pid, tid), buf[:])
		if err != nil || len(bytes.TrimSpace(buf[:n])) > 0 {
			return false
		}
	}
	return true
}
