package main

import "github.com/jail-sandbox/jail/sandbox"

// PSOptions is jail ps.
type PSOptions struct{ IO *iostreams }

func newPSCmd(f *factory, runF func(*PSOptions) error) *command {
	opts := &PSOptions{IO: f.IO}
	c := newCommand(f, "ps", "jail ps", "list the running sandboxes")
	c.run = func([]string) error {
		if runF != nil {
			return runF(opts)
		}
		return exitStatus(sandbox.PS(opts.IO.Out))
	}
	return c
}
