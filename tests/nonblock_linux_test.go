package tests

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/ptytest"
)

// A program that starts jail may hand it descriptors in non-blocking mode:
// a terminal a crashed Node program left O_NONBLOCK, a Python asyncio
// parent's own stdout after connect_write_pipe, any event loop's shared
// description. jail runs as it does with blocking
// ones (the agent gets them as they are, as it would outside), and leaves
// the flag on the descriptions as it found them: they are shared with the
// program that started it. (Before: the sandbox's init closed the Go
// runtime's poller, which such a descriptor starts, with the descriptors
// it inherited, and died with "fatal error: runtime: netpoll failed".)
func TestNonBlockingStdio(t *testing.T) {
	const script = `printf 'out\n'; printf 'err\n' >&2; read l; echo "in:$l"; exit 7`
	for _, tc := range []struct {
		name        string
		terminal    bool // stdout a terminal (the output-only relay), else a pipe
		interactive bool // stdin that terminal too (the relay, raw mode)
	}{
		{"pipes", false, false},
		{"terminal", true, false},
		{"interactive", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := nbPipe(t, "from-stdin\n")
			errR, errW := nbPipeEnds(t)
			var outR *os.File
			var outW int
			var scr *screen
			if tc.terminal {
				master, slave := ptytest.Open(t)
				fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(int(slave.Fd())), unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { unix.Close(fd) })
				outW = fd
				scr = watch(master)
				if tc.interactive {
					in = fd
					go func() {
						// Typed once the agent runs (the relay's raw mode
						// would otherwise meet it in the host's cooked one).
						if scr.waitUntil("out", 30*time.Second) {
							master.Write([]byte("from-stdin\r"))
						}
					}()
				}
			} else {
				outR, outW = nbPipeEnds(t)
			}
			var out, errOut bytes.Buffer
			done := make(chan struct{}, 2)
			drain := func(b *bytes.Buffer, f *os.File) {
				if f != nil {
					io.Copy(b, f)
				}
				done <- struct{}{}
			}
			pid, err := syscall.ForkExec(jail(t), []string{"jail", "--", "/bin/sh", "-c", script}, &syscall.ProcAttr{
				Dir:   workspace(t),
				Env:   os.Environ(),
				Files: []uintptr{uintptr(in), uintptr(outW), uintptr(errW)},
				Sys:   &syscall.SysProcAttr{Setsid: true},
			})
			if err != nil {
				t.Fatal(err)
			}
			// Our copies of the write ends stay open until the flags are
			// checked; the readers stop at jail's exit instead.
			p, _ := os.FindProcess(pid)
			go drain(&errOut, errR)
			go drain(&out, outR)
			exited := make(chan *os.ProcessState, 1)
			go func() { st, _ := p.Wait(); exited <- st }()
			var st *os.ProcessState
			select {
			case st = <-exited:
			case <-time.After(60 * time.Second):
				p.Kill()
				t.Fatal("jail did not exit in 60 s")
			}
			for _, fd := range []int{in, outW, errW} {
				fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
				if err != nil {
					t.Fatal(err)
				}
				if fl&unix.O_NONBLOCK == 0 {
					t.Errorf("jail cleared O_NONBLOCK on the description of its fd for our %d: it is the caller's", fd)
				}
			}
			unix.Close(errW)
			if !tc.terminal {
				unix.Close(outW)
			}
			<-done
			<-done
			if tc.terminal {
				if !scr.waitUntil("in:from-stdin", 5*time.Second) {
					t.Errorf("the terminal lacks the agent's output: %q", scr.String())
				}
				out.WriteString(scr.String())
			}
			if st.ExitCode() != 7 || !strings.Contains(out.String(), "out") || !strings.Contains(out.String(), "in:from-stdin") ||
				!strings.Contains(errOut.String(), "err") || strings.Contains(errOut.String(), "fatal error") {
				t.Fatalf("jail with non-blocking stdio: exit %d (want 7)\nstdout: %q\nstderr: %q", st.ExitCode(), out.String(), errOut.String())
			}
		})
	}
}

// nbPipeEnds is a pipe whose write end is non-blocking: the reader as a
// file, the writer as a bare descriptor (an *os.File's Fd would make it
// blocking again).
func nbPipeEnds(t *testing.T) (*os.File, int) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	if err := unix.SetNonblock(p[1], true); err != nil {
		t.Fatal(err)
	}
	r := os.NewFile(uintptr(p[0]), "pipe")
	t.Cleanup(func() { r.Close(); unix.Close(p[1]) })
	return r, p[1]
}

// nbPipe is the read end, non-blocking, of a pipe holding s and closed
// for writing.
func nbPipe(t *testing.T, s string) int {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	unix.Write(p[1], []byte(s))
	unix.Close(p[1])
	t.Cleanup(func() { unix.Close(p[0]) })
	return p[0]
}

// Another process of the terminal sets O_NONBLOCK on it while jail relays
// the agent's output to it, and the terminal stalls for a while (a paused
// pane, a slow link): every line still arrives and the run ends as the
// agent does. (Before: the relay's write failed with EAGAIN, the relay
// stopped, the rest of the output was lost and the agent, its pty full,
// never finished.)
func TestNonBlockingMidRun(t *testing.T) {
	const lines = 3000
	r := startOutputOnly(t, `sleep 1.5; `+linesScript(lines)+`; echo all-done`)
	// jail made its stdout an *os.File at its start, blocking: now another
	// holder of the description (this test) makes it non-blocking.
	time.Sleep(500 * time.Millisecond)
	if err := unix.SetNonblock(int(r.slave.Fd()), true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond) // nothing read: the terminal fills
	scr := watch(r.master)
	count := func() int { return strings.Count(scr.String(), "line-") }
	if err := r.wait(t, 30*time.Second, func() string { return strconv.Itoa(count()) + " lines shown" }); err != nil {
		t.Fatalf("jail: %v\nstderr: %s", err, r.stderr.String())
	}
	if !scr.waitUntil("all-done", 5*time.Second) || count() != lines {
		t.Fatalf("the terminal got %d of %d lines, all-done %v", count(), lines, strings.Contains(scr.String(), "all-done"))
	}
}

// The same on an interactive terminal, for what is typed: the terminal
// made non-blocking by another process while jail relays it, the keys
// still reach the agent. (Before: the relay's read of the terminal failed
// with EAGAIN and it stopped copying input, in silence: the agent never
// got another key.)
func TestNonBlockingMidRunInput(t *testing.T) {
	master, slave := ptytest.Open(t)
	cmd := exec.Command(jail(t), "--", "/bin/sh", "-c", `echo ready; read a; read b; echo "got:$a,$b"`)
	cmd.Dir = workspace(t)
	cmd.Env = append(os.Environ(), "TERM=dumb")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	scr := watch(master)
	if !scr.waitUntil("ready", 30*time.Second) {
		cmd.Process.Kill()
		t.Fatalf("the agent never started: %q", scr.String())
	}
	// jail's stdin was blocking at its start: another holder of the
	// description (this test) makes it non-blocking, then keys come.
	if err := unix.SetNonblock(int(slave.Fd()), true); err != nil {
		t.Fatal(err)
	}
	// The relay's read under way when the flag changed still waits: the
	// first line wakes it, the second finds its next read non-blocking.
	master.Write([]byte("hello\r"))
	time.Sleep(300 * time.Millisecond)
	master.Write([]byte("again\r"))
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("jail: %v\nterminal: %q", err, scr.String())
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the typed line never reached the agent: %q", scr.String())
	}
	if !scr.waitUntil("got:hello,again", 5*time.Second) {
		t.Fatalf("terminal: %q", scr.String())
	}
}
