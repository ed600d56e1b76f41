package main

import (
	"context"
	"fmt"

	"github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/config"
	"github.com/jail-sandbox/jail/sandbox"
)

// RunVerbOptions is jail run: a named sandbox, in the background with -d.
type RunVerbOptions struct {
	IO         *iostreams
	Flags      []config.Setting
	ConfigFile string
	NoProject  *bool
	Detach     bool
	Tty        bool
	Name       string
	Command    []string
}

func newRunVerbCmd(f *factory, runF func(*RunVerbOptions) error) *command {
	opts := &RunVerbOptions{IO: f.IO}
	c := newCommand(f, "run", "jail run [-d] [--name NAME] [flags] [-- COMMAND [ARG...]]",
		"start a named sandbox; with -d in the background (no COMMAND: an idle one for jail exec)")
	c.long = "With -d, jail prints the sandbox's name (or id) once it runs; its command's output goes to a log\n" +
		"(jail logs NAME); with -d -t the command gets a terminal of the sandbox's own (jail attach NAME).\n" +
		"jail exec NAME -- COMMAND runs more commands in it; jail stop NAME ends it.\n" +
		"The sandbox flags are those of jail [flags] -- COMMAND (see jail --help)."
	fs := c.flags
	fs.SetInterspersed(false)
	fs.BoolVarP(&opts.Detach, "detach", "d", false, "run in the background and print the name once the sandbox runs")
	fs.BoolVarP(&opts.Tty, "tty", "t", false, "with -d: keep a terminal for the command (jail attach NAME)")
	fs.StringVar(&opts.Name, "name", "", "the sandbox's `NAME` (unique among your running sandboxes)")
	addOptions(fs, &opts.Flags)
	fs.StringVar(&opts.ConfigFile, "config", "", "read `FILE` too")
	noProject := fs.Bool("no-project-file", false, "do not read the workspace's .jail.toml")
	c.args = func(args []string) error {
		dash := fs.ArgsLenAtDash()
		switch {
		case len(args) > 0 && dash != 0:
			return c.usageErr("put the command after --: jail run [flags] -- %s", args[0])
		case len(args) == 0 && !opts.Detach:
			return c.usageErr("no command: give -- COMMAND, or -d for an idle sandbox")
		case opts.Tty && !opts.Detach:
			return c.usageErr("-t keeps a terminal for a background sandbox: add -d (in the foreground the command has yours)")
		case opts.Tty && len(args) == 0:
			return c.usageErr("-t needs a command to keep a terminal for: jail run -d -t --name NAME -- COMMAND")
		}
		if opts.Name != "" {
			if err := sandbox.ValidName(opts.Name); err != nil {
				return &usageError{msg: "--name " + opts.Name + ": use letters, digits, '.', '_' and '-' (at most 63, starting with a letter or digit)"}
			}
		}
		return nil
	}
	c.run = func(args []string) error {
		if fs.Changed("no-project-file") {
			opts.NoProject = noProject
		}
		opts.Command = args
		if runF != nil {
			return runF(opts)
		}
		return runVerb(f, opts)
	}
	return c
}

func runVerb(f *factory, opts *RunVerbOptions) error {
	env, err := f.Env()
	if err != nil {
		return err
	}
	res, err := resolve(env, opts.Flags, opts.ConfigFile, opts.NoProject)
	if err != nil {
		return err
	}
	res.Policy.Name = opts.Name
	p, err := prepare(res, env, opts.Command, true, !opts.Detach)
	if err != nil {
		return err
	}
	if !opts.Detach {
		return exitStatus(sandbox.RunChecked(&p))
	}
	sb, err := jail.Start(context.Background(), &p, jail.Options{Name: opts.Name, Detach: true, Tty: opts.Tty})
	if err != nil {
		return err
	}
	name := sb.Name()
	if name == "" {
		name = sb.ID()
	}
	fmt.Fprintln(f.IO.Out, name)
	return nil
}
