//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An attach repaints: a full-screen program that drew while nobody was
// attached is told the window changed (SIGWINCH) even when the user's
// terminal has the size the kept one already has, so it redraws instead
// of leaving the new client a blank screen. Before, an attach at the same
// size (24x80, the kept terminal's first size) sent no SIGWINCH at all.
func TestSessionAttachRedraws(t *testing.T) {
	ws := workspace(t)
	m := strings.ReplaceAll(marker(), ".", "")
	name := "r" + m
	os.Chmod(ws, 0o777)
	startSession(t, ws, name, "-t", "--", "/bin/bash", "--norc", "--noprofile", "-c",
		`trap 'echo W >> winch.log' WINCH; echo ready > ready; while :; do sleep 0.05; done`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(ws, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the kept command did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Only a repaint asked for by this attach counts: whatever the start
	// itself sent (a first resize) is behind us once the log has settled.
	winches := func() int {
		b, _ := os.ReadFile(filepath.Join(ws, "winch.log"))
		return strings.Count(string(b), "W")
	}
	time.Sleep(200 * time.Millisecond)
	before := winches()
	t.Logf("repaints before the attach: %d", before)
	a := attachOnPty(t, ws, name, 24, 80)
	for i := 0; i < 100; i++ {
		if winches() > before {
			// Ctrl-P Ctrl-Q in reply to the repaint, as a user would: the
			// client must already have its terminal raw, or its own line
			// discipline eats Ctrl-Q and holds Ctrl-P (CI saw "^P").
			a.master.Write([]byte{0x10, 0x11})
			a.wait(t, 10*time.Second)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	a.master.Write([]byte{0x10, 0x11})
	a.wait(t, 10*time.Second)
	t.Fatalf("attaching at the kept terminal's own size sent no SIGWINCH: a program that drew while detached is not told to repaint\n%s", a.scr.String())
}
