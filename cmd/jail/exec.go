package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/internal/blockio"
	"github.com/jail-sandbox/jail/jobstop"
	"github.com/jail-sandbox/jail/ptyrelay"
	"github.com/jail-sandbox/jail/sandbox"
)

// ExecOptions is jail exec.
type ExecOptions struct {
	IO          *iostreams
	Interactive bool
	Tty         bool
	Env         []string
	Dir         string
	Name        string
	Command     []string
}

func newExecCmd(f *factory, runF func(*ExecOptions) error) *command {
	opts := &ExecOptions{IO: f.IO}
	c := newCommand(f, "exec", "jail exec [-i] [-t] [--env NAME=VALUE] [-w DIR] NAME -- COMMAND [ARG...]",
		"run a command in a running sandbox (jail run -d)")
	c.long = "The command gets the sandbox's namespaces, file system, Landlock, seccomp, limits, network and\n" +
		"audit trail. Its exit status is jail's. -t gives it a terminal, and on a terminal your keys too\n" +
		"(-i implied). Without either its stdin is empty; -i passes a pipe or file."
	fs := c.flags // interspersed: flags may follow NAME, never the command (after --)
	fs.BoolVarP(&opts.Interactive, "interactive", "i", false, "pass stdin to the command")
	fs.BoolVarP(&opts.Tty, "tty", "t", false, "give the command a terminal (a pty of the sandbox's own)")
	fs.StringArrayVarP(&opts.Env, "env", "e", nil, "add `NAME=VALUE` to the command's environment")
	fs.StringVarP(&opts.Dir, "workdir", "w", "", "start the command in `DIR` (inside the sandbox)")
	c.args = func(args []string) error {
		dash := fs.ArgsLenAtDash()
		switch {
		case len(args) == 0:
			return c.usageErr("which sandbox? give its NAME (jail ps lists them)")
		case dash != 1:
			return c.usageErr("usage: jail exec NAME -- COMMAND")
		case len(args) < 2:
			return c.usageErr("no command after --")
		}
		return nil
	}
	c.run = func(args []string) error {
		opts.Name, opts.Command = args[0], args[1:]
		if runF != nil {
			return runF(opts)
		}
		return runExec(opts)
	}
	return c
}

func runExec(opts *ExecOptions) error {
	if opts.Tty && term.IsTerminal(0) {
		// -t on the user's terminal takes the user's keys too. Without
		// them (docker exec -t's way) a shell inside shows its prompt and
		// waits for ever, deaf to Ctrl-C, Ctrl-D and `exit`, and the
		// lines typed for it stay in the terminal for the user's own
		// shell to run on the host, outside the sandbox, once it is
		// ended. A command that reads nothing loses nothing by it; a pipe
		// stays the caller's unless -i says otherwise.
		opts.Interactive = true
	}
	sb, err := jail.Open(opts.Name)
	if err != nil {
		return err
	}
	// Cancelled by a signal that comes while the start is awaited.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := sb.CommandContext(ctx, opts.Command[0], opts.Command[1:]...)
	cmd.Env, cmd.Dir, cmd.Tty = opts.Env, opts.Dir, opts.Tty
	if opts.Interactive {
		cmd.Stdin = os.Stdin
		if opts.Tty {
			// Copied to the sandbox's pty: reads wait out an O_NONBLOCK
			// another process of the terminal sets meanwhile (blockio).
			// (Without -t the file itself is handed on.)
			cmd.Stdin = blockio.NewReader(os.Stdin)
		}
	}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	var restore func()
	var screen *ptyrelay.Screen
	if opts.Tty && term.IsTerminal(1) {
		// What the command prints reaches the user's terminal: the same
		// filter as jail's own relay (no clipboard writes, no title or
		// hyperlink tricks unless the sandbox's allow-terminal says so).
		var allow []string
		if info, err := sb.Inspect(); err == nil {
			allow = allowTerminal(info.Policy)
		}
		// The filter writes through a Screen, which puts jail's urgent
		// lines between two of its writes, never inside a sequence of
		// the command's.
		screen = ptyrelay.NewScreen(os.Stdout)
		w, err := sandbox.TerminalFilter(allow, screen)
		if err != nil {
			return err
		}
		cmd.Stdout = w
	}
	// jail's urgent notices (a mask the host took away, now or before
	// this command started): the user is looking at this command's output,
	// so they are said here at once -- on its screen as one saved-and-
	// restored line at the bottom with a bell (as jail's relay and jail
	// attach do), else on stderr -- and said again as plain lines once the
	// command ends.
	var said []string
	// jail's timely lines about the command (a server of its the host
	// cannot reach) the same way, but on its screen as a line of its own
	// where that harms nothing (a dev server's log; never a full-screen or
	// self-drawing program's): ptyrelay.Screen.Plain. Both are called from
	// one goroutine.
	say := func(line string, put func(*ptyrelay.Screen, string)) {
		said = append(said, line)
		if screen != nil {
			put(screen, line)
			return
		}
		if restore != nil {
			fmt.Fprintf(opts.IO.ErrOut, "%s\r\n", line) // raw mode
			return
		}
		fmt.Fprintln(opts.IO.ErrOut, line)
	}
	cmd.OnNotice = func(line string) { say(line, (*ptyrelay.Screen).Urgent) }
	cmd.OnTimely = func(line string) { say(line, (*ptyrelay.Screen).Plain) }
	// Caught from before the terminal's modes change: a SIGINT, SIGTERM,
	// SIGHUP or SIGQUIT while the start is awaited (a slow or stuck init)
	// gives the start up and jail exec ends as it would have, 128+N, with
	// the terminal as it was; by default the signal killed jail exec with
	// the terminal changed, and the command started anyway once init
	// served again. Once the command runs, they are its own.
	//
	// Ctrl-Z (SIGTSTP) is caught from there too: during the start it is
	// kept until the command runs, then stops the two together (below).
	// By default it stopped jail exec alone mid-start, and the command,
	// started meanwhile, ran on unseen while the shell had its prompt.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGWINCH, syscall.SIGTSTP)
	defer signal.Stop(sigs)
	// take sets the terminal's modes jail exec runs with (again after a
	// stop); restore gives back those it found.
	take := func() {}
	rawKeys := false // the user's keys, raw, go to the sandbox's pty
	switch {
	case opts.Tty && opts.Interactive && term.IsTerminal(0):
		// Keys go to the sandbox's pty as they are typed (its line
		// discipline, not ours, makes Ctrl-C a SIGINT).
		st, err := term.MakeRaw(0)
		if err == nil {
			restore = func() { _ = term.Restore(0, st) }
			take = func() { _, _ = term.MakeRaw(0) }
			rawKeys = true
			defer restore()
		}
	case opts.Tty && term.IsTerminal(1):
		// No input: only output processing is the sandbox pty's alone
		// (else every newline would become \r\r\n); Ctrl-C still
		// interrupts jail exec, which passes it on.
		restore = noOutputProcessing(1)
		take = func() { noOutputProcessing(1) }
		defer restore()
	}
	// With -i on a terminal the user's keys are bytes for the sandbox's
	// pty, Ctrl-Z too, and the command leads that pty's session: its
	// process group is orphaned, and the kernel discards the SIGTSTP the
	// pty makes of the key where the command takes its default action (a
	// job-control shell inside gets the key for its own jobs; a command
	// that ignores or catches it, as outside). So jail exec takes that key
	// itself and stops the two together as below, as with -t alone. Not
	// for input from a pipe, whose bytes are data. Set before the start,
	// used once the command runs (suspend, below).
	var suspendKey atomic.Pointer[func() bool]
	if rawKeys {
		cmd.OnStopKey = func() bool {
			f := suspendKey.Load()
			return f != nil && (*f)()
		}
	}
	// A command that stops itself (vim, an agent's TUI: the key read in
	// raw mode, then a SIGTSTP to its own group) leads the pty's session
	// too, and the kernel would discard that stop: the supervisor holds
	// it and asks jail exec to stop the two as for the key.
	if opts.Tty {
		cmd.OnSuspend = func() bool {
			f := suspendKey.Load()
			return f != nil && (*f)()
		}
	}
	var early syscall.Signal
	var stopAtStart bool
	starting, caught := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(caught)
		for {
			select {
			case s := <-sigs:
				switch s {
				case syscall.SIGWINCH:
					continue // the size is sent once it runs
				case syscall.SIGTSTP:
					stopAtStart = true
					continue
				}
				early = s.(syscall.Signal)
				cancel()
				return
			case <-starting:
				return
			}
		}
	}()
	err = cmd.Start()
	close(starting)
	<-caught
	if early != 0 {
		if err == nil {
			_ = cmd.Wait() // answered just before: the context's end kills it
		}
		if restore != nil {
			restore()
		}
		fmt.Fprintf(opts.IO.ErrOut, "jail: %s before the command started: not started (nothing of it runs)\n", unix.SignalName(early))
		return exitStatus(128 + int(early))
	}
	if err != nil {
		return execErr(opts.IO, err)
	}
	resize := func() {
		if opts.Tty && term.IsTerminal(1) {
			if w, h, err := term.GetSize(1); err == nil {
				_ = cmd.Resize(uint16(h), uint16(w))
			}
		}
	}
	resize()
	// Ctrl-Z (SIGTSTP) stops the command and jail exec together, as a
	// shell's job: the command's process group first, then the terminal
	// given back as it was, then jail exec, as a job the shell says
	// "Stopped"; fg (or bg) takes the terminal again and continues the
	// command. Not caught, it stopped jail exec alone while the command
	// ran on, and its output waited for fg. Where no shell could resume
	// jail exec, the command goes on and so does jail exec.
	//
	// Called from the signal loop (SIGTSTP) and from the keys' copy
	// (Ctrl-Z, suspendKey): one stop at a time.
	var suspending sync.Mutex
	suspend := func() {
		suspending.Lock()
		defer suspending.Unlock()
		if !jobstop.Resumable() {
			fmt.Fprintln(opts.IO.ErrOut, "jail: SIGTSTP: jail exec is not a job of a shell that could continue it; the command goes on")
			return
		}
		// SIGSTOP, not SIGTSTP: the command leads a session of its own
		// (its pty's, with -t) or a process group whose parent, init, is
		// in another session: an orphaned group, whose SIGTSTP the kernel
		// discards.
		_ = cmd.Signal(syscall.SIGSTOP)
		give := restore
		if give == nil {
			give = func() {}
		}
		stopAsJob(give, take, resize)
		_ = cmd.Signal(syscall.SIGCONT)
	}
	key := func() bool {
		if !jobstop.Resumable() {
			return false // the key goes on to the command, as before
		}
		suspend()
		return true
	}
	suspendKey.Store(&key)
	if stopAtStart {
		suspend() // Ctrl-Z while the start was awaited
	}
	go func() {
		for s := range sigs {
			switch s {
			case syscall.SIGWINCH:
				resize()
				continue
			case syscall.SIGTSTP:
				suspend()
				continue
			}
			_ = cmd.Signal(s) // the command's own signal; it decides
		}
	}()
	err = cmd.Wait()
	if screen != nil {
		screen.Close() // the screen is the user's shell's again
	}
	if restore != nil {
		restore()
	}
	// Said again once the command's output has ended, on a terminal
	// whether -t or not: without -t the command's own stdout and stderr
	// reach the same terminal (filtered, but a clear screen or an erased
	// line passes, as progress bars need), and the agent could erase the
	// line it got at once (review16a).
	again := screen != nil
	if f, ok := opts.IO.ErrOut.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		again = true
	}
	if again && len(said) > 0 {
		for _, line := range said {
			fmt.Fprintln(opts.IO.ErrOut, line)
		}
	}
	return execErr(opts.IO, err)
}

// execErr turns a command's end into jail's exit status (the same rules as
// jail -- COMMAND): its code, 128+N for a signal, 126/127 when it could not
// be run; a failure to start it is said in one line.
func execErr(io *iostreams, err error) error {
	var ee *jail.ExitError
	if errors.As(err, &ee) {
		if ee.Err != "" {
			fmt.Fprintf(io.ErrOut, "jail: %s\n", ee.Err)
		}
		return exitStatus(ee.Code)
	}
	return err
}

// stopAsJob gives the user's terminal back (give), stops the caller as a
// job of the user's shell until it is continued (fg, bg), then takes the
// terminal again (take) and passes its size on (resize). SIGCONT is
// caught for the stop only: each signal caught costs every jail exec's
// start (0.1-0.2 ms here). From the background (bg) take stops the caller
// again (SIGTTOU) until fg, as any program that sets its terminal's modes.
func stopAsJob(give, take, resize func()) {
	give()
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	jobstop.Stop(cont)
	signal.Stop(cont)
	take()
	resize()
}
