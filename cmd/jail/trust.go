package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/config"
	"github.com/jail-sandbox/jail/internal/termsafe"
	"golang.org/x/term"
)

// TrustOptions is jail trust.
type TrustOptions struct {
	IO     *iostreams
	File   string // "" : the workspace's .jail.toml
	List   bool
	Prune  bool
	Revoke bool
	Yes    bool // trust without asking (scripts)
	// Interactive reports whether the user can be asked (stdin a
	// terminal); nil: that of IO.In.
	Interactive func() bool
}

func newTrustCmd(f *factory, runF func(*TrustOptions) error) *command {
	opts := &TrustOptions{IO: f.IO}
	c := newCommand(f, "trust", "jail trust [--yes] [FILE] | jail trust --list | jail trust --revoke [FILE] | jail trust --prune",
		"trust a project's .jail.toml, as it is now")
	c.long = `A project's .jail.toml is read only once you trust it: jail records its path and
SHA-256 in your config directory, outside every workspace and hidden from
every sandbox. Any change to the file (yours, or one made by a command in the
sandbox) loses the trust; jail then refuses to start until you run jail trust
again. So does its removal: restore it, or forget it with --revoke FILE. FILE defaults to the .jail.toml a run here reads: at the top level of
the git work tree, else in the current directory (or a trusted project's
holding the current directory inside that tree, or, where there is none,
the trusted one above). jail trust lists what the
bytes it read set, line by line, and asks before recording them: check them
against what you read (a command still running in a sandbox may have changed
the file since). --yes records without asking (for scripts); without a
terminal to ask on, jail trust needs it. A trusted file holds for runs in its
directory and below it that have no .jail.toml of their own (subdirectories,
submodules).

--list prints one record a line: its state, the day it was trusted, the
SHA-256's first 12 digits and the path. States: ok (read as trusted),
changed, gone (the file; its directory is there), not-file (a symlink, FIFO
or device), unreadable: runs there are refused until you trust the file
again or revoke it; dir-gone (the project's directory is gone: deleted or
moved). --prune forgets the dir-gone records only: a file gone from a
directory still there keeps refusing runs there (a command run in the
sandbox can delete it) until you restore it or --revoke it by name.`
	c.flags.BoolVar(&opts.List, "list", false, "list trusted files and whether they changed")
	c.flags.BoolVar(&opts.Revoke, "revoke", false, "forget FILE")
	c.flags.BoolVar(&opts.Prune, "prune", false, "forget the records whose project directory is gone")
	c.flags.BoolVar(&opts.Yes, "yes", false, "trust FILE without asking (for scripts)")
	c.args = func(args []string) error {
		switch {
		case len(args) > 1:
			return c.usageErr("one FILE at a time")
		case opts.List && (len(args) > 0 || opts.Revoke || opts.Prune || opts.Yes):
			return c.usageErr("--list takes nothing else")
		case opts.Prune && (len(args) > 0 || opts.Revoke || opts.Yes):
			return c.usageErr("--prune takes nothing else")
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
		return &usageError{msg: "no config directory to keep trust in: set HOME or XDG_CONFIG_HOME"}
	}
	store := &config.TrustStore{Path: filepath.Join(env.ConfigDir, "trust.json")}
	if opts.List {
		return trustList(opts, store)
	}
	if opts.Prune {
		gone, err := store.Prune()
		if err != nil {
			return err
		}
		for _, p := range gone {
			fmt.Fprintf(opts.IO.Out, "forgot %s (its directory is gone)\n", termsafe.Escape(p))
		}
		if len(gone) == 0 {
			fmt.Fprintln(opts.IO.ErrOut, "jail: trust --prune: no record's directory is gone")
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
			return &usageError{msg: fmt.Sprintf("trust --revoke: %s was not trusted", file)}
		}
		fmt.Fprintf(opts.IO.Out, "no longer trusted: %s\n", termsafe.Escape(file))
		return nil
	}
	// The user is asked before anything is recorded; with no terminal to
	// ask on (a script, an agent running jail trust through a tool),
	// nothing is trusted without --yes: one line, before reading.
	interactive := opts.Interactive
	if interactive == nil {
		interactive = func() bool {
			in, ok := opts.IO.In.(*os.File)
			return ok && term.IsTerminal(int(in.Fd()))
		}
	}
	if !opts.Yes && !interactive() {
		return &usageError{msg: fmt.Sprintf("trust: nothing to ask on (stdin is no terminal): read %s, then run jail trust --yes %s", termsafe.Escape(file), termsafe.Escape(file))}
	}
	p, err := store.Prepare(file)
	if err != nil {
		return err
	}
	if opts.Yes {
		if err := store.Record(p, time.Now()); err != nil {
			return err
		}
		// What was trusted, from the bytes hashed: a change made since
		// the user read the file (by a command still running in the
		// sandbox) shows here, to revoke at once (trustfollow).
		what := "it sets nothing"
		if len(p.Sets) > 0 {
			what = "it sets:"
		}
		fmt.Fprintf(opts.IO.Out, "trusted %s (sha256 %.12s): jail reads it while it stays as it is; %s\n", termsafe.Escape(file), p.SHA256, what)
		for _, l := range p.Sets {
			fmt.Fprintf(opts.IO.Out, "  %s\n", l)
		}
		if l := replaces(store, p.Key, env.Home); l != "" {
			fmt.Fprintf(opts.IO.Out, "%s\n", l)
		}
		return nil
	}
	// What the bytes read set, then the question: what is recorded is
	// the hash of these very bytes, whatever the file holds by the time
	// the user answers (a later change is refused at the next run).
	what := "sets nothing"
	if len(p.Sets) > 0 {
		what = "sets:"
	}
	fmt.Fprintf(opts.IO.Out, "%s (sha256 %.12s) %s\n", termsafe.Escape(file), p.SHA256, what)
	for _, l := range p.Sets {
		fmt.Fprintf(opts.IO.Out, "  %s\n", l)
	}
	dir := filepath.Dir(p.Key)
	if l := replaces(store, p.Key, env.Home); l != "" {
		fmt.Fprintf(opts.IO.Out, "%s\n", l)
	}
	fmt.Fprintf(opts.IO.Out, "it applies to runs in %s and below it with no .jail.toml of their own (subdirectories, submodules)\ntrust it? [y/N] ", termsafe.Escape(dir))
	if !yes(opts.IO.In) {
		return &usageError{msg: fmt.Sprintf("trust: %s not trusted (answered no)", termsafe.Escape(file))}
	}
	if err := store.Record(p, time.Now()); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "trusted %s: jail reads it while it stays as it is\n", termsafe.Escape(file))
	return nil
}

// trustList prints the records on Out, one a line (state, day, hash
// prefix, path: the path escaped, it may hold the agent's bytes), then on
// ErrOut what to do about the ones not as trusted, one line a kind.
func trustList(opts *TrustOptions, store *config.TrustStore) error {
	list, err := store.List()
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintln(opts.IO.ErrOut, "jail: trust --list: no project file is trusted")
		return nil
	}
	refused, dirGone := 0, 0
	for _, t := range list {
		fmt.Fprintf(opts.IO.Out, "%-10s %s  %.12s  %s\n", t.State, t.Trusted.Trusted.Format("2006-01-02"), t.SHA256, termsafe.Escape(t.Path))
		switch t.State {
		case config.StateOK:
		case config.StateDirGone:
			dirGone++
		default:
			refused++
		}
	}
	if refused > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "jail: %d not as trusted: runs there are refused until you review the file and run jail trust FILE again, or jail trust --revoke FILE to go on without it\n", refused)
	}
	if dirGone > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "jail: %d whose directory is gone: jail trust --prune forgets them\n", dirGone)
	}
	return nil
}

// yes reads one answer line from in, a byte at a time (nothing past the
// line is taken from the terminal): "y" or "yes", any case.
func yes(in io.Reader) bool {
	var line []byte
	b := make([]byte, 1)
	for len(line) < 64 {
		n, err := in.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				break
			}
			line = append(line, b[0])
		}
		if err != nil {
			break
		}
	}
	a := strings.ToLower(strings.TrimSpace(string(line)))
	return a == "y" || a == "yes"
}

// replaces is the line saying which trusted file above key's directory
// stops applying there once key is trusted ("" when none): a nested
// project's file stands alone, so trusting one a command in the outer
// project's sandbox planted (beside a .git it made, to narrow the next
// run) drops the outer file's restrictions below it. Why: the settings
// listed look harmless; what the user gives up is said where they decide
// (review15b).
func replaces(store *config.TrustStore, key, home string) string {
	outer, err := store.Enclosing(filepath.Dir(key), home)
	if err != nil || outer == "" {
		return ""
	}
	return fmt.Sprintf("runs started in %s and below it get it instead of the trusted %s: what that one sets, its restrictions too, no longer applies to them",
		termsafe.Escape(filepath.Dir(key)), termsafe.Escape(outer))
}
