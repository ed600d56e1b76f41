//go:build linux

package tests

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// This file: jail attach to the terminal a background sandbox keeps (jail
// run -d -t; issue 13).

// attachOnPty runs jail attach name on a fresh host pty (the user's
// terminal).
func attachOnPty(t *testing.T, ws, name string, rows, cols uint16) *ptySession {
	t.Helper()
	cmd := exec.Command(jail(t), "attach", name)
	cmd.Dir = ws
	cmd.Env = screenEnv()
	s := startOnPty(t, cmd)
	unix.IoctlSetWinsize(int(s.master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
	return s
}

// The kept terminal: keys in, output out, the window size, Ctrl-P Ctrl-Q
// detaches and the command runs on (its output to the log), a second
// attach takes over, the command's exit status is attach's.
func TestSessionAttach(t *testing.T) {
	ws := workspace(t)
	m := strings.ReplaceAll(marker(), ".", "")
	name := "a" + m
	startSession(t, ws, name, "-t", "--", "/bin/bash", "--norc", "--noprofile")
	if !sessInspect(t, name).Tty {
		t.Fatalf("inspect does not say %s keeps a terminal", name)
	}
	a := attachOnPty(t, ws, name, 30, 100)
	time.Sleep(300 * time.Millisecond) // the attach's first resize
	a.master.Write([]byte("stty size; tty; echo m-$((6*7))-" + m + "\r"))
	a.scr.waitFor(t, "m-42-"+m, 10*time.Second)
	if out := a.scr.String(); !strings.Contains(out, "30 100") || !strings.Contains(out, "/dev/pts/") {
		t.Fatalf("the kept terminal's size or name is wrong:\n%s", out)
	}
	// A resize of the user's terminal reaches the command's.
	// (Asked again until it shows: the SIGWINCH may come late under load.)
	unix.IoctlSetWinsize(int(a.master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 120})
	for i := 0; i < 20 && !strings.Contains(a.scr.String(), "40 120"); i++ {
		a.master.Write([]byte("stty size\r"))
		a.scr.waitUntil("40 120", 500*time.Millisecond)
	}
	a.scr.waitFor(t, "40 120", time.Second)
	// Output while detached goes to the log.
	a.master.Write([]byte("(sleep 1; echo while-detached-" + m + ") &\r"))
	time.Sleep(300 * time.Millisecond)
	a.master.Write([]byte{0x10, 0x11})
	if err := a.wait(t, 10*time.Second); err != nil {
		t.Fatalf("jail attach after Ctrl-P Ctrl-Q: %v\n%s", err, a.scr.String())
	}
	a.scr.waitFor(t, "detached from "+name, 5*time.Second) // the last bytes may trail the exit
	time.Sleep(1500 * time.Millisecond)
	if r := sessJail(t, ws, "", "logs", name); !strings.Contains(r.stdout, "while-detached-"+m) || !strings.Contains(r.stdout, "m-42-"+m) {
		t.Fatalf("the log lacks the output made while detached (or while attached):\n%s", r.stdout)
	}
	// One client at a time: the second takes over.
	b := attachOnPty(t, ws, name, 24, 80)
	time.Sleep(500 * time.Millisecond)
	c := attachOnPty(t, ws, name, 24, 80)
	if err := b.wait(t, 10*time.Second); err != nil || !b.scr.waitUntil("took over", 5*time.Second) {
		t.Fatalf("the first attach was not let go when a second came: %v\n%s", err, b.scr.String())
	}
	time.Sleep(300 * time.Millisecond)
	c.master.Write([]byte("exit 7\r"))
	err := c.wait(t, 10*time.Second)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
		t.Fatalf("jail attach did not exit with the command's status 7: %v\n%s", err, c.scr.String())
	}
}

// attach needs a kept terminal; -t needs -d and a command.
func TestSessionAttachRefusals(t *testing.T) {
	ws := workspace(t)
	name := "n" + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name)
	if r := sessJail(t, ws, "", "attach", name); r.code == 0 || !strings.Contains(r.stderr, "keeps no terminal") {
		t.Fatalf("attach to a sandbox without -t: exit %d %s", r.code, r.stderr)
	}
	if r := sessJail(t, ws, "", "run", "-t", "--", "true"); r.code == 0 || !strings.Contains(r.stderr, "add -d") {
		t.Fatalf("run -t without -d: exit %d %s", r.code, r.stderr)
	}
	if r := sessJail(t, ws, "", "run", "-d", "-t", "--name", name+"x"); r.code == 0 || !strings.Contains(r.stderr, "needs a command") {
		t.Fatalf("run -d -t without a command: exit %d %s", r.code, r.stderr)
	}
}

// A process inside the sandbox (same uid as its user, unprivileged) that
// reaches the control socket cannot attach to the kept terminal, where it
// could type into the user's session or read it.
func TestSessionAttachFromInside(t *testing.T) {
	ws := workspace(t)
	name := "j" + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name, "-t", "--", "/bin/sh", "-c", "sleep 60")
	r, want := controlFromInside(t, ws, name, `{"op":"attach"}`)
	if !strings.Contains(r.stdout, want) || strings.Contains(r.stdout, "attached") {
		t.Fatalf("a process inside attached to the kept terminal: %q %s (want a refusal: %s)", r.stdout, r.stderr, want)
	}
}
