//go:build linux

package tests

// Adversarial (review14a): a terminal on stdin, not on stdout. When stdout is not a
// terminal (`jail -- agent > out.txt`, `| tee log`) jail relays no pty,
// and init's fd 0 was the user's terminal itself, opened read-write: the
// agent wrote escape sequences straight to it, around termfilter (OSC 52
// sets the clipboard, a title, answer-back queries).

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStdinTerminalReadOnly(t *testing.T) {
	master, slave := openPty(t)
	defer master.Close()
	script := `test -t 0 && echo STDIN-IS-TTY
printf '\033]52;c;cm0gLXJmIH4K\007\033]0;PWNED-TITLE\007' >&0 2>/dev/null || echo WRITE-REFUSED
(exec 3>/proc/self/fd/0) 2>/dev/null && echo REOPENED-FOR-WRITING
read line; echo "READ:$line"`
	cmd := exec.Command(jail(t), "--", "/bin/sh", "-c", script)
	cmd.Dir = workspace(t)
	cmd.Env = append(os.Environ(), "TERM=dumb")
	var so, se syncBuffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &so, &se
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	scr := watch(master)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Typed once the agent waits for it (typed earlier, the terminal
	// would echo it before the agent's attempt, which changes nothing).
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(so.String()+se.String(), "STDIN-IS-TTY") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	master.Write([]byte("typed-line\n"))
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("jail: %v\nstdout: %s\nstderr: %s", err, so.String(), se.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("no exit\nstdout: %s\nstderr: %s", so.String(), se.String())
	}
	time.Sleep(100 * time.Millisecond) // the last bytes on the terminal
	shown := scr.String()
	out := so.String()
	if strings.Contains(shown, "PWNED-TITLE") || strings.Contains(shown, "\x1b]52") {
		t.Errorf("the agent wrote to the user's terminal through stdin, around the filter:\n%q", shown)
	}
	if strings.Contains(out, "REOPENED-FOR-WRITING") {
		t.Errorf("the agent reopened the user's terminal for writing:\n%s", out)
	}
	// Still a terminal, still read: only the writing is gone.
	for _, w := range []string{"STDIN-IS-TTY", "WRITE-REFUSED", "READ:typed-line"} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q:\n%s\nstderr: %s\nterminal: %q", w, out, se.String(), shown)
		}
	}
}
