package main

import (
	"context"
	"fmt"
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
	c := newCommand(f, "stop", "jail stop NAME ...", "stop running sandboxes: SIGTERM to everything in them, SIGKILL after their grace")
	c.long = "jail stop waits until each sandbox has ended."
	c.args = func(args []string) error {
		if len(args) == 0 {
			return c.usageErr("which sandbox? give its NAME (jail ps lists them)")
		}
		return nil
	}
	c.run = func(args []string) error {
		opts.Names = args
		if runF != nil {
			return runF(opts)
		}
		code := 0
		for _, n := range args {
			if err := stopOne(n); err != nil {
				fmt.Fprintf(opts.IO.ErrOut, "jail: stop %s: %v\n", n, err)
				code = 1
			}
		}
		return exitStatus(code)
	}
	return c
}

func stopOne(name string) error {
	sb, err := jail.Open(name)
	if err != nil {
		return err
	}
	if err := sb.Stop(); err != nil && err != jail.ErrGone {
		return err
	}
	// The supervisor kills what is left after its kill grace; wait a
	// little longer than the longest sensible grace.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err = sb.Wait(ctx)
	return err
}
