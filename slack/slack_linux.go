package slack

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Supervisor is the supervisor's timer slack (ns), set by its entry: the
// same bound as init's (ns.InitTimerSlack).
const Supervisor = 1_000_000

// entry is written by jail_supervisor_entry before the Go runtime starts
// (amd64): entry[0] is 1 once it ran, entry[1] the caller's timer slack
// as PR_GET_TIMERSLACK returned it (a negative errno: unknown, and the
// entry then left the slack alone).
var entry [2]int64

// Caller is the timer slack (ns) jail's caller started it with: the one
// its entry found, or, where jail did not start at that entry, the calling
// thread's own (nothing changed it then); 0 if unknown.
func Caller() int64 {
	if Entered() {
		return entry[1]
	}
	n, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		return 0
	}
	return int64(n)
}

// Entered says whether jail started at its entry and set Supervisor.
func Entered() bool { return entry[0] == 1 && entry[1] >= 0 }

// Fine is the timer slack (ns) of Sleep: the kernel's default.
const Fine = 50_000

// Sleep sleeps d on the calling goroutine's thread at the timer slack Fine,
// for a short poll on the run's critical path. A Go timer ends no sooner
// than the netpoller's next millisecond (its epoll timeout is in whole
// milliseconds) plus the thread's slack: a 100 us time.Sleep took ~1.1 ms
// at the default slack and ~2.1 ms at Supervisor's (measured, an idle
// process); this one ~0.15 ms. The thread keeps its processor meanwhile
// (a blocking system call), which is why d must be short.
func Sleep(d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err == nil && old != Fine {
		if unix.Prctl(unix.PR_SET_TIMERSLACK, Fine, 0, 0, 0) == nil {
			// Back to the thread's own before another goroutine runs
			// on it (an unlocked thread is anyone's).
			defer unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(old), 0, 0, 0)
		}
	}
	ts := unix.NsecToTimespec(d.Nanoseconds())
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}
