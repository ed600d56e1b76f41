package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/config"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/profile"
)

// ProfilesOptions is jail profiles [show NAME...].
type ProfilesOptions struct {
	IO    *iostreams
	Show  []string // names to show; empty: list
	Names bool     // bare names, for completion scripts
}

func newProfilesCmd(f *factory, runF func(*ProfilesOptions) error) *command {
	opts := &ProfilesOptions{IO: f.IO}
	c := newCommand(f, "profiles", "jail profiles | jail profiles show NAME...",
		"list profiles, or show what one amounts to as flags")
	c.long = `Profiles are named sets of options in the config file schema: built in, or
yours in ~/.config/jail/profiles/NAME.toml (which wins over a built-in one of
the same name). Apply with --profile NAME (repeatable) or profile = [...] in a
config file; they sit below every config file and flag.`
	c.verbs = []string{"show"}
	c.flags.BoolVar(&opts.Names, "names", false, "print the names only")
	c.flags.Lookup("names").Hidden = true
	c.args = func(args []string) error {
		switch {
		case len(args) == 0:
		case args[0] != "show":
			return c.usageErr("unknown %q: want jail profiles or jail profiles show NAME", args[0])
		case len(args) == 1:
			return c.usageErr("show which profile? (jail profiles lists them)")
		}
		return nil
	}
	c.run = func(args []string) error {
		if len(args) > 0 {
			opts.Show = args[1:]
		}
		if runF != nil {
			return runF(opts)
		}
		return profilesRun(f, opts)
	}
	return c
}

func profilesRun(f *factory, opts *ProfilesOptions) error {
	env, err := f.Env()
	if err != nil {
		return err
	}
	src := profile.ForConfigDir(env.ConfigDir)
	if len(opts.Show) == 0 {
		list, err := src.List()
		if err != nil {
			return err
		}
		for _, in := range list {
			switch {
			case opts.Names:
				fmt.Fprintln(opts.IO.Out, in.Name)
			case in.Err != nil:
				fmt.Fprintf(opts.IO.Out, "%-12s BROKEN: %v\n", in.Name, in.Err)
			default:
				where := "built in"
				if in.Path != "" {
					where = in.Path
					if in.Shadows {
						where += ", over the built-in one"
					}
				}
				fmt.Fprintf(opts.IO.Out, "%-12s %s (%s)\n", in.Name, in.Description, where)
			}
		}
		return nil
	}
	chain, err := config.ProfileChain(src, opts.Show)
	if err != nil {
		return &usageError{msg: err.Error()}
	}
	var all []string
	for _, p := range chain {
		where := "built in"
		if p.Path != "" {
			where = p.Path
		}
		fmt.Fprintf(opts.IO.Out, "%s: %s (%s)\n", p.Name, p.Description, where)
		if len(p.Extends) > 0 {
			fmt.Fprintf(opts.IO.Out, "  extends     %s\n", strings.Join(p.Extends, " "))
		}
		flags := flagsOf(p.Settings)
		all = append(all, flags...)
		fmt.Fprintf(opts.IO.Out, "  amounts to  %s\n", strings.Join(flags, " "))
		for _, a := range p.Args {
			unless := ""
			if len(a.Unless) > 0 {
				unless = " (unless its arguments give " + strings.Join(a.Unless, ", ") + ")"
			}
			fmt.Fprintf(opts.IO.Out, "  args        %s runs as %s %s%s\n", a.Program, a.Program, strings.Join(a.Args, " "), unless)
		}
		for _, r := range p.Registries {
			fmt.Fprintf(opts.IO.Out, "  registries  %s: the hosts %s's own configuration names are allowed at start (jail --dry-run lists them)\n", r.Tool, r.Tool)
		}
		for _, k := range slices.Sorted(maps.Keys(p.Why)) {
			fmt.Fprintf(opts.IO.Out, "  why         %s: %s\n", k, p.Why[k])
		}
		for _, n := range slices.Sorted(maps.Keys(p.Refused)) {
			fmt.Fprintf(opts.IO.Out, "  refused     %s, said as: %s (never allowed by the profile)\n", n, p.Refused[n])
		}
		for _, c := range p.Creates {
			what := "file"
			if c.Dir {
				what = "directory"
			}
			fmt.Fprintf(opts.IO.Out, "  creates     %s %s when missing%s\n", what, c.Path, ifNotEmpty(": ", c.Why))
		}
	}
	if len(chain) > 1 {
		fmt.Fprintf(opts.IO.Out, "together: jail %s\n", strings.Join(all, " "))
	}
	return nil
}

func ifNotEmpty(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

// flagsOf renders settings as the flags that would set them.
func flagsOf(settings []config.Setting) []string {
	var out []string
	for _, s := range settings {
		switch {
		case s.Option.Kind == policy.Bool && s.Value == "true":
			out = append(out, "--"+s.Option.Name)
		case s.Option.Kind == policy.Bool:
			out = append(out, "--"+s.Option.Name+"="+s.Value)
		default:
			out = append(out, "--"+s.Option.Name+" "+shellQuote(s.Value))
		}
	}
	return out
}

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(s string) string {
	safe := func(s string) bool {
		return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == ""
	}
	// ~/ stays bare: the shell expands it to the same path jail would.
	if safe(s) || strings.HasPrefix(s, "~/") && safe(s[2:]) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
