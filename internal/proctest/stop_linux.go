package proctest

import (
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/procstat"
)

// Stop sends pid SIGSTOP and returns once every thread of it is stopped,
// or says which are not after limit. kill(2) returning is not the stop:
// the kernel wakes one thread of the process to take a group's SIGSTOP
// (the one the pid names first), and one in an uninterruptible or killable
// wait (a page brought in from disk, a vfork) takes it only when it
// returns; until then every other thread runs on. A supervisor "stopped"
// that way answered a jail exec command's first exec at once
// (TestExecLateKillWhole as jailtest: 2 runs in 69 of a copy of it under
// load; init was not stopped yet, reported the start, and the test waited
// 60 s for a command that was running).
func Stop(pid int, limit time.Duration) error {
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("stop %d: %w", pid, err)
	}
	deadline := time.Now().Add(limit)
	for {
		running := runningThreads(pid)
		if len(running) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("stop %d: threads %v not stopped after %s", pid, running, limit)
		}
		time.Sleep(time.Millisecond)
	}
}

// runningThreads lists pid's threads that are not stopped ('T', or 't'
// traced), with their states: procstat.All over the process's task
// directory, whose entries are stat lines as /proc's are.
func runningThreads(pid int) []string {
	all, err := procstat.All("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, st := range all {
		if st.State != 'T' && st.State != 't' {
			out = append(out, strconv.Itoa(st.Pid)+":"+string(rune(st.State)))
		}
	}
	return out
}

// Hold stops pid whole (Stop, within 10 s) for a test that holds a process
// of jail's still, and returns resume, which lets it run again (SIGCONT);
// resume also runs at the test's end if the test did not call it, so a
// failing test leaves nothing stopped.
func Hold(t testing.TB, pid int) (resume func()) {
	t.Helper()
	if err := Stop(pid, 10*time.Second); err != nil {
		t.Fatalf("hold: %v", err)
	}
	var once sync.Once
	resume = func() { once.Do(func() { syscall.Kill(pid, syscall.SIGCONT) }) }
	t.Cleanup(resume)
	return resume
}
