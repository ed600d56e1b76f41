package main

import "github.com/jail-sandbox/jail/sandbox"

// DoctorOptions is jail doctor.
type DoctorOptions struct{ IO *iostreams }

func newDoctorCmd(f *factory, runF func(*DoctorOptions) error) *command {
	opts := &DoctorOptions{IO: f.IO}
	c := newCommand(f, "doctor", "jail doctor", "say what this machine offers and how to fix what is missing")
	c.run = func([]string) error {
		if runF != nil {
			return runF(opts)
		}
		return exitStatus(sandbox.Doctor(opts.IO.Out))
	}
	return c
}
