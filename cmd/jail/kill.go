package main

import "github.com/jail-sandbox/jail/sandbox"

// KillOptions is jail kill.
type KillOptions struct {
	IO     *iostreams
	Now    bool
	Reason string
	IDs    []string
}

func newKillCmd(f *factory, runF func(*KillOptions) error) *command {
	opts := &KillOptions{IO: f.IO}
	c := newCommand(f, "kill", "jail kill [--now] [--reason TEXT] NAME|ID|PID|all ...", "the kill switch: SIGTERM, SIGKILL after the grace (--now: at once); --reason goes to the trail")
	c.long = "NAMEs, IDs and PIDs are those jail ps lists; all stops every sandbox of this user. jail kill returns once each has ended (at most 30s with --now, 2m without)."
	c.flags.BoolVar(&opts.Now, "now", false, "kill at once instead of SIGTERM, then SIGKILL after the grace")
	c.flags.StringVar(&opts.Reason, "reason", "", "why, in `TEXT`: written to the sandbox's audit trail")
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
		return exitStatus(sandbox.KillWhy(opts.IDs, opts.Now, opts.Reason, opts.IO.ErrOut))
	}
	return c
}
