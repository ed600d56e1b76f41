//go:build linux

package tests

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPty returns a host-side pty pair standing in for the user's terminal.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.IoctlSetWinsize(int(m.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80})
	return m, s
}

// watch copies what the terminal shows into a screen, until it closes.
func watch(master *os.File) *screen {
	scr := &screen{}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			if n > 0 {
				scr.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	return scr
}

// screen collects what the terminal shows.
type screen struct{ syncBuffer }

func (s *screen) waitFor(t *testing.T, want string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		ok := strings.Contains(s.String(), want)
		if ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("terminal never showed %q; it shows:\n%s", want, s.String())
}

// An interactive shell works as outside: a prompt, job control, Ctrl-C to
// the foreground job, resizes; and its terminal is the sandbox's own pty.
func TestInteractivePty(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	master, slave := openPty(t)
	defer master.Close()
	cmd := exec.Command(jail(t), "--setenv", "PS1=jail-prompt$ ", "--", "bash", "--norc", "--noprofile", "-i")
	cmd.Dir = workspace(t)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.Env = append(os.Environ(), "PS1=jail-prompt$ ", "TERM=dumb")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	scr := watch(master)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer cmd.Process.Kill()

	scr.waitFor(t, "jail-prompt$ ", 10*time.Second)
	master.Write([]byte("echo $((6*7)); tty; set -o | grep monitor\n"))
	scr.waitFor(t, "42", 5*time.Second)
	scr.waitFor(t, "/dev/pts/0", 5*time.Second)
	scr.waitFor(t, "monitor        \ton", 5*time.Second)
	// Ctrl-C interrupts the foreground job, not the shell.
	master.Write([]byte("sleep 100\n"))
	time.Sleep(300 * time.Millisecond)
	master.Write([]byte{3})
	time.Sleep(100 * time.Millisecond)
	master.Write([]byte("echo after-sleep-$?\n"))
	scr.waitFor(t, "after-sleep-130", 5*time.Second)
	// A resize of the outer terminal reaches the sandbox's pty.
	unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 33, Col: 101})
	cmd.Process.Signal(syscall.SIGWINCH)
	time.Sleep(200 * time.Millisecond)
	master.Write([]byte("stty size\n"))
	scr.waitFor(t, "33 101", 5*time.Second)
	master.Write([]byte("exit 5\n"))
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 5 {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("jail did not exit")
	}
}

// TIOCSTI must not inject input into the host terminal, whether the agent
// has its own pty (stdin a terminal) or only inherits the host tty as stdout.
func TestNoTerminalInjection(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		if inCI() {
			t.Fatal("perl is needed for the TIOCSTI probe")
		}
		t.Skip("no perl")
	}
	master, slave := openPty(t)
	defer master.Close()
	// stdin is a pipe, stdout and stderr the host terminal: no sandbox pty.
	probe := `for my $fd (0,1,2) { open(my $h, ">&=", $fd) or next; my $c = "X"; my $r = ioctl($h, 0x5412, $c); print STDERR "fd$fd:" . ($r ? "INJECTED" : "refused") . "\n"; }`
	cmd := exec.Command(jail(t), "--", "perl", "-e", probe)
	cmd.Dir = workspace(t)
	cmd.Stdin = strings.NewReader("")
	cmd.Stdout, cmd.Stderr = slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 1}
	scr := watch(master)
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v", err)
	}
	scr.waitFor(t, "fd2:", 5*time.Second)
	out := scr.String()
	if strings.Contains(out, "INJECTED") {
		t.Fatalf("TIOCSTI reached the host terminal:\n%s", out)
	}
	// The injected byte would be readable on the host side of the tty.
	pfd := []unix.PollFd{{Fd: int32(slave.Fd()), Events: unix.POLLIN}}
	if n, _ := unix.Poll(pfd, 200); n > 0 {
		b := make([]byte, 16)
		if n, _ := unix.Read(int(slave.Fd()), b); n > 0 && strings.Contains(string(b[:n]), "X") {
			t.Fatalf("host terminal received injected input %q", b[:n])
		}
	}
}
