package main

import (
	"errors"
	"fmt"

	"github.com/jail-sandbox/jail/config"
)

// ConfigOptions is jail config show|path.
type ConfigOptions struct {
	IO         *iostreams
	Verb       string // show, path
	Flags      []config.Setting
	ConfigFile string
	NoProject  *bool
}

func newConfigCmd(f *factory, runF func(*ConfigOptions) error) *command {
	opts := &ConfigOptions{IO: f.IO}
	c := newCommand(f, "config", "jail config [show] [flags] | jail config path",
		"print the effective options as a config file, or where config files live")
	c.long = `show (the default) takes the flags a run takes and prints what they amount to, layered over
the config files, the trusted project file and the profiles, as a config file
that loads back to the same options. path prints the user config file, the
profile directory and the trust store.`
	c.verbs = []string{"show", "path"}
	fs := c.flags
	fs.SetInterspersed(true)
	addOptions(fs, &opts.Flags)
	fs.StringVar(&opts.ConfigFile, "config", "", "read `FILE` too (above your config file, below flags)")
	noProject := fs.Bool("no-project-file", false, "do not read the workspace's .jail.toml")
	c.args = func(args []string) error {
		if len(args) > 1 || (len(args) == 1 && args[0] != "show" && args[0] != "path") {
			return c.usageErr("want show or path")
		}
		return nil
	}
	c.run = func(args []string) error {
		// No verb shows: what a user typing `jail config` first wants.
		opts.Verb = "show"
		if len(args) == 1 {
			opts.Verb = args[0]
		}
		if fs.Changed("no-project-file") {
			opts.NoProject = noProject
		}
		if runF != nil {
			return runF(opts)
		}
		return configRun(f, opts)
	}
	return c
}

func configRun(f *factory, opts *ConfigOptions) error {
	env, err := f.Env()
	if err != nil {
		return err
	}
	if opts.Verb == "path" {
		fmt.Fprintf(opts.IO.Out, "config    %s\nprofiles  %s/profiles\ntrust     %s/trust.json\n", env.UserConfigPath(), env.ConfigDir, env.ConfigDir)
		return nil
	}
	res, err := resolve(env, opts.Flags, opts.ConfigFile, opts.NoProject)
	var skipped *config.TrustError
	if errors.As(err, &skipped) && opts.NoProject == nil {
		// A project file a run would refuse to read yet: show is how a
		// user looks before trusting it, so it shows the rest and says
		// why the file is left out, where a run stops.
		no := true
		res, err = resolve(env, opts.Flags, opts.ConfigFile, &no)
	}
	if err != nil {
		return err
	}
	p := res.Policy
	// Checked on a copy: the file shows what was asked (net unset stays
	// unset), but a policy jail would refuse is said so now.
	check := p
	if err := check.Check(); err != nil {
		return &usageError{msg: res.Origins.Explain(err)}
	}
	ws := p.Workspace
	if ws == "" {
		ws = "not set: the top level of the git work tree of " + p.Cwd + ", else that directory"
	}
	header := []string{"workspace: " + ws}
	if len(res.Files) == 0 {
		header = append(header, "read: no file (defaults and flags only)")
	}
	for _, file := range res.Files {
		header = append(header, "read: "+file)
	}
	for _, n := range res.Notes {
		header = append(header, "note: "+n)
	}
	if skipped != nil {
		header = append(header, "not read: "+skipped.Error())
	}
	return config.Show(opts.IO.Out, &p, header)
}
