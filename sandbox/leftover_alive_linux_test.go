package sandbox

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/procstat"
)

// A supervisor that is a zombie (SIGKILLed, not yet reaped) is gone for
// jail gc, as for jail ps (List): its record, TMPDIR and trail are a dead
// run's. A live one, and a pid reused by another process, are told apart
// by the start tick.
func TestSupervisorAliveZombie(t *testing.T) {
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	var ws syscall.WaitStatus
	t.Cleanup(func() { syscall.Wait4(pid, &ws, 0, nil) })
	var tick uint64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		s, err := procstat.Read("", pid)
		if err == nil && tick == 0 {
			tick = s.StartTime
		}
		if err == nil && s.State == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d never became a zombie (%v, %+v)", pid, err, s)
		}
	}
	for _, tk := range []uint64{0, tick} {
		if supervisorAlive(pid, tk) {
			t.Errorf("supervisorAlive(zombie %d, tick %d) = true, want false", pid, tk)
		}
	}
	self := procstat.SelfStartTick()
	if !supervisorAlive(os.Getpid(), self) || !supervisorAlive(os.Getpid(), 0) {
		t.Errorf("supervisorAlive(self) = false, want true")
	}
	if supervisorAlive(os.Getpid(), self+1) {
		t.Errorf("supervisorAlive(self, another start tick) = true, want false (a reused pid)")
	}
}
