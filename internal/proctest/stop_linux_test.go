package proctest

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The child: several threads, each busy in turn, until killed.
func init() {
	if os.Getenv("PROCTEST_STOP_CHILD") != "1" {
		return
	}
	for i := 0; i < 4; i++ {
		go func() {
			for {
				time.Sleep(time.Millisecond)
			}
		}()
	}
	for {
		time.Sleep(time.Millisecond)
	}
}

// Stop returns once every thread is stopped, not when the signal is sent.
func TestStopWaitsForEveryThread(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROCTEST_STOP_CHILD=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	// Its threads started (the runtime's and the sleepers').
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && len(runningThreads(cmd.Process.Pid)) < 3; time.Sleep(10 * time.Millisecond) {
	}
	if err := Stop(cmd.Process.Pid, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if r := runningThreads(cmd.Process.Pid); len(r) > 0 {
		t.Errorf("Stop returned with threads %v not stopped", r)
	}
	syscall.Kill(cmd.Process.Pid, syscall.SIGCONT)
	time.Sleep(50 * time.Millisecond)
	if r := runningThreads(cmd.Process.Pid); len(r) == 0 {
		t.Errorf("no thread running after SIGCONT: runningThreads cannot tell")
	}
}

// A process that is gone is an error, not a stop.
func TestStopGone(t *testing.T) {
	cmd := exec.Command("/bin/true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	err := Stop(cmd.Process.Pid, time.Second)
	if err == nil || !strings.Contains(err.Error(), "stop") {
		t.Errorf("Stop of an exited pid: %v, want an error", err)
	}
}
