package sandbox

import (
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// jail kill's wait (waitEnded) follows the supervisor its registry entry
// names: the pid and its start time. A pid that names another process now
// (the supervisor ended and the pid was reused before the pidfd was
// opened) is not waited for: the wait returns at once, as for an ended
// one, not after the whole timeout. The process the entry does name is
// waited for until it exits, zombie or not. Seen failing with the start
// time's check after the pidfd's open taken out: the reused pid was waited
// for until the timeout ("still running after 3s").
func TestKillWaitFollowsStartTime(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	pid := cmd.Process.Pid
	tick := startTick(pid)
	if tick == 0 {
		t.Fatalf("no start time for pid %d", pid)
	}

	// The pid, reused: the entry's start time is another process's.
	t0 := time.Now()
	if err := waitEnded(Entry{Pid: pid, StartTick: tick + 1}, 3*time.Second); err != nil {
		t.Errorf("a reused pid: %v", err)
	}
	if d := time.Since(t0); d > time.Second {
		t.Errorf("a reused pid was waited for %v", d)
	}

	// The supervisor itself: still running after a short timeout, ended
	// (a zombie here: not reaped yet) once it is killed.
	e := Entry{Pid: pid, StartTick: tick}
	if err := waitEnded(e, 100*time.Millisecond); err == nil {
		t.Errorf("a running process counted as ended")
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		_ = unix.Kill(pid, unix.SIGKILL)
	}()
	t0 = time.Now()
	if err := waitEnded(e, 10*time.Second); err != nil {
		t.Errorf("a killed process: %v", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("a killed process was waited for %v", d)
	}
}
