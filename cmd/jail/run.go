package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/config"
	"github.com/jail-sandbox/jail/hostpath"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/profile"
	"github.com/jail-sandbox/jail/sandbox"
)

// RunOptions is what `jail [flags] -- COMMAND` asks for.
type RunOptions struct {
	IO *iostreams
	// Flags are the policy options given, in order (package config layers
	// them over the files and profiles).
	Flags      []config.Setting
	ConfigFile string
	NoProject  *bool
	Command    []string
}

// newRunCmd is the sandbox itself: jail [flags] -- COMMAND [ARG...].
func newRunCmd(f *factory, runF func(*RunOptions) error) *command {
	opts := &RunOptions{IO: f.IO}
	c := newCommand(f, "", "jail [flags] -- COMMAND [ARG...]", "run COMMAND in a sandbox")
	fs := c.flags
	// Flags stop at the first word that is not one: the command and its own
	// flags follow --.
	fs.SetInterspersed(false)
	addOptions(fs, &opts.Flags)
	fs.StringVar(&opts.ConfigFile, "config", "", "read `FILE` too")
	noProject := fs.Bool("no-project-file", false, "do not read the workspace's .jail.toml")
	showVersion := fs.Bool("version", false, "print the version and exit")
	c.help = func(w io.Writer) { rootHelp(w, f) }
	c.args = func(args []string) error {
		if *showVersion {
			return nil
		}
		dash := fs.ArgsLenAtDash()
		switch {
		case dash < 0 && len(args) == 0:
			if prog := profileProgram(opts.Flags); prog != "" {
				return &usageError{msg: fmt.Sprintf("no command given: name the program after --, as in jail -P %s -- %s (see jail --help)", prog, prog)}
			}
			return &usageError{msg: "no command given: usage is jail [flags] -- COMMAND [ARG...] (see jail --help)"}
		case dash != 0:
			// A word before --: a mistyped verb, a verb after flags, or a
			// command without --.
			w := args[0]
			if _, ok := verbs[w]; ok {
				return &usageError{msg: fmt.Sprintf("%q is a verb: put it first, as in jail %s (see jail --help)", w, w)}
			}
			return &usageError{msg: fmt.Sprintf("%q is not a jail verb; put the command after --: jail [flags] -- %s (see jail --help)", w, strings.Join(args, " "))}
		case len(args) == 0:
			if prog := profileProgram(opts.Flags); prog != "" {
				return &usageError{msg: fmt.Sprintf("no command after --: name the program, as in jail -P %s -- %s (see jail --help)", prog, prog)}
			}
			return &usageError{msg: "no command after --: usage is jail [flags] -- COMMAND [ARG...] (see jail --help)"}
		}
		return nil
	}
	c.run = func(args []string) error {
		if *showVersion {
			fmt.Fprintf(f.IO.Out, "jail %s\n", f.Version)
			return nil
		}
		if fs.Changed("no-project-file") {
			opts.NoProject = noProject
		}
		opts.Command = args
		if runF != nil {
			return runF(opts)
		}
		return runRun(f, opts)
	}
	return c
}

// profileProgram is the first profile named on the command line that is
// also a program on PATH (jail -P claude, typed without -- claude): the
// command the user most likely meant, for the usage error to show.
func profileProgram(flags []config.Setting) string {
	for _, s := range flags {
		if s.Option == nil || s.Option.Name != "profile" {
			continue
		}
		for _, name := range strings.Split(s.Value, ",") {
			name = strings.TrimSpace(name)
			if !policy.ValidName(name) {
				continue
			}
			if _, err := exec.LookPath(name); err == nil {
				return name
			}
		}
	}
	return ""
}

// runRun resolves the layers into a policy, reports any mistake with its
// source, creates what the profiles need and runs the sandbox.
func runRun(f *factory, opts *RunOptions) error {
	env, err := f.Env()
	if err != nil {
		return err
	}
	res, err := resolve(env, opts.Flags, opts.ConfigFile, opts.NoProject)
	if err != nil {
		return err
	}
	p, err := prepare(res, env, opts.Command, false, true)
	if err != nil {
		return err
	}
	return exitStatus(sandbox.RunChecked(&p))
}

// prepare turns the resolved layers into the policy to run, the same for
// jail -- COMMAND and jail run: the profiles' arguments for the command's
// program and their registries, the paths they create, every check that
// needs no sandbox. idle allows no command (jail run -d). It also points
// the supervisor's reports at the values' sources. inRun leaves
// sandbox.Check to the supervisor of this process (sandbox.RunChecked),
// which makes it while init starts: its mistakes are reported the same.
func prepare(res *config.Result, env config.Env, command []string, idle, inRun bool) (policy.Policy, error) {
	p := res.Policy
	p.Command = addProgramArgs(command, res, &p)
	p.Notices = append(p.Notices, res.Notes...)
	p.ProfileHints = profileHints(env, p.Command, p.Profile)
	// Why: the files read for this policy are read again by the next run;
	// the sandbox keeps the ones in a writable tree read-only (policyfiles).
	p.PolicyFiles = append(p.PolicyFiles, res.PolicyFiles...)
	allowRegistries(&p, res, env, os.Environ())
	check := p.Validate
	if idle && len(p.Command) == 0 {
		check = p.Check
	}
	if err := check(); err != nil {
		return p, &usageError{msg: res.Origins.Explain(err)}
	}
	// Before anything is created in the home (the profiles' paths here,
	// the config directory below, the state directory in the supervisor):
	// a home the plan would refuse gets none of them.
	if err := sandbox.RefuseHomePlace(&p, os.Environ()); err != nil {
		return p, &usageError{msg: res.Origins.Explain(err)}
	}
	notes, err := createPaths(res, env, p.DryRun)
	if err != nil {
		return p, err
	}
	p.Notices = append(p.Notices, notes...)
	if p.DryRun {
		dropUncreated(&p, res, env)
	}
	// jail's own config directory (config.toml, profiles, trust.json) is
	// hidden by the sandbox's plan, as its state directory is, for every
	// sandbox (the Go API's too) and whatever --no-default-deny lifts.
	// What the supervisor reports later names values with their sources too
	// (the check's mistakes among them, when it makes the check).
	sandbox.Explain = res.Origins.Explain
	sandbox.Spell = config.SpellFlags
	// Last: it sees the policy as it runs.
	p.RegistryHints = registryHints(p, res, env, os.Environ())
	if inRun {
		return p, nil
	}
	if err := sandbox.Check(&p, os.Environ()); err != nil {
		return p, &usageError{msg: res.Origins.Explain(err)}
	}
	return p, nil
}

// addProgramArgs puts the profiles' arguments for the command's program
// right after its name ([args] codex = [...] applies to codex only, never
// to a shell or another program the user runs), before the user's own
// arguments, which therefore win where the program lets a later flag
// override an earlier one. Where it refuses an option given twice (codex
// --sandbox), the profile names the beginnings of the user's arguments that
// set the same (unless): with one of them in the command, the profile's
// arguments are left out and the user's own choice is the one taken.
func addProgramArgs(cmd []string, res *config.Result, p *policy.Policy) []string {
	if len(cmd) == 0 {
		return cmd
	}
	prog := filepath.Base(cmd[0])
	var add []string
	for _, a := range res.Args {
		if a.Program != prog {
			continue
		}
		if own := setsItself(cmd[1:], a.Unless); own != "" {
			if p.DryRun {
				p.Notices = append(p.Notices, fmt.Sprintf("profile %s: runs %s without %s: the command gives %s itself", a.Source.Profile, prog, strings.Join(a.Args, " "), own))
			}
			continue
		}
		add = append(add, a.Args...)
		if p.DryRun {
			p.Notices = append(p.Notices, fmt.Sprintf("profile %s: runs %s with %s", a.Source.Profile, prog, strings.Join(a.Args, " ")))
		}
	}
	if len(add) == 0 {
		return cmd
	}
	out := append([]string{cmd[0]}, add...)
	return append(out, cmd[1:]...)
}

// setsItself returns the first of args that begins with one of prefixes
// ("" when none does).
func setsItself(args, prefixes []string) string {
	for _, a := range args {
		for _, pre := range prefixes {
			if strings.HasPrefix(a, pre) {
				return a
			}
		}
	}
	return ""
}

// resolve layers flags over files and profiles; its errors come back worded
// with their sources.
func resolve(env config.Env, flags []config.Setting, configFile string, noProject *bool) (*config.Result, error) {
	res, err := config.Resolve(config.Request{
		Flags: flags, ConfigFile: configFile, NoProject: noProject,
		Env: env, Profiles: profile.ForConfigDir(env.ConfigDir),
	})
	if err != nil {
		return nil, &usageError{msg: config.OriginsOf(flags).Explain(err), err: err}
	}
	return res, nil
}

// createPaths makes the paths the profiles want when they are missing (under
// $HOME only, never following a symlink at the last step, never
// overwriting), and says so; with --dry-run it only says what it would do.
func createPaths(res *config.Result, env config.Env, dryRun bool) ([]string, error) {
	var notes []string
	for _, c := range res.Creates {
		path := filepath.Join(env.Home, strings.TrimPrefix(c.Path, "~"))
		if env.Home == "" || !strings.HasPrefix(path, filepath.Clean(env.Home)+"/") {
			return nil, &usageError{msg: fmt.Sprintf("profile %s: create %s: no home directory to create it in", c.Source.Profile, c.Path)}
		}
		if _, err := os.Lstat(path); err == nil {
			continue
		}
		why := "profile " + c.Source.Profile
		if c.Why != "" {
			why += ": " + c.Why
		}
		if dryRun {
			notes = append(notes, fmt.Sprintf("would create %s (%s)", c.Path, why))
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			if why := blockedWay(filepath.Dir(path)); why != "" {
				return nil, &usageError{msg: fmt.Sprintf("profile %s: create %s: %s", c.Source.Profile, c.Path, why)}
			}
			return nil, &usageError{msg: fmt.Sprintf("profile %s: create %s: %v", c.Source.Profile, c.Path, err)}
		}
		var err error
		if c.Dir {
			err = os.Mkdir(path, 0o700)
		} else {
			err = writeNew(path, []byte(c.Content))
		}
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, &usageError{msg: fmt.Sprintf("profile %s: create %s: %v", c.Source.Profile, c.Path, err)}
		}
		notes = append(notes, fmt.Sprintf("created %s (%s)", c.Path, why))
	}
	return notes, nil
}

// blockedWay says why dir cannot be made when a symlink on its way leads
// nowhere or to something that is no directory (~/.claude ->
// dotfiles/claude, which a sandboxed run that could write dotfiles replaced
// with a dangling link or a file: "mkdir ~/.claude: file exists" said
// neither, session 19), and what to do; "" otherwise. Nothing is made
// through it: the link's end is what the agent chose.
func blockedWay(dir string) string {
	var link, bad hostpath.Step
	var gone bool
	_, _ = hostpath.Walk(dir, func(s hostpath.Step) error {
		switch {
		case s.Err != nil:
			bad, gone = s, errors.Is(s.Err, fs.ErrNotExist)
			return s.Err
		case s.Link():
			link = s
		case !s.Info.IsDir():
			bad = s
			return fs.ErrInvalid
		}
		return nil
	})
	if link.Path == "" || bad.Path == "" {
		return ""
	}
	what := fmt.Sprintf("%s, where the symlink %s leads, is not a directory", bad.Path, link.Path)
	if gone {
		what = fmt.Sprintf("the symlink %s leads nowhere (%s is missing)", link.Path, bad.Path)
	}
	return what + " (a sandboxed run that could write there may have replaced it): put the directory back, or remove the link, then start jail again"
}

// dropUncreated leaves out of a --dry-run's plan the read and write paths a
// profile would create (they do not exist yet, and a dry run creates
// nothing): the plan then shows the rest, and the notes say what would be
// created.
func dropUncreated(p *policy.Policy, res *config.Result, env config.Env) {
	missing := map[string]bool{}
	for _, c := range res.Creates {
		path := filepath.Join(env.Home, strings.TrimPrefix(c.Path, "~"))
		if _, err := os.Lstat(path); err != nil {
			missing[c.Path] = true
			missing[path] = true
		}
	}
	keep := func(l []string) []string {
		out := l[:0:0]
		for _, v := range l {
			if !missing[v] {
				out = append(out, v)
			}
		}
		return out
	}
	p.Write, p.Read = keep(p.Write), keep(p.Read)
}

// writeNew creates a file that must not exist yet, private to the user.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
