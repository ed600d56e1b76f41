//go:build linux

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// hostSaves renames a new .env over ws's, as an editor's atomic save does.
func hostSaves(t *testing.T, ws string) string {
	t.Helper()
	env := filepath.Join(ws, ".env")
	fsWrite(t, ws, ".env.tmp", "SECRET=NEW\n", 0o644)
	if err := os.Rename(filepath.Join(ws, ".env.tmp"), env); err != nil {
		t.Fatal(err)
	}
	return env
}

// A mask the host took away is a security event: --quiet (which hides the
// routine notices) does not hide it. On main's binary nothing was said on
// stderr with --quiet (the trail alone had it).
func TestUnmaskedShownWithQuiet(t *testing.T) {
	ws := workspace(t)
	fsWrite(t, ws, ".env", "SECRET=old\n", 0o644)
	done := startUntilReady(t, ws, waitForGo+"; exit 0", "--quiet")
	env := hostSaves(t, ws)
	r := sayGo(t, ws, done)
	mustCode(t, r, 0)
	if !strings.Contains(r.stderr, env+" was renamed over on the host") {
		t.Errorf("--quiet hid that the host took the mask off %s; stderr:\n%s", env, r.stderr)
	}
}

// On a relayed terminal (the agent's screen: every other notice waits for
// its exit), the fall is put on the screen at once, while the agent still
// runs, as one saved-and-restored line at the bottom with a bell; the
// summary at exit says it again. On main's binary the terminal showed
// nothing until the agent exited.
func TestUnmaskedOnRelayedScreenAtOnce(t *testing.T) {
	ws := workspace(t)
	fsWrite(t, ws, ".env", "SECRET=old\n", 0o644)
	script := `printf 'agent-screen\r\n'; ` + waitForGo + `; printf 'agent-done\r\n'`
	cmd := exec.Command(jail(t), "--", "/bin/sh", "-c", script)
	cmd.Dir = ws
	s := startOnPty(t, cmd)
	// Wide enough for the whole line (it is cut to the width): the test's
	// workspace path is long. Set before jail reads the size (it does at
	// the urgent line).
	unix.IoctlSetWinsize(int(s.master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 400})
	scr := s.scr
	scr.waitFor(t, "agent-screen", 30*time.Second)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := os.Stat(filepath.Join(ws, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent never said ready")
		}
		time.Sleep(20 * time.Millisecond)
	}
	env := hostSaves(t, ws)
	said := scr.waitUntil(env+" was renamed over", 5*time.Second)
	before := scr.String()
	fsWrite(t, ws, "go", "", 0o644)
	s.wait(t, 30*time.Second)
	if !said {
		t.Fatalf("the fall of %s's mask was not on the agent's screen while it ran; it showed:\n%q", env, before)
	}
	// The line is saved and restored around, with a bell: the agent's
	// cursor and attributes are as they were.
	i := strings.Index(before, env+" was renamed over")
	if j := strings.LastIndex(before[:i], "\a\x1b7"); j < 0 || !strings.Contains(before[i:], "\x1b8") {
		t.Errorf("the urgent line is not saved and restored around (DECSC ... DECRC): %q", before)
	}
	scr.waitFor(t, "agent-done", 5*time.Second)
	// The summary at exit says it again, after the agent's last words.
	again := func() bool {
		all := scr.String()
		return strings.LastIndex(all, env+" was renamed over") > strings.Index(all, "agent-done")
	}
	for deadline := time.Now().Add(5 * time.Second); !again() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !again() {
		t.Errorf("the summary at exit does not say it again: %q", scr.String())
	}
}

// A background sandbox's terminal (jail run -d -t): the fall is put on the
// attached client's screen at once, as on a relayed one (bell, saved and
// restored line), and said again after the client lets go; a client that
// attaches later is told of a fall it missed. On main's binary the fall
// went to the sandbox's log and trail only: the attached screen showed
// nothing.
func TestUnmaskedOnAttachedScreen(t *testing.T) {
	ws := workspace(t)
	fsWrite(t, ws, ".env", "SECRET=old\n", 0o644)
	m := strings.ReplaceAll(marker(), ".", "")
	name := "u" + m
	startSession(t, ws, name, "-t", "--", "/bin/sh")
	// Wide enough for the whole line (it is cut to the width).
	a := attachOnPty(t, ws, name, 24, 400)
	time.Sleep(300 * time.Millisecond) // the attach's first resize
	a.master.Write([]byte("echo ready-$((6*7))-" + m + "\r"))
	a.scr.waitFor(t, "ready-42-"+m, 10*time.Second)
	env := hostSaves(t, ws)
	said := a.scr.waitUntil(env+" was renamed over", 5*time.Second)
	before := a.scr.String()
	if !said {
		t.Fatalf("the fall of %s's mask was not on the attached screen; it showed:\n%q", env, before)
	}
	i := strings.Index(before, env+" was renamed over")
	if j := strings.LastIndex(before[:i], "\a\x1b7"); j < 0 || !strings.Contains(before[i:], "\x1b8") {
		t.Errorf("the urgent line is not saved and restored around (DECSC ... DECRC): %q", before)
	}
	// Detach: said again on the user's terminal, after the relay ends.
	mark := len(a.scr.String())
	a.master.Write([]byte{0x10, 0x11})
	if err := a.wait(t, 10*time.Second); err != nil {
		t.Fatalf("jail attach after Ctrl-P Ctrl-Q: %v\n%s", err, a.scr.String())
	}
	a.scr.waitFor(t, "detached from "+name, 5*time.Second)
	if after := a.scr.String()[mark:]; !strings.Contains(after, "jail: "+env+" was renamed over") {
		t.Errorf("not said again when the client let go: %q", after)
	}
	// A later client is told of the fall it missed.
	b := attachOnPty(t, ws, name, 24, 400)
	if !b.scr.waitUntil(env+" was renamed over", 5*time.Second) {
		t.Errorf("a later attach was not told that %s's mask fell: %q", env, b.scr.String())
	}
	b.master.Write([]byte("exit 0\r"))
	b.wait(t, 10*time.Second)
}

// jail exec -t: the command's screen is the user's terminal too, so the
// fall is put on it at once, as on a relayed or attached one (bell, saved
// and restored line), and said again when the command ends; a later jail
// exec is told of a fall that came before it started. On main's binary
// the exec client's screen showed nothing (the fall went to the sandbox's
// log and trail only).
func TestUnmaskedOnExecTtyScreen(t *testing.T) {
	ws := workspace(t)
	fsWrite(t, ws, ".env", "SECRET=old\n", 0o644)
	m := strings.ReplaceAll(marker(), ".", "")
	name := "e" + m
	startSession(t, ws, name)
	execOnPty := func() *ptySession {
		cmd := exec.Command(jail(t), "exec", "-i", "-t", name, "--", "/bin/sh")
		cmd.Dir = ws
		cmd.Env = screenEnv()
		s := startOnPty(t, cmd)
		// Wide enough for the whole line (it is cut to the width).
		unix.IoctlSetWinsize(int(s.master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 400})
		return s
	}
	a := execOnPty()
	a.master.Write([]byte("echo ready-$((6*7))-" + m + "\r"))
	a.scr.waitFor(t, "ready-42-"+m, 10*time.Second)
	env := hostSaves(t, ws)
	said := a.scr.waitUntil(env+" was renamed over", 5*time.Second)
	before := a.scr.String()
	if !said {
		t.Fatalf("the fall of %s's mask was not on the jail exec -t screen; it showed:\n%q", env, before)
	}
	i := strings.Index(before, env+" was renamed over")
	if j := strings.LastIndex(before[:i], "\a\x1b7"); j < 0 || !strings.Contains(before[i:], "\x1b8") {
		t.Errorf("the urgent line is not saved and restored around (DECSC ... DECRC): %q", before)
	}
	mark := len(before)
	a.master.Write([]byte("exit 0\r"))
	if err := a.wait(t, 10*time.Second); err != nil {
		t.Fatalf("jail exec -t: %v\n%s", err, a.scr.String())
	}
	// Said again when the command ended (the screen's reader may lag
	// behind the client's exit).
	a.waitSince(t, mark, "jail: "+env+" was renamed over", 5*time.Second)
	// A later jail exec -t is told of the fall it missed.
	b := execOnPty()
	if !b.scr.waitUntil(env+" was renamed over", 5*time.Second) {
		t.Errorf("a later jail exec -t was not told that %s's mask fell: %q", env, b.scr.String())
	}
	b.master.Write([]byte("exit 0\r"))
	b.wait(t, 10*time.Second)
}

// jail exec without -t: the fall is said on its stderr at once, while the
// command still runs (the user may be watching its output). On main's
// binary jail exec said nothing.
func TestUnmaskedToExecStderr(t *testing.T) {
	ws := workspace(t)
	fsWrite(t, ws, ".env", "SECRET=old\n", 0o644)
	name := "f" + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name)
	cmd := exec.Command(jail(t), "exec", name, "--", "/bin/sh", "-c", waitForGo)
	cmd.Dir = ws
	var stderr syncWriter
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := os.Stat(filepath.Join(ws, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never said ready")
		}
		time.Sleep(20 * time.Millisecond)
	}
	env := hostSaves(t, ws)
	said := false
	for deadline := time.Now().Add(5 * time.Second); !said && time.Now().Before(deadline); {
		said = strings.Contains(stderr.String(), "jail: "+env+" was renamed over")
		time.Sleep(20 * time.Millisecond)
	}
	fsWrite(t, ws, "go", "", 0o644)
	if err := cmd.Wait(); err != nil {
		t.Errorf("jail exec: %v\n%s", err, stderr.String())
	}
	if !said {
		t.Fatalf("the fall of %s's mask was not on jail exec's stderr while the command ran: %q", env, stderr.String())
	}
}

// syncWriter is a buffer one goroutine writes while another reads it.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// jail exec without -t on the user's terminal (review16a): the command's
// output is the agent's, and the terminal filter lets a program clear its
// screen or erase lines (progress bars do). The fall's line said on
// stderr while the command ran was erased by the command's next output,
// and, unlike with -t, never said again: on main's binary the last thing
// on the terminal was the agent's clear screen. It is said again when the
// command ends, as with -t.
func TestUnmaskedToExecTerminalSaidAgain(t *testing.T) {
	ws := workspace(t)
	fsWrite(t, ws, ".env", "SECRET=old\n", 0o644)
	name := "g" + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name)
	cmd := exec.Command(jail(t), "exec", name, "--", "/bin/sh", "-c", waitForGo+`; printf '\033[2J\033[Hagent-cleared\n'`)
	cmd.Dir = ws
	cmd.Env = screenEnv()
	s := startOnPty(t, cmd)
	unix.IoctlSetWinsize(int(s.master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 400})
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := os.Stat(filepath.Join(ws, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never said ready")
		}
		time.Sleep(20 * time.Millisecond)
	}
	env := hostSaves(t, ws)
	line := "jail: " + env + " was renamed over"
	if !s.scr.waitUntil(line, 5*time.Second) {
		t.Fatalf("the fall was not said while the command ran: %q", s.scr.String())
	}
	fsWrite(t, ws, "go", "", 0o644)
	if err := s.wait(t, 10*time.Second); err != nil {
		t.Fatalf("jail exec: %v\n%q", err, s.scr.String())
	}
	out := s.settled(300 * time.Millisecond)
	cleared := strings.LastIndex(out, "agent-cleared")
	if cleared < 0 {
		t.Fatalf("the command's clear screen never came: %q", out)
	}
	if strings.LastIndex(out, line) < cleared {
		t.Errorf("the fall's line was not said again after the command's output ended (the agent erased it): %q", out)
	}
}
