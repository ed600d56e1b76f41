package proctree

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/procstat"
)

func state(t *testing.T, pid int) byte {
	t.Helper()
	st, err := procstat.Read("/proc", pid)
	if err != nil {
		t.Fatalf("read %d: %v", pid, err)
	}
	return st.State
}

// TestHoldRelease: Hold stops every process under root, the setsid'd one
// included, not root; Release continues exactly those, and a process
// stopped before the hold stays stopped.
func TestHoldRelease(t *testing.T) {
	cmd, escaped := startTree(t)
	defer syscall.Kill(-escaped, syscall.SIGKILL)
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	// One more child, stopped by "someone else" before the hold.
	pre := exec.Command("sleep", "300")
	if err := pre.Start(); err != nil {
		t.Fatal(err)
	}
	defer pre.Process.Kill()
	syscall.Kill(pre.Process.Pid, syscall.SIGSTOP)
	time.Sleep(100 * time.Millisecond)
	self := syscall.Getpid()
	held := Hold("/proc", self, map[int]bool{self: true}, func(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) })
	time.Sleep(100 * time.Millisecond)
	pids := map[int]bool{}
	for _, h := range held {
		pids[h.Pid] = true
		if s := state(t, h.Pid); s != 'T' {
			t.Errorf("held %d is in state %c, want T", h.Pid, s)
		}
	}
	for _, want := range []int{cmd.Process.Pid, escaped} {
		if !pids[want] {
			t.Errorf("%d not held (held %v)", want, held)
		}
	}
	if pids[pre.Process.Pid] {
		t.Errorf("the process stopped before the hold was held: Release would continue it")
	}
	if n := Release("/proc", held, func(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }); n != len(held) {
		t.Errorf("Release continued %d of %d", n, len(held))
	}
	time.Sleep(100 * time.Millisecond)
	for _, h := range held {
		if s := state(t, h.Pid); s == 'T' {
			t.Errorf("released %d still stopped", h.Pid)
		}
	}
	if s := state(t, pre.Process.Pid); s != 'T' {
		t.Errorf("the process stopped before the hold is in state %c after Release, want T", s)
	}
}

// TestReleaseSkipsReusedPid: a held entry whose start time no longer
// matches (the pid reused) is not signalled.
func TestReleaseSkipsReusedPid(t *testing.T) {
	p := exec.Command("sleep", "300")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer p.Process.Kill()
	var sent []int
	n := Release("/proc", []Held{{Pid: p.Process.Pid, Start: 1}}, func(pid int, sig syscall.Signal) error { sent = append(sent, pid); return nil })
	if n != 0 || len(sent) != 0 {
		t.Errorf("Release signalled %v for a pid whose start time changed", sent)
	}
}
