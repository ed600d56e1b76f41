package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/jail-sandbox/jail"
)

// StopOptions is jail stop.
type StopOptions struct {
	IO    *iostreams
	Names []string
}

func newStopCmd(f *factory, runF func(*StopOptions) error) *command {
	opts := &StopOptions{IO: f.IO}
	c := newCommand(f, "stop", "jail stop NAME|ID|PID|all ...", "stop running sandboxes: SIGTERM to everything in them, SIGKILL after their grace")
	c.long = "NAMEs, IDs and PIDs are those jail ps lists; all stops every sandbox of this user. jail stop waits until each sandbox has ended."
	c.args = func(args []string) error {
		if len(args) == 0 {
			return c.usageErr("which sandbox? give its NAME, ID, PID or all (jail ps lists them)")
		}
		return nil
	}
	c.run = func(args []string) error {
		opts.Names = args
		if runF != nil {
			return runF(opts)
		}
		return exitStatus(stopEach(args, opts.IO.ErrOut))
	}
	return c
}

// stopEach tells every sandbox named (all: every one of this user's) to
// stop, then waits for each: sandboxes that end in parallel are not
// waited for one grace after another.
func stopEach(names []string, errOut io.Writer) int {
	if slices.Contains(names, "all") {
		es, err := jail.Running()
		if err != nil {
			fmt.Fprintf(errOut, "jail: stop all: %v\n", err)
			return 1
		}
		names = names[:0:0]
		for _, e := range es {
			names = append(names, e.ID)
		}
	}
	code := 0
	type stopping struct {
		name string
		sb   *jail.Sandbox
	}
	var told []stopping
	for _, n := range names {
		sb, err := jail.Open(n)
		if err == nil {
			if err = sb.Stop(); err == jail.ErrGone {
				err = nil // ending already: waited for below all the same
			}
		}
		if err != nil {
			fmt.Fprintf(errOut, "jail: stop %s: %v\n", n, err)
			code = 1
			continue
		}
		told = append(told, stopping{n, sb})
	}
	// The supervisor kills what is left after its kill grace; wait a
	// little longer than the longest sensible grace.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, s := range told {
		if _, err := s.sb.Wait(ctx); err != nil {
			fmt.Fprintf(errOut, "jail: stop %s: %v\n", s.name, err)
			code = 1
		}
	}
	return code
}
