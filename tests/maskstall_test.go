//go:build linux

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A terminal that stops reading (a stalled ssh link, a multiplexer's
// paused pane) must not keep the run's end from its checks. maskurgent
// writes a fallen mask's urgent line on the agent's screen from the mask
// watch; on a stalled terminal that write waited for the screen (held by
// the relay's blocked write), and the run's end waited for the watch:
// the exit check (quarantine, protected files put back) and the trail's
// exit event never came while the terminal stalled. Seen failing with
// main's binary (8c88c3d..4260be5): no exit event in 20 s.
func TestUnmaskedStalledTerminalStillEnds(t *testing.T) {
	ws := workspace(t)
	fsWrite(t, ws, ".env", "SECRET=old\n", 0o644)
	trail := filepath.Join(t.TempDir(), "trail.jsonl")
	// The agent floods the screen nobody reads (the relay's write to it
	// blocks), says ready, and ends at the host's go.
	script := `(yes stall-stall-stall | head -c 4000000) & sleep 1; echo > ready; ` + waitForGo + `; exit 0`
	cmd := exec.Command(jail(t), "--audit", trail, "--", "/bin/sh", "-c", script)
	cmd.Dir = ws
	master, slave := openPty(t)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		master.Close()
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(ws, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent never said ready")
		}
	}
	env := hostSaves(t, ws)
	// The fall is in the trail (written before the notice)...
	has := func(s string) bool {
		b, _ := os.ReadFile(trail)
		return strings.Contains(string(b), s)
	}
	for deadline := time.Now().Add(10 * time.Second); !has(`"type":"unmasked"`) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if !has(`"type":"unmasked"`) {
		t.Fatalf("no unmasked event for %s in the trail", env)
	}
	time.Sleep(300 * time.Millisecond) // the urgent line is under way
	fsWrite(t, ws, "go", "", 0o644)
	// ...and the run's end reaches its exit event while the terminal
	// still reads nothing.
	ended := false
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ended = has(`"type":"exit"`); ended {
			break
		}
	}
	// Let the terminal drain, so jail can say its summary and exit.
	scr := watch(master)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Errorf("jail did not exit once the terminal read again")
	}
	if !ended {
		t.Errorf("with the terminal stalled, the run's end never wrote its exit event (the exit check waited for the urgent line); terminal tail: %q", tail(scr.String(), 300))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
