package main

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/term"

	"github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/sandbox"
	"github.com/jail-sandbox/jail/sessionlog"
)

// LogsOptions is jail logs.
type LogsOptions struct {
	IO     *iostreams
	Follow bool
	Name   string
}

func newLogsCmd(f *factory, runF func(*LogsOptions) error) *command {
	opts := &LogsOptions{IO: f.IO}
	c := newCommand(f, "logs", "jail logs [-f] NAME", "show the output of a background sandbox's command (jail run -d)")
	c.flags.BoolVarP(&opts.Follow, "follow", "f", false, "keep printing new output until the sandbox ends")
	c.args = c.oneSandbox
	c.run = func(args []string) error {
		opts.Name = args[0]
		if runF != nil {
			return runF(opts)
		}
		return runLogs(opts)
	}
	return c
}

func runLogs(opts *LogsOptions) error {
	e, err := sandbox.Find(opts.Name)
	out := opts.IO.Out
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		// The log is what the sandbox printed: on the user's terminal it
		// passes the same filter as jail's relay (no clipboard writes, no
		// title or hyperlink tricks unless its allow-terminal says so).
		var allow []string
		if err == nil {
			if sb, oerr := jail.Open(opts.Name); oerr == nil {
				if info, ierr := sb.Inspect(); ierr == nil {
					allow = allowTerminal(info.Policy)
				}
			}
		}
		w, ferr := sandbox.TerminalFilter(allow, out)
		if ferr != nil {
			return ferr
		}
		out = w
	}
	if err != nil {
		// Ended: its log stays (until a sandbox of that name starts again).
		dir, derr := sandbox.RunDir()
		if sandbox.ValidName(opts.Name) != nil || derr != nil {
			return err
		}
		cerr := sessionlog.Copy(out, filepath.Join(dir, opts.Name+".log"))
		if errors.Is(cerr, os.ErrNotExist) {
			return err
		}
		return cerr
	}
	if e.Log == "" {
		return errors.New(opts.Name + " has no log: only a sandbox started with jail run -d has one")
	}
	if !opts.Follow {
		return sessionlog.Copy(out, e.Log)
	}
	return sessionlog.Follow(out, e.Log, func() bool { return sandbox.Alive(e.Pid, e.ID) })
}
