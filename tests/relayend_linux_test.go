package tests

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/ptytest"
)

// outputOnly is jail running a script with a new host terminal (a pty) as
// its stdout only: the output-only relay. The test reads the master (the
// user's screen) as it likes.
type outputOnly struct {
	cmd           *exec.Cmd
	master, slave *os.File
	stderr        syncBuffer
	exited        chan error
}

func startOutputOnly(t *testing.T, script string) *outputOnly {
	t.Helper()
	r := &outputOnly{exited: make(chan error, 1)}
	r.master, r.slave = ptytest.Open(t)
	r.cmd = exec.Command(jail(t), "--", "/bin/sh", "-c", script)
	r.cmd.Dir = workspace(t)
	r.cmd.Stdin = strings.NewReader("")
	r.cmd.Stdout, r.cmd.Stderr = r.slave, &r.stderr
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.exited <- r.cmd.Wait() }()
	return r
}

// wait is jail's exit error, once it exits; a jail still running after d
// fails the test with what(), the screen's state.
func (r *outputOnly) wait(t *testing.T, d time.Duration, what func() string) error {
	t.Helper()
	select {
	case err := <-r.exited:
		return err
	case <-time.After(d):
		r.cmd.Process.Kill()
		t.Fatalf("jail never ended (its relay stopped?): %s\nstderr: %s", what(), r.stderr.String())
	}
	return nil
}

// linesScript prints n lines of 100 bytes ("line-NNNNN-...").
func linesScript(n int) string {
	return `i=0; while [ $i -lt ` + strconv.Itoa(n) + ` ]; do printf 'line-%05d-%s\n' $i ..........................................................................................; i=$((i+1)); done`
}

// A terminal that reads slowly (a slow link) gets every line of an agent
// that ended long before the terminal took its output: the run's end waits
// while the relay writes. (Before: it waited 2 s, whatever, and the rest
// was dropped without a word: about half of the 300 lines here.)
func TestRelayEndSlowTerminal(t *testing.T) {
	// 30 KiB at ~7 KiB/s: the agent ends with ~12 KiB still to write (what
	// the sandbox's pty and the relay hold), and the host's pty lets the
	// relay write again only once this reader has emptied it (~20 KiB, 3 s).
	const lines = 300
	r := startOutputOnly(t, linesScript(lines))
	var got syncBuffer
	go func() {
		buf := make([]byte, 1024)
		for {
			k, err := r.master.Read(buf)
			got.Write(buf[:k])
			if err != nil {
				return
			}
			time.Sleep(150 * time.Millisecond)
		}
	}()
	count := func() int { return strings.Count(got.String(), "line-") }
	if err := r.wait(t, 60*time.Second, func() string { return strconv.Itoa(count()) + " lines shown" }); err != nil {
		t.Fatalf("jail: %v\n%s", err, r.stderr.String())
	}
	// What jail wrote before it exited is on the host's pty: the reader
	// takes it at its pace (a 2 s quiet ends the wait).
	last, quiet := 0, time.Now()
	for count() < lines && time.Since(quiet) < 2*time.Second {
		if n := len(got.String()); n != last {
			last, quiet = n, time.Now()
		}
		time.Sleep(50 * time.Millisecond)
	}
	if c := count(); c != lines {
		t.Fatalf("the slow terminal got %d of %d lines; jail's stderr:\n%s", c, lines, r.stderr.String())
	}
	if strings.Contains(r.stderr.String(), "not all shown") {
		t.Fatalf("a loss said where none was:\n%s", r.stderr.String())
	}
}

// A terminal that takes nothing (output stopped, a paused pane): jail
// still ends, 5 s after the agent, and says the output the terminal did
// not get. (Before: it ended in silence, the output's tail gone.)
func TestRelayEndStalledTerminal(t *testing.T) {
	// 26 KiB, never read: more than the host's pty holds (~20 KiB), less
	// than it and the sandbox's together (~32 KiB), so that the agent ends
	// while the relay's write waits.
	r := startOutputOnly(t, linesScript(260))
	if err := r.wait(t, 20*time.Second, func() string { return "the terminal read nothing" }); err != nil {
		t.Fatalf("jail: %v\n%s", err, r.stderr.String())
	}
	if !strings.Contains(r.stderr.String(), "the agent's last output was not all shown") {
		t.Fatalf("no word of the output the terminal did not get; stderr:\n%s", r.stderr.String())
	}
}
