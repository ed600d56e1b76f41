package ns

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// InitSlice is the scheduler slice (ns, EEVDF's request size, kernel
// >= 6.12: sched_setattr's sched_runtime for a SCHED_NORMAL or
// SCHED_BATCH thread) of init's spawner thread, and so of the lean
// init's entry and of init, which inherit it across their clone and
// execve. 0.5 ms: shorter than the kernel's default (1.4 ms here), so
// init is preferred, but not its smallest (0.1 ms), which made init
// yield and be switched back every 0.1 ms: more context switches (costly
// in a VM), +0.5-2 ms of CPU a start, and no earlier `main`.
//
// Why: on a machine with two CPUs the supervisor's check and plan run
// while the entry and init's Go runtime start, and init's start is the
// longer path to the agent. A new or woken task with the default slice
// waits until the running one's slice is used (ftrace, load 5-8: from
// the entry's vfork to init's `main`, 7-24 ms, the entry and init were
// runnable but not running for 3-15 ms, while the supervisor's threads
// ran 2-3 ms and other processes the rest); one with a shorter slice
// has an earlier virtual deadline and preempts it at once (the kernel's
// PREEMPT_SHORT). Its share of the CPU is the same
// (a slice changes when a task runs, not how much): what init gains the
// supervisor loses, later. Any process may set its own threads' slice,
// so init is given nothing an agent could not take for itself; the
// agent does not inherit it (Spec.AgentSlice, forkExec). A kernel
// without custom slices takes the call and ignores the value.
const InitSlice = 500_000

// threadSlice is the calling thread's scheduler slice (ns), 0 when
// unknown or not a fair-class thread's.
func threadSlice() uint64 {
	a, err := unix.SchedGetAttr(0, 0)
	if err != nil || a.Policy != unix.SCHED_NORMAL && a.Policy != unix.SCHED_BATCH {
		return 0
	}
	return a.Runtime
}

// setThreadSlice sets the calling thread's scheduler slice to ns,
// keeping its policy, nice value and reset-on-fork flag (sched_setattr
// sets them all: what it read is written back). A thread of another
// class (real-time, deadline, idle) is left alone, and so is one whose
// attributes cannot be read. Setting one's own slice needs no privilege
// at an unchanged nice value.
func setThreadSlice(ns uint64) error {
	a, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return err
	}
	if a.Policy != unix.SCHED_NORMAL && a.Policy != unix.SCHED_BATCH {
		return nil
	}
	b := unix.SchedAttr{
		Size:    unix.SizeofSchedAttr,
		Policy:  a.Policy,
		Flags:   a.Flags & unix.SCHED_FLAG_RESET_ON_FORK,
		Nice:    a.Nice,
		Runtime: ns,
	}
	return unix.SchedSetAttr(0, &b, 0)
}

// callerSlice is jail's caller's scheduler slice, for the agent
// (Spec.AgentSlice): the calling goroutine's thread's. Only init's
// spawner thread has InitSlice, and it is locked to its goroutine for
// init's whole life and ends with it (spawnerThread), so no other
// goroutine ever runs on it.
func callerSlice() int64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return int64(threadSlice())
}
