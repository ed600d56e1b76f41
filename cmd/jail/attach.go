package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/internal/blockio"
	"github.com/jail-sandbox/jail/jobstop"
	"github.com/jail-sandbox/jail/ptyrelay"
	"github.com/jail-sandbox/jail/sandbox"
)

// AttachOptions is jail attach.
type AttachOptions struct {
	IO   *iostreams
	Name string
}

// detachKeys end jail attach and leave the command running: Ctrl-P Ctrl-Q,
// as docker attach.
const (
	detachKey1  = 0x10 // Ctrl-P
	detachKey2  = 0x11 // Ctrl-Q
	detachNames = "Ctrl-P Ctrl-Q"
)

func newAttachCmd(f *factory, runF func(*AttachOptions) error) *command {
	opts := &AttachOptions{IO: f.IO}
	c := newCommand(f, "attach", "jail attach NAME",
		"attach to the terminal of a background sandbox (jail run -d -t)")
	c.long = "Your terminal shows the command's terminal and your keys go to it. " + detachNames + " detaches and leaves\n" +
		"the command running (its output goes to jail logs meanwhile). One terminal at a time: attaching from\n" +
		"another takes over, and the first is detached. jail attach exits with the command's exit status when it ends."
	c.args = c.oneSandbox
	c.run = func(args []string) error {
		opts.Name = args[0]
		if runF != nil {
			return runF(opts)
		}
		return runAttach(opts)
	}
	return c
}

func runAttach(opts *AttachOptions) error {
	sb, err := jail.Open(opts.Name)
	if err != nil {
		return err
	}
	info, err := sb.Inspect()
	if err != nil {
		return err
	}
	if !info.Tty {
		return fmt.Errorf("%s keeps no terminal: start it with jail run -d -t --name %s -- COMMAND (jail exec -it %s -- COMMAND runs another command on a terminal)", opts.Name, opts.Name, opts.Name)
	}
	// Waiting out an O_NONBLOCK another process sets on the shared
	// description meanwhile, as jail's own relay does (blockio).
	stdout := blockio.NewWriter(os.Stdout)
	var out io.Writer = stdout
	if term.IsTerminal(1) {
		// What the command prints reaches the user's terminal: the same
		// filter as jail's own relay and jail exec -t.
		w, err := sandbox.TerminalFilter(allowTerminal(info.Policy), out)
		if err != nil {
			return err
		}
		out = w
	}
	restore, take := func() {}, func() {}
	if term.IsTerminal(0) {
		// Keys go to the sandbox's pty as typed: its line discipline,
		// not ours, makes Ctrl-C a SIGINT for its foreground job.
		//
		// Raw before the attach, not after: the attach itself makes the
		// command repaint (SIGWINCH), and keys typed in reply to what it
		// draws must not meet our cooked line discipline. There Ctrl-Q is
		// eaten as flow control and Ctrl-P echoed and held for a line that
		// never comes, so the detach keys never arrived (CI saw "^P" and a
		// client that would not detach).
		if st, err := term.MakeRaw(0); err == nil {
			restore = func() { _ = term.Restore(0, st) }
			take = func() { _, _ = term.MakeRaw(0) }
		}
	} else if term.IsTerminal(1) {
		restore = noOutputProcessing(1)
		take = func() { noOutputProcessing(1) }
	}
	defer restore()
	t, err := sb.Attach()
	if err != nil {
		restore()
		return err
	}
	resize := func() {
		if term.IsTerminal(1) {
			if w, h, err := term.GetSize(1); err == nil {
				_ = t.Resize(uint16(h), uint16(w))
			}
		}
	}
	resize()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGWINCH)
	defer signal.Stop(sigs)
	go func() {
		for range sigs {
			resize()
		}
	}()
	// jail's urgent notices (a mask the host took away): on the user's
	// screen at once, as one saved-and-restored line at the bottom (the
	// screen is the command's, as in jail's own relay), from CopyTo's
	// goroutine so that it lands between two of the filter's writes, never
	// inside a sequence of the command's; and said again as plain lines
	// once the relay ends.
	var said []string
	t.OnNotice(func(line string) {
		said = append(said, line)
		if term.IsTerminal(1) {
			cols, _, err := term.GetSize(1)
			if err != nil {
				cols = 80
			}
			// Past the filter (the line is jail's), through the blockio
			// writer: not lost to a terminal made non-blocking.
			_, _ = stdout.WriteString(ptyrelay.UrgentLine(line, cols))
			return
		}
		fmt.Fprintf(opts.IO.ErrOut, "%s\r\n", line)
	})
	// The command stopped (Ctrl-Z on a cooked terminal, or its own
	// suspend key): the background sandbox has no shell to resume it, so
	// jail attach stops with it as a job of the user's shell, the terminal
	// given back as it was; fg takes it again and the command goes on,
	// redrawn. Where no shell could resume jail attach either, the command
	// goes on at once.
	t.OnSuspend(func() bool {
		if !jobstop.Resumable() {
			return false
		}
		stopAsJob(restore, take, resize)
		return true
	})
	// Reads wait out an O_NONBLOCK another process of the terminal sets
	// meanwhile (blockio), as jail's own relay's do.
	go copyKeys(t, blockio.NewReader(os.Stdin))
	err = t.CopyTo(out)
	restore()
	if len(said) > 0 {
		fmt.Fprint(opts.IO.ErrOut, "\r\n")
		for _, line := range said {
			fmt.Fprintln(opts.IO.ErrOut, line)
		}
	}
	switch {
	case errors.Is(err, jail.ErrDetached):
		fmt.Fprintf(opts.IO.ErrOut, "\r\njail: detached from %s; it runs on (jail attach %s to come back, jail logs %s for its output)\n", opts.Name, opts.Name, opts.Name)
		return nil
	case errors.Is(err, jail.ErrTakenOver):
		fmt.Fprintf(opts.IO.ErrOut, "\r\njail: detached from %s: another jail attach took over its terminal\n", opts.Name)
		return nil
	case errors.Is(err, jail.ErrGone):
		return fmt.Errorf("%s has ended", opts.Name)
	}
	return execErr(opts.IO, err)
}

// copyKeys sends what is typed to the terminal until the detach keys (or
// the end of input, which detaches too when it is a terminal's).
func copyKeys(t *jail.Terminal, in io.Reader) {
	buf := make([]byte, 4096)
	held := false // Ctrl-P came last: the next key decides
	for {
		n, err := in.Read(buf)
		out := make([]byte, 0, n+1)
		for _, b := range buf[:max(n, 0)] {
			switch {
			case held && b == detachKey2:
				_, _ = t.Write(out)
				_ = t.Detach()
				return
			case held:
				out = append(out, detachKey1)
				held = false
				if b == detachKey1 {
					held = true
					continue
				}
			case b == detachKey1:
				held = true
				continue
			}
			out = append(out, b)
		}
		if len(out) > 0 {
			if _, werr := t.Write(out); werr != nil {
				return
			}
		}
		if err != nil {
			if held {
				_, _ = t.Write([]byte{detachKey1})
			}
			if term.IsTerminal(0) {
				_ = t.Detach()
			}
			return
		}
	}
}
