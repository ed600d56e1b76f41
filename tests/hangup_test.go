//go:build linux

package tests

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The user's terminal goes away (its window closed, the tmux server
// killed, the ssh link dropped) while an interactive agent runs: the run
// ends, as a shell's job does, and nothing of the sandbox is left running
// on the host. With a controlling terminal the kernel says so (SIGHUP to
// the foreground group); without one (su -c, setsid, a runner that starts
// jail in a session of its own on a terminal) only the terminal's reads
// say it: before, the sandbox and its agent ran on with no terminal, for
// ever (seen under su -c in tmux: a codex session alive 10 minutes after
// tmux kill-server).
func TestTerminalHangupEndsRun(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ctty    bool
		extra   []string
		noStdin bool // stdin not a terminal: jail relays the output only
	}{
		{"controlling terminal", true, nil, false},
		{"no controlling terminal", false, nil, false},
		// The agent ignores SIGHUP: the kill grace ends it.
		{"agent ignores SIGHUP", false, []string{"--kill-grace", "1s"}, false},
		// Only the output's writes fail then: the agent writing on,
		// into the sandbox's pty, would block there for ever.
		{"output only", false, nil, true},
		// And an agent that writes nothing more: no write fails, the
		// terminal's own hangup says it (a poll of the terminal).
		{"output only, agent quiet", false, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			master, slave := openPty(t)
			script := "echo ready-$((6*7)); exec sleep 600"
			if len(tc.extra) > 0 {
				script = "trap '' HUP; echo ready-$((6*7)); while :; do sleep 1; done"
			}
			if tc.noStdin {
				script = "echo ready-$((6*7)); while :; do echo more; sleep 0.1; done"
				if strings.HasSuffix(tc.name, "quiet") {
					script = "echo ready-$((6*7)); exec sleep 600"
				}
			}
			args := append(append([]string{}, tc.extra...), "--", "sh", "-c", script)
			cmd := exec.Command(jail(t), args...)
			cmd.Dir = workspace(t)
			cmd.Env = append(os.Environ(), "TERM=dumb")
			cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
			if tc.noStdin {
				cmd.Stdin = nil // /dev/null
			}
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: tc.ctty, Ctty: 0}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			slave.Close()
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			// The master read here, with no read of Go's left pending
			// when it is closed (a pending read would hold the file open,
			// and the terminal would not hang up).
			fd, err := unix.Dup(int(master.Fd()))
			if err != nil {
				t.Fatal(err)
			}
			master.Close()
			shown := waitShown(t, fd, "ready-42", 20*time.Second)
			// The terminal goes: its master closed, the kernel hangs up
			// every file of its slave side.
			unix.Close(fd)
			select {
			case <-exited:
			case <-time.After(15 * time.Second):
				cmd.Process.Kill()
				<-exited
				t.Fatalf("jail still ran 15 s after its terminal hung up; it showed:\n%s", shown)
			}
			// jail returns only after init (the sandbox's pid 1) is gone,
			// and with it every process of the sandbox's pid namespace.
		})
	}
}

// waitShown reads the terminal's master fd until it shows want (d at
// most) and returns what it showed.
func waitShown(t *testing.T, fd int, want string, d time.Duration) string {
	t.Helper()
	var got []byte
	buf := make([]byte, 4096)
	deadline := time.Now().Add(d)
	for !strings.Contains(string(got), want) {
		if time.Now().After(deadline) {
			t.Fatalf("terminal never showed %q; it shows:\n%s", want, got)
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, _ := unix.Poll(pfd, 100); n <= 0 {
			continue
		}
		n, err := unix.Read(fd, buf)
		if n > 0 {
			got = append(got, buf[:n]...)
		}
		if err != nil && err != unix.EINTR && err != unix.EAGAIN {
			t.Fatalf("read the terminal: %v; it showed:\n%s", err, got)
		}
	}
	return string(got)
}
