//go:build linux

package tests

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/proctest"
)

// TestKillNowStoppedSupervisor: the kill switch ends a sandbox whose
// supervisor does not answer its control socket (stopped here; starved
// under load alike). jail kill --now gave up after the socket's 6 s
// deadline, exit 1, and the sandbox ran on, even once continued: how
// TestExecLateStartConsistent (it stops the supervisor) left its sandbox
// running 25 minutes under eight helpers' load. Now an unanswered request
// is followed by the signals (SIGCONT first: a stopped supervisor ends
// only once continued), and jail kill waits for the end as before.
func TestKillNowStoppedSupervisor(t *testing.T) {
	waitsOnDeadline(t)
	ws := workspace(t)
	name, in := startInspected(t, ws, "s")
	fd, err := unix.PidfdOpen(in.Pid, 0)
	if err != nil {
		t.Fatalf("pidfd of the supervisor %d: %v", in.Pid, err)
	}
	defer unix.Close(fd)
	// Stopped whole (proctest.Stop): a thread left running could answer
	// the kill switch itself.
	if err := proctest.Stop(in.Pid, 10*time.Second); err != nil {
		t.Fatalf("stop the supervisor: %v", err)
	}
	t0 := time.Now()
	r := run(t, runOpts{dir: ws, timeout: 60 * time.Second}, "kill", "--now", name)
	took := time.Since(t0).Round(time.Millisecond)
	// Whatever the outcome, the supervisor runs again for the cleanup.
	unix.PidfdSendSignal(fd, unix.SIGCONT, nil, 0)
	if r.code != 0 {
		t.Fatalf("jail kill --now of a sandbox with a stopped supervisor: exit %d after %s\n%s%s", r.code, took, r.stdout, r.stderr)
	}
	// A pidfd is readable once its process has ended (jail kill may see
	// it going a moment before: its /proc entry).
	if n, _ := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 2000); n != 1 {
		t.Fatalf("jail kill --now said 0 after %s and the supervisor %d still runs", took, in.Pid)
	}
	t.Logf("killed in %s", took)
}
