package sandbox

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/procstat"
)

// TestQuietChecksAskTheKernel: sandboxQuiet's two questions, asked of real
// processes. A running process is not exiting; once killed and left
// unreaped (a zombie, past do_exit) it is. A process with a child is not
// childless; one without is. Seen failing with the PF_EXITING test
// dropped (the running sleep passed) and with the children files not read.
func TestQuietChecksAskTheKernel(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer cmd.Process.Kill()
	if _, ok := exitingThreads(pid); ok {
		t.Fatalf("a running sleep (pid %d) was taken for an exiting one", pid)
	}
	self := os.Getpid()
	tids, ok := threads(self)
	if !ok {
		t.Fatal("cannot list this process's threads")
	}
	if childless(self, tids) {
		t.Fatalf("this process has a child (pid %d) and was taken for childless", pid)
	}
	if !childless(pid, []int{pid}) {
		t.Fatalf("sleep (pid %d) has no child and was not taken for childless", pid)
	}
	cmd.Process.Kill()
	// Not reaped: a zombie whose one thread is past do_exit.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if st, err := procstat.Read("", pid); err == nil && st.State == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed sleep did not become a zombie")
		}
		time.Sleep(time.Millisecond)
	}
	if _, ok := exitingThreads(pid); !ok {
		t.Fatalf("a killed, unreaped sleep (pid %d) was not taken for exiting", pid)
	}
	cmd.Wait()
	if _, ok := exitingThreads(pid); ok {
		t.Fatalf("a reaped pid %d still answered", pid)
	}
}
