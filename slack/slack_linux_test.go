package slack

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func threadSlack(t *testing.T) int {
	t.Helper()
	n, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		t.Fatalf("PR_GET_TIMERSLACK: %v", err)
	}
	return n
}

// TestSleepKeepsThreadSlack: Sleep sleeps at Fine and gives the thread its
// own slack back (a thread of the supervisor's at Supervisor must not stay
// at Fine for the next goroutine that runs on it).
func TestSleepKeepsThreadSlack(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old := threadSlack(t)
	defer unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(old), 0, 0, 0)
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, Supervisor, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	Sleep(100 * time.Microsecond)
	if d := time.Since(t0); d < 100*time.Microsecond {
		t.Errorf("Sleep(100us) returned after %v", d)
	}
	if got := threadSlack(t); got != Supervisor {
		t.Errorf("the thread's slack after Sleep: %d, want %d", got, Supervisor)
	}
}

// TestCallerWithoutEntry: a program that did not start at the entry (this
// test) reports the thread's slack as its caller's.
func TestCallerWithoutEntry(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if Entered() {
		t.Fatal("the test binary started at jail_supervisor_entry")
	}
	if got, want := Caller(), int64(threadSlack(t)); got != want {
		t.Errorf("Caller() = %d, want the thread's %d", got, want)
	}
}
