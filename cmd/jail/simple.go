package main

import (
	"fmt"

	"github.com/jail-sandbox/jail/sandbox"
)

// The verbs that take little: version, doctor, ps, kill.

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

// KillOptions is jail kill.
type KillOptions struct {
	IO  *iostreams
	Now bool
	IDs []string
}

func newKillCmd(f *factory, runF func(*KillOptions) error) *command {
	opts := &KillOptions{IO: f.IO}
	c := newCommand(f, "kill", "jail kill [--now] ID|PID|all ...", "stop running sandboxes (SIGTERM, then SIGKILL after their grace)")
	c.long = "IDs and PIDs are those jail ps lists; all stops every sandbox of this user."
	c.flags.BoolVar(&opts.Now, "now", false, "kill at once instead of SIGTERM, then SIGKILL after the grace")
	c.args = func(args []string) error {
		if len(args) == 0 {
			return c.usageErr("which sandbox? give an ID, a PID or all (jail ps lists them)")
		}
		return nil
	}
	c.run = func(args []string) error {
		opts.IDs = args
		if runF != nil {
			return runF(opts)
		}
		return exitStatus(sandbox.Kill(opts.IDs, opts.Now, opts.IO.ErrOut))
	}
	return c
}
