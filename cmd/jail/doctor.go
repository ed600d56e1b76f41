package main

import "github.com/jail-sandbox/jail/sandbox"

// DoctorOptions is jail doctor.
type DoctorOptions struct {
	IO *iostreams
	// AppArmorProfile prints the AppArmor profile that lets jail make
	// namespaces on Ubuntu 24.04+ instead of the report.
	AppArmorProfile bool
}

func newDoctorCmd(f *factory, runF func(*DoctorOptions) error) *command {
	opts := &DoctorOptions{IO: f.IO}
	c := newCommand(f, "doctor", "jail doctor [--apparmor-profile]", "say what this machine offers and how to fix what is missing")
	c.flags.BoolVar(&opts.AppArmorProfile, "apparmor-profile", false, "print the AppArmor profile that lets jail make namespaces (Ubuntu 24.04+)")
	c.run = func([]string) error {
		if runF != nil {
			return runF(opts)
		}
		if opts.AppArmorProfile {
			return exitStatus(sandbox.AppArmorProfile(opts.IO.Out, opts.IO.ErrOut))
		}
		return exitStatus(sandbox.Doctor(opts.IO.Out))
	}
	return c
}
