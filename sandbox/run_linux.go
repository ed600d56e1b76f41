package sandbox

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"jail/ns"
	"jail/policy"
)

// Exit codes of jail itself (the agent's own code passes through).
const (
	ExitTimeout  = 124
	ExitSetup    = 125
	ExitNotExec  = 126
	ExitNotFound = 127
)

// Run runs the policy's command in a new sandbox and returns the exit code
// jail should exit with. Messages for the user go to stderr.
func Run(p *policy.Policy) int {
	// Whatever jail inherited beyond stdio stays with jail.
	ns.CloexecFrom(3)
	r := &runner{pol: p, stderr: os.Stderr, ptyCh: make(chan struct{}, 1)}
	return r.run()
}

type runner struct {
	pol    *policy.Policy
	stderr io.Writer
	plan   *Plan
	sb     *ns.Sandbox

	mu       sync.Mutex
	exit     *ns.Message // the agent's status, from init
	setupErr *ns.Message
	agentPid int
	killedBy string // why the supervisor killed the sandbox
	pty      *os.File
	ptyCh    chan struct{} // signalled once the pty master has arrived
	ptyDone  chan struct{}
}

func (r *runner) errorf(format string, a ...any) {
	fmt.Fprintf(r.stderr, "jail: "+format+"\n", a...)
}

func (r *runner) run() int {
	plan, err := BuildPlan(r.pol, os.Environ())
	if err != nil {
		r.errorf("%v", err)
		return ExitSetup
	}
	r.plan = plan
	if r.pol.DryRun {
		plan.Print(os.Stdout)
		return 0
	}
	spec := &ns.Spec{
		Mounts:   plan.Mounts,
		Hostname: r.pol.Hostname,
		Cwd:      plan.Workspace,
		Argv:     r.pol.Command,
		Env:      plan.Env,
	}
	interactive := term.IsTerminal(0) && term.IsTerminal(1)
	spec.Pty = interactive

	// Signals are caught before the sandbox exists, so none is lost between
	// start and the relay loop.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
	defer signal.Stop(sigs)

	sb, err := ns.Start(ns.Config{
		Spec:     spec,
		Rootful:  os.Getuid() == 0,
		NetHost:  r.pol.Net == policy.NetHost,
		CgroupFD: -1,
		Stdin:    os.Stdin,
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
	})
	if err != nil {
		r.errorf("%v", err)
		return ExitSetup
	}
	r.sb = sb
	msgsDone := make(chan struct{})
	go r.readMessages(msgsDone)

	var restore func()
	defer func() {
		if restore != nil {
			restore()
		}
	}()
	var graceTimer <-chan time.Time
	interrupts := 0
	for {
		select {
		case s := <-sigs:
			sig := s.(syscall.Signal)
			if sig == syscall.SIGWINCH {
				r.resizePty()
				if r.ptyFile() != nil {
					continue
				}
			}
			_ = unix.Kill(sb.Pid, sig)
			if sig == syscall.SIGINT || sig == syscall.SIGTERM || sig == syscall.SIGHUP {
				interrupts++
				if interrupts >= 2 && sig == syscall.SIGINT {
					r.kill("second interrupt")
				} else if graceTimer == nil {
					graceTimer = time.After(r.pol.KillGrace)
				}
			}
		case <-graceTimer:
			r.kill(fmt.Sprintf("still running %v after %s", r.pol.KillGrace, "the signal"))
		case <-r.ptyCh:
			if restore == nil && interactive {
				restore = r.startRelay()
			}
		case <-sb.Done():
			<-msgsDone
			if r.ptyDone != nil {
				select {
				case <-r.ptyDone:
				case <-time.After(2 * time.Second):
				}
			}
			if restore != nil {
				restore()
				restore = nil
			}
			return r.exitCode()
		}
	}
}

func (r *runner) ptyFile() *os.File {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pty
}

// kill ends the sandbox at once: SIGKILL to init, whose death makes the kernel
// kill every process of its pid namespace.
func (r *runner) kill(why string) {
	r.mu.Lock()
	if r.killedBy == "" {
		r.killedBy = why
	}
	r.mu.Unlock()
	_ = unix.Kill(r.sb.Pid, unix.SIGKILL)
}

func (r *runner) readMessages(done chan struct{}) {
	defer close(done)
	for {
		m, files, err := r.sb.Conn.Recv()
		if err != nil {
			return
		}
		switch m.Type {
		case ns.MsgFiles:
			r.handleFiles(m, files)
			if err := r.sb.Conn.Send(ns.Message{Type: ns.MsgGo}); err != nil {
				return
			}
		case ns.MsgStarted:
			r.mu.Lock()
			r.agentPid = m.Pid
			r.mu.Unlock()
		case ns.MsgExit:
			r.mu.Lock()
			mm := m
			r.exit = &mm
			r.mu.Unlock()
		case ns.MsgError:
			r.mu.Lock()
			mm := m
			r.setupErr = &mm
			r.mu.Unlock()
		default:
			for _, f := range files {
				f.Close()
			}
		}
	}
}

func (r *runner) handleFiles(m ns.Message, files []*os.File) {
	for i, f := range files {
		name := ""
		if i < len(m.Names) {
			name = m.Names[i]
		}
		switch name {
		case "pty":
			r.mu.Lock()
			r.pty = f
			r.mu.Unlock()
			r.resizePty()
			r.ptyCh <- struct{}{}
		default:
			f.Close()
		}
	}
}

func (r *runner) resizePty() {
	pty := r.ptyFile()
	if pty == nil {
		return
	}
	if ws, err := unix.IoctlGetWinsize(0, unix.TIOCGWINSZ); err == nil {
		_ = unix.IoctlSetWinsize(int(pty.Fd()), unix.TIOCSWINSZ, ws)
	}
}

// startRelay puts the host terminal in raw mode and copies bytes both ways
// between it and the sandbox's own pty. Ctrl-C, Ctrl-Z and friends are then
// interpreted by the sandbox's line discipline for its foreground job, and
// nothing inside can reach the host terminal's ioctls (TIOCSTI injection).
func (r *runner) startRelay() func() {
	pty := r.ptyFile()
	old, err := term.MakeRaw(0)
	r.mu.Lock()
	r.ptyDone = make(chan struct{})
	done := r.ptyDone
	r.mu.Unlock()
	go func() {
		_, _ = io.Copy(pty, os.Stdin)
	}()
	go func() {
		defer close(done)
		buf := make([]byte, 32<<10)
		for {
			n, err := pty.Read(buf)
			if n > 0 {
				if _, werr := os.Stdout.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil { // EIO once every slave fd is closed
				return
			}
		}
	}()
	return func() {
		if err == nil {
			_ = term.Restore(0, old)
		}
	}
}

func (r *runner) exitCode() int {
	ws, werr := r.sb.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.setupErr != nil {
		r.errorf("%s", r.setupErr.Error)
		if r.setupErr.ExitCode != 0 {
			return r.setupErr.ExitCode
		}
		return ExitSetup
	}
	if r.killedBy != "" {
		r.errorf("killed the sandbox: %s", r.killedBy)
		if r.exit != nil && r.exit.Code != 0 {
			return r.exit.Code
		}
		return 128 + int(syscall.SIGKILL)
	}
	if r.exit != nil {
		return r.exit.Code
	}
	if werr != nil {
		r.errorf("sandbox init: %v", werr)
		return ExitSetup
	}
	// Init died without reporting (killed from outside, or crashed): never 0.
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if c := ws.ExitStatus(); c != 0 {
		return c
	}
	return ExitSetup
}
