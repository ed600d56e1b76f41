package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/jail-sandbox/jail/config"
	"github.com/jail-sandbox/jail/internal/termsafe"
)

// TrustOptions is jail trust.
type TrustOptions struct {
	IO     *iostreams
	File   string // "" : the workspace's .jail.toml
	List   bool
	Revoke bool
}

func newTrustCmd(f *factory, runF func(*TrustOptions) error) *command {
	opts := &TrustOptions{IO: f.IO}
	c := newCommand(f, "trust", "jail trust [FILE] | jail trust --list | jail trust --revoke [FILE]",
		"trust a project's .jail.toml, as it is now")
	c.long = `A project's .jail.toml is read only once you trust it: jail records its path and
SHA-256 in your config directory, outside every workspace and hidden from
every sandbox. Any change to the file (yours, or one made by a command in the
sandbox) loses the trust; jail then refuses to start until you run jail trust
again. So does its removal: restore it, or forget it with --revoke FILE. FILE defaults to the .jail.toml a run here reads: at the top level of
the git work tree, else in the current directory. jail trust lists what the
bytes it trusted set, line by line: check it against what you read (a
command still running in a sandbox may have changed the file since).`
	c.flags.BoolVar(&opts.List, "list", false, "list trusted files and whether they changed")
	c.flags.BoolVar(&opts.Revoke, "revoke", false, "forget FILE")
	c.args = func(args []string) error {
		switch {
		case len(args) > 1:
			return c.usageErr("one FILE at a time")
		case opts.List && (len(args) > 0 || opts.Revoke):
			return c.usageErr("--list takes nothing else")
		}
		return nil
	}
	c.run = func(args []string) error {
		if len(args) == 1 {
			opts.File = args[0]
		}
		if runF != nil {
			return runF(opts)
		}
		return trustRun(f, opts)
	}
	return c
}

func trustRun(f *factory, opts *TrustOptions) error {
	env, err := f.Env()
	if err != nil {
		return err
	}
	if env.ConfigDir == "" {
		return &usageError{"no config directory to keep trust in: set HOME or XDG_CONFIG_HOME"}
	}
	store := &config.TrustStore{Path: filepath.Join(env.ConfigDir, "trust.json")}
	if opts.List {
		list, err := store.List()
		if err != nil {
			return err
		}
		for _, t := range list {
			fmt.Fprintf(opts.IO.Out, "%-8s %s  %.12s  %s\n", t.State, t.Trusted.Trusted.Format("2006-01-02"), t.SHA256, termsafe.Escape(t.Path))
		}
		return nil
	}
	file := opts.File
	if file == "" {
		file = config.ProjectFile(env)
	} else if !filepath.IsAbs(file) {
		file = filepath.Join(env.Cwd, file)
	}
	if opts.Revoke {
		ok, err := store.Revoke(file)
		if err != nil {
			return err
		}
		if !ok {
			return &usageError{fmt.Sprintf("trust --revoke: %s was not trusted", file)}
		}
		fmt.Fprintf(opts.IO.Out, "no longer trusted: %s\n", termsafe.Escape(file))
		return nil
	}
	h, sets, err := store.TrustShown(file, time.Now())
	if err != nil {
		return err
	}
	// What was trusted, from the bytes hashed: a change made since the
	// user read the file (by a command still running in the sandbox) shows
	// here, to revoke at once (trustfollow).
	what := "it sets nothing"
	if len(sets) > 0 {
		what = "it sets:"
	}
	fmt.Fprintf(opts.IO.Out, "trusted %s (sha256 %.12s): jail reads it while it stays as it is; %s\n", termsafe.Escape(file), h, what)
	for _, l := range sets {
		fmt.Fprintf(opts.IO.Out, "  %s\n", l)
	}
	return nil
}
