package main

import "fmt"

// VersionOptions is jail version.
type VersionOptions struct{ IO *iostreams }

func newVersionCmd(f *factory, runF func(*VersionOptions) error) *command {
	opts := &VersionOptions{IO: f.IO}
	c := newCommand(f, "version", "jail version", "print the version")
	c.run = func([]string) error {
		if runF != nil {
			return runF(opts)
		}
		fmt.Fprintf(opts.IO.Out, "jail %s\n", f.Version)
		return nil
	}
	return c
}
