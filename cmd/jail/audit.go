package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/sandbox"
)

// AuditOptions is jail audit.
type AuditOptions struct {
	IO *iostreams
	audit.CLIOptions
}

func newAuditCmd(f *factory, runF func(*AuditOptions) error) *command {
	opts := &AuditOptions{IO: f.IO}
	c := newCommand(f, "audit", "jail audit [--follow] [--json] [--type TYPE]... [--verify] [FILE|ID|latest]",
		"read an audit trail: a summary, --follow, --json, --verify")
	c.long = `With no flag: a summary (command, duration, exit, counts, commands and exec
attempts, network destinations, denials grouped, notices, limits, chain
verification). Without FILE, or with latest: the newest trail in jail's audit
directory. ID: a sandbox's id as jail ps shows it (a running sandbox's trail
wherever --audit put it, else its trail in the audit directory; 4 or more
leading characters do when unique). FILE may be - for standard input (not
with --follow). Types: ` + strings.Join(audit.Types, " ") + `.
Exit status: 0 fine, 1 broken, unreadable or unknown trail, 125 usage error.`
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
		opts.File = "latest" // resolved when run
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
		if opts.File != "-" {
			p, err := sandbox.ResolveTrail(opts.File)
			if err != nil {
				fmt.Fprintf(opts.IO.ErrOut, "jail audit: %v\n", err)
				return exitStatus(1)
			}
			opts.File = p
		}
		return exitStatus(audit.RunCLI(context.Background(), opts.CLIOptions, opts.IO.Out, opts.IO.ErrOut))
	}
	return c
}
