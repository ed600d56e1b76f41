//go:build linux

package tests

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/ptytest"
	"golang.org/x/sys/unix"
)

// openPty returns a host-side pty pair standing in for the user's
// terminal, 80x24.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, s := ptytest.Open(t)
	unix.IoctlSetWinsize(int(m.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80})
	return m, s
}

// ttyRun is jail started on a new pty of the test's (the user's terminal):
// its stdin and controlling terminal, and its stdout and stderr too unless
// the run is given buffers for them (stdout a file: no relay).
type ttyRun struct {
	cmd    *exec.Cmd
	scr    *screen
	master *os.File
	so, se syncBuffer
	exited chan error
}

// startOnTty starts jail with args in a new workspace on a new pty, TERM
// dumb; with allOnTty the terminal is its stdout and stderr as well.
func startOnTty(t *testing.T, allOnTty bool, args ...string) *ttyRun {
	t.Helper()
	master, slave := openPty(t)
	r := &ttyRun{master: master, exited: make(chan error, 1)}
	r.cmd = exec.Command(jail(t), args...)
	r.cmd.Dir = workspace(t)
	r.cmd.Env = append(os.Environ(), "TERM=dumb")
	r.cmd.Stdin, r.cmd.Stdout, r.cmd.Stderr = slave, &r.so, &r.se
	if allOnTty {
		r.cmd.Stdout, r.cmd.Stderr = slave, slave
	}
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	r.scr = watch(master)
	go func() { r.exited <- r.cmd.Wait() }()
	return r
}

// wait waits (30 s at most) for jail to exit 0, then for the last bytes
// on the terminal.
func (r *ttyRun) wait(t *testing.T) {
	t.Helper()
	select {
	case err := <-r.exited:
		if err != nil {
			t.Fatalf("jail: %v\nstdout: %s\nstderr: %s\nterminal: %q", err, r.so.String(), r.se.String(), r.scr.String())
		}
	case <-time.After(30 * time.Second):
		r.cmd.Process.Kill()
		<-r.exited
		t.Fatalf("no exit\nstdout: %s\nstderr: %s\nterminal: %q", r.so.String(), r.se.String(), r.scr.String())
	}
	time.Sleep(100 * time.Millisecond)
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
	if !s.waitUntil(want, d) {
		t.Fatalf("terminal never showed %q; it shows:\n%s", want, s.String())
	}
}

// waitUntil polls the screen for want, up to d.
func (s *screen) waitUntil(want string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if strings.Contains(s.String(), want) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
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
	// Ctrl-C interrupts the foreground job, not the shell. The ^C is sent
	// once the sleep is seen running (from the host), the next command once
	// it is gone (a ^C flushes input typed before it is handled).
	m := marker()
	master.Write([]byte("sleep " + m + "\n"))
	limitsWaitFor(t, nil, 10*time.Second, "the foreground sleep", func() bool { return len(procsWith("sleep\x00"+m)) > 0 })
	master.Write([]byte{3})
	waitNoProcs(t, "sleep\x00"+m, 5*time.Second)
	master.Write([]byte("echo after-sleep-$?\n"))
	scr.waitFor(t, "after-sleep-130", 5*time.Second)
	// A resize of the outer terminal reaches the sandbox's pty. jail
	// applies it when its SIGWINCH arrives; ask until the shell sees it.
	unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 33, Col: 101})
	cmd.Process.Signal(syscall.SIGWINCH)
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; !strings.Contains(scr.String(), fmt.Sprintf("s%d 33 101", i)); {
		if time.Now().After(deadline) {
			t.Fatalf("the resize never reached the sandbox's pty:\n%s", scr.String())
		}
		i++
		// The answer "sN ROWS COLS" differs from the echoed command line.
		master.Write([]byte(fmt.Sprintf("echo \"s%d\" \"$(stty size)\"\n", i)))
		scr.waitFor(t, fmt.Sprintf("s%d ", i), 5*time.Second)
	}
	master.Write([]byte("exit 5\n"))
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 5 {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("jail did not exit; the terminal shows:\n%s", scr.String())
	}
}

// TIOCSTI must not inject input into the host terminal when the agent only
// inherits it as stdout and stderr (stdin a pipe: no sandbox pty). Two
// layers stop it and each is checked on its own: the agent has no
// controlling terminal and cannot take one (the kernel then wants
// CAP_SYS_ADMIN for TIOCSTI), and seccomp refuses TIOCSTI whatever the fd.
// Seccomp answers before the fd is even looked up, so TIOCSTI on a closed fd
// is EPERM with the filter and EBADF without it: that probe fails if the
// seccomp rule is lost although the first layer still holds (the control,
// the probe run outside the sandbox, shows EBADF).
func TestNoTerminalInjection(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		if inCI() {
			t.Fatal("perl is needed for the TIOCSTI probe")
		}
		t.Skip("no perl")
	}
	// TIOCSTI 0x5412 on fds 0-2 and on closed fd 99; TIOCSCTTY 0x540E on
	// fd 1 (steal the host tty as controlling terminal); open /dev/tty.
	probe := `sub e { my ($r) = @_; return $r ? "ok" : "errno" . ($! + 0) }
for my $fd (0, 1, 2, 99) { my $h; if ($fd == 99) { open($h, "<", "/dev/null"); close($h); } else { open($h, ">&=", $fd) or next; }
  my $c = "X"; $! = 0; my $r = syscall(16, $fd, 0x5412, $c); print STDERR "tiocsti-fd$fd=" . ($r == -1 ? "errno" . ($! + 0) : "INJECTED") . "\n"; }
$! = 0; my $r = syscall(16, 1, 0x540E, 1); print STDERR "tiocsctty=" . ($r == -1 ? "errno" . ($! + 0) : "ok") . "\n";
print STDERR "devtty=" . e(open(my $t, "<", "/dev/tty")) . "\n";
print STDERR "probe-done\n";`
	runOnHostTTY := func(flags ...string) string {
		master, slave := openPty(t)
		defer master.Close()
		defer slave.Close()
		cmd := exec.Command(jail(t), append(flags, "--", "perl", "-e", probe)...)
		cmd.Dir = workspace(t)
		cmd.Stdin = strings.NewReader("")
		cmd.Stdout, cmd.Stderr = slave, slave
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 1}
		scr := watch(master)
		if err := cmd.Run(); err != nil {
			t.Fatalf("run: %v\n%s", err, scr.String())
		}
		scr.waitFor(t, "probe-done", 5*time.Second)
		// An injected byte would be readable on the host side of the tty.
		pfd := []unix.PollFd{{Fd: int32(slave.Fd()), Events: unix.POLLIN}}
		if n, _ := unix.Poll(pfd, 200); n > 0 {
			b := make([]byte, 16)
			if n, _ := unix.Read(int(slave.Fd()), b); n > 0 && strings.Contains(string(b[:n]), "X") {
				t.Errorf("host terminal received injected input %q (flags %v)", b[:n], flags)
			}
		}
		return scr.String()
	}
	out := runOnHostTTY()
	for _, want := range []string{"tiocsti-fd1=errno1", "tiocsti-fd2=errno1", "tiocsti-fd99=errno1", "tiocsctty=errno1", "devtty=errno6"} {
		if !strings.Contains(out, want+"\r") {
			t.Errorf("want %s (EPERM; ENXIO for /dev/tty); the terminal shows:\n%s", want, out)
		}
	}
	if strings.Contains(out, "INJECTED") || strings.Contains(out, "tiocsctty=ok") || strings.Contains(out, "devtty=ok") {
		t.Fatalf("the agent reached the host terminal:\n%s", out)
	}
	// Control: without the filter, the closed-fd probe reaches the kernel
	// (EBADF). Run outside the sandbox: --seccomp-replace keeps the
	// terminal rules too (seccomp's ttyPrefix), so no jail run lacks them.
	// The first layer shows above on its own: tiocsctty and devtty.
	ctl := `my $c = "X"; $! = 0; my $r = syscall(16, 99, 0x5412, $c); print "tiocsti-fd99=" . ($r == -1 ? "errno" . ($! + 0) : "ok") . "\n";`
	if c, err := exec.Command("perl", "-e", ctl).Output(); err != nil || !strings.Contains(string(c), "tiocsti-fd99=errno9\n") {
		t.Errorf("control: outside the sandbox, TIOCSTI on a closed fd is not EBADF (%v); the probe cannot see the seccomp rule:\n%s", err, c)
	}
	// Under --seccomp-replace with a policy that allows every ioctl the
	// answers are the same (review14d: the replacing policy decided
	// TIOCSTI; seen failing on main's binary: tiocsti-fd99=errno9).
	pol := seccompWriteFile(t, "off.json", seccompOffPolicy)
	c := runOnHostTTY("--seccomp", pol, "--seccomp-replace")
	for _, want := range []string{"tiocsti-fd1=errno1", "tiocsti-fd99=errno1", "tiocsctty=errno1"} {
		if !strings.Contains(c, want+"\r") {
			t.Errorf("--seccomp-replace: want %s; the terminal shows:\n%s", want, c)
		}
	}
	if strings.Contains(c, "INJECTED") {
		t.Fatalf("--seccomp-replace: the agent reached the host terminal:\n%s", c)
	}
}
