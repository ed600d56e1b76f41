package main

import "github.com/jail-sandbox/jail/sandbox"

// GCOptions is jail gc.
type GCOptions struct{ IO *iostreams }

func newGCCmd(f *factory, runF func(*GCOptions) error) *command {
	opts := &GCOptions{IO: f.IO}
	c := newCommand(f, "gc", "jail gc", "remove what crashed supervisors left: stale cgroups, registry records, degraded TMPDIRs")
	c.run = func([]string) error {
		if runF != nil {
			return runF(opts)
		}
		return exitStatus(sandbox.GC(opts.IO.Out))
	}
	return c
}
