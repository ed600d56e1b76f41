package main

import (
	"context"
	"strings"

	"github.com/jail-sandbox/jail/audit"
)

// AuditOptions is jail audit.
type AuditOptions struct {
	IO *iostreams
	audit.CLIOptions
}

func newAuditCmd(f *factory, runF func(*AuditOptions) error) *command {
	opts := &AuditOptions{IO: f.IO}
	c := newCommand(f, "audit", "jail audit [--follow] [--json] [--type TYPE]... [--verify] FILE",
		"read an audit trail: a summary, --follow, --json, --verify")
	c.long = `With no flag: a summary (command, duration, exit, counts, commands, network
destinations, denials, limits, chain verification). FILE may be - for
standard input (not with --follow). Types: ` + strings.Join(audit.Types, " ") + `.
Exit status: 0 fine, 1 broken or unreadable trail, 125 usage error.`
	fs := c.flags
	fs.BoolVar(&opts.Follow, "follow", false, "print events as they are written, until an exit event or ^C")
	fs.BoolVar(&opts.JSON, "json", false, "print raw JSON lines instead of readable ones")
	fs.StringSliceVar(&opts.Types, "type", nil, "only events of type `TYPE` (repeatable, or comma-separated)")
	fs.BoolVar(&opts.Verify, "verify", false, "check the hash chain only; exit 0 if intact, 1 if broken")
	// Flags may follow FILE (jail audit trail.jsonl --verify).
	fs.SetInterspersed(true)
	c.args = func(args []string) error {
		if len(args) > 1 {
			return c.usageErr("one FILE at a time, got %d", len(args))
		}
		if len(args) == 1 {
			opts.File = args[0]
		}
		if err := opts.Check(); err != nil {
			return c.usageErr("%v", err)
		}
		return nil
	}
	c.run = func([]string) error {
		if runF != nil {
			return runF(opts)
		}
		return exitStatus(audit.RunCLI(context.Background(), opts.CLIOptions, opts.IO.Out, opts.IO.ErrOut))
	}
	return c
}
