//go:build linux

package tests

// Issue 12: the screen stays whole. While jail relays a terminal it writes
// no byte of its own into the agent's screen; what it has to say comes
// after the terminal is restored, as a short summary.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/termfilter"
)

// cursesProg is a real full-screen program (python3's curses): it draws,
// runs a command jail refuses (a notice jail would otherwise print on top
// of the screen), draws again, and waits for "q". Its output is the same
// on every run with the same TERM and size; whether the command ran goes
// to the file "outcome".
const cursesProg = `
import curses, subprocess
def main(scr):
    curses.curs_set(0)
    scr.clear()
    scr.border()
    scr.addstr(1, 2, "jail screen test")
    scr.refresh()
    try:
        subprocess.run(["/bin/true", "jail-refused-marker"])
        outcome = "ran"
    except OSError:
        outcome = "refused"
    with open("outcome", "w") as f:
        f.write(outcome)
    scr.addstr(5, 2, "after the refused exec")
    scr.refresh()
    while scr.getch() != ord("q"):
        pass
curses.wrapper(main)
`

func needPython(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import curses").Run(); err != nil {
		if inCI() {
			t.Fatalf("%s with curses is needed for the full-screen tests: %v", py, err)
		}
		t.Skipf("no %s with curses: %v", py, err)
	}
	return py
}

// ptySession runs cmd as the session leader of a fresh host pty (the
// user's terminal), 80x24, and watches what the terminal receives.
type ptySession struct {
	master *os.File
	scr    *screen
	cmd    *exec.Cmd
	done   chan error
}

func startOnPty(t *testing.T, cmd *exec.Cmd) *ptySession {
	t.Helper()
	master, slave := openPty(t)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	s := &ptySession{master: master, scr: watch(master), cmd: cmd, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		master.Close()
	})
	return s
}

func (s *ptySession) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case err := <-s.done:
		return err
	case <-time.After(d):
		s.cmd.Process.Kill()
		t.Fatalf("did not exit within %v; the terminal shows:\n%q", d, s.scr.String())
	}
	return nil
}

// settled waits until the terminal has received nothing new for quiet.
func (s *ptySession) settled(quiet time.Duration) string {
	last, since := "", time.Now()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		cur := s.scr.String()
		if cur != last {
			last, since = cur, time.Now()
		} else if time.Since(since) >= quiet {
			break
		}
	}
	return last
}

func screenEnv(extra ...string) []string {
	return append(append(os.Environ(), "TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=", "LC_CTYPE="), extra...)
}

func TestNoticeScreenIsTheProgramsOwn(t *testing.T) {
	py := needPython(t)
	ws := workspace(t)
	prog := filepath.Join(ws, "screen.py")
	if err := os.WriteFile(prog, []byte(cursesProg), 0o644); err != nil {
		t.Fatal(err)
	}
	drive := func(cmd *exec.Cmd) string {
		s := startOnPty(t, cmd)
		s.scr.waitFor(t, "after the refused exec", 30*time.Second)
		s.master.Write([]byte("q"))
		if err := s.wait(t, 30*time.Second); err != nil {
			t.Fatalf("%v: %v\nterminal got: %q", cmd.Args, err, s.scr.String())
		}
		return s.settled(300 * time.Millisecond)
	}

	// The program alone, on the same kind of terminal.
	plain := exec.Command(py, prog)
	plain.Dir, plain.Env = ws, screenEnv()
	own := drive(plain)
	var want bytes.Buffer
	f, err := termfilter.New(&want, termfilter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte(own))

	trail := filepath.Join(t.TempDir(), "trail.jsonl")
	j := exec.Command(jail(t), "--audit", trail, "--block-command", "jail-refused-marker", "--", py, prog)
	// A state directory of its own: a record another test's killed
	// supervisor left in the shared one makes this start say so (a notice
	// before the program's first byte), which is not what this test looks at.
	j.Dir, j.Env = ws, screenEnv("XDG_STATE_HOME="+t.TempDir())
	got := drive(j)
	if b, _ := os.ReadFile(filepath.Join(ws, "outcome")); string(b) != "refused" {
		t.Fatalf("the guard rail did not refuse the exec (outcome %q; the test needs a notice)", b)
	}
	if !strings.HasPrefix(got, want.String()) {
		i := 0
		for i < len(got) && i < want.Len() && got[i] == want.String()[i] {
			i++
		}
		t.Fatalf("jail wrote bytes of its own into the program's screen at byte %d:\n got ...%q\nwant ...%q",
			i, got[max(0, i-40):min(len(got), i+120)], want.String()[max(0, i-40):min(want.Len(), i+120)])
	}
	summary := got[want.Len():]
	for _, w := range []string{"jail: refused command /bin/true jail-refused-marker", "jail: audit trail: " + trail} {
		if !strings.Contains(summary, w) {
			t.Errorf("the summary after exit lacks %q:\n%q", w, summary)
		}
	}
	// The terminal was restored: the summary's lines end as cooked lines do.
	if strings.Contains(strings.ReplaceAll(summary, "\r\n", ""), "\n") {
		t.Errorf("bare newline in the summary (raw mode still on?): %q", summary)
	}
	// Each notice is in the trail too.
	tf, err := os.Open(trail)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	found := false
	sc := bufio.NewScanner(tf)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct{ Type, Kind, Text string }
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "notice" && strings.HasPrefix(ev.Kind, "exec") && strings.Contains(ev.Text, "jail-refused-marker") {
			found = true
		}
	}
	if !found {
		t.Error("the trail has no notice event for the refused command")
	}
}
