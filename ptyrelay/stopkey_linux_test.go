package ptyrelay

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/ptytest"
)

// A pty's master answers for its slave: the settings as the slave has
// them, and whether a Ctrl-Z's SIGTSTP would be discarded: the foreground
// group is its session leader's (a command that leads the pty's session,
// as jail exec -t starts one) and the leader takes the default action;
// not when the leader ignores or catches SIGTSTP, not when the foreground
// is a group of another process of the session (a shell's job), and not
// when the pty has no session at all.
func TestMasterStopPty(t *testing.T) {
	m, s := ptytest.Open(t)
	p := MasterStopPty(m)
	if p.Discarded() {
		t.Fatal("a pty with no session taken for an orphaned group's")
	}
	tio, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Lflag |= unix.ISIG | unix.IEXTEN
	tio.Cc[unix.VSUSP], tio.Cc[unix.VLNEXT] = 0x18, 0x16
	if err := unix.IoctlSetTermios(int(s.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
	if k := p.Keys(); k != (StopKeys{Susp: 0x18, Lnext: 0x16, Signals: true}) {
		t.Fatalf("Keys %+v, want Susp 0x18, Lnext 0x16, Signals", k)
	}
	tio.Lflag &^= unix.ISIG | unix.IEXTEN
	if err := unix.IoctlSetTermios(int(s.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
	if k := p.Keys(); k.Signals || k.Lnext != 0 {
		t.Fatalf("Keys %+v with ISIG and IEXTEN off", k)
	}

	// A session leader with the pty as its terminal, in the foreground:
	// discarded while it takes the default action only.
	for _, c := range []struct {
		script    string
		discarded bool
	}{
		{"exec sleep 30", true},
		{"trap '' TSTP; echo ready; sleep 30", false},
		{"trap 'echo caught' TSTP; echo ready; sleep 30", false},
	} {
		leader := exec.Command("sh", "-c", c.script)
		leader.Stdin, leader.Stdout, leader.Stderr = s, s, s
		leader.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		if err := leader.Start(); err != nil {
			t.Fatal(err)
		}
		// Its pty is its controlling terminal once TIOCSID answers it.
		waitFor(t, func() bool {
			sid, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGSID)
			return err == nil && sid == leader.Process.Pid
		}, "the leader never took the pty")
		if c.discarded {
			waitFor(t, p.Discarded, c.script+": the session leader's group in the foreground not taken for discarding a stop")
		} else {
			// The trap is set before "ready" is written.
			waitFor(t, func() bool { return readAvailable(m) > 0 }, c.script+": never ready")
			if p.Discarded() {
				t.Errorf("%s: taken for discarding a stop", c.script)
			}
		}
		unix.Kill(-leader.Process.Pid, unix.SIGKILL)
		leader.Wait()
		if n := readAvailable(m); n > 0 { // the next case's "ready" is its own
			m.Read(make([]byte, n))
		}
	}

	// A shell's job: sh leads the session, its child sleep runs in a
	// group of its own in the foreground (job control, set -m).
	sh := exec.Command("sh", "-c", "set -m; sleep 30; :")
	sh.Stdin, sh.Stdout, sh.Stderr = s, s, s
	sh.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { unix.Kill(-sh.Process.Pid, unix.SIGKILL); sh.Wait() }()
	fg := func() bool {
		pgrp, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPGRP)
		return err == nil && pgrp > 0 && pgrp != sh.Process.Pid
	}
	waitFor(t, fg, "the shell never put its job in the foreground")
	if p.Discarded() {
		t.Fatal("a shell's job in the foreground taken for an orphaned group")
	}
}

func waitFor(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
	}
}

// readAvailable is how many bytes the pty's master has to read (FIONREAD).
func readAvailable(m *os.File) int {
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCINQ)
	if err != nil {
		return 0
	}
	return n
}
