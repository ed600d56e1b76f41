// Command jail runs a command (an AI agent CLI, a build, any untrusted program)
// in a Linux sandbox. This package is the CLI only: one grammar
//
//	jail [flags] -- COMMAND [ARG...]
//	jail VERB [flags] [ARG...]
//
// with one file per verb (run.go is the sandbox itself), each an Options
// struct, a constructor newXCmd(f, runF) that parses into it and a function
// that runs it; tests pass their own runF and check the parsing without
// running anything (the shape of cli/cli's pkg/cmd). The flags of the run
// verb come from policy.Options, the same table that gives the config keys,
// --help, the completions and the man page. Errors become exit codes in one
// place (exitCode); all kernel work lives in the packages this one calls.
package main

import (
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/config"
	"github.com/jail-sandbox/jail/prefault"
	"github.com/jail-sandbox/jail/sandbox"
)

// version is set at build time with -ldflags "-X main.version=..."; without
// it, the module version `go install` records is used.
var version = ""

// iostreams are the command's streams; tests give buffers.
type iostreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// factory is what every verb gets: its streams, the environment the
// readers need, the version.
type factory struct {
	IO      *iostreams
	Env     func() (config.Env, error)
	Version string
}

func main() {
	sandbox.MainStarted = time.Now() // JAIL_TRACE's origin (a detached supervisor's too)
	// A background sandbox's supervisor (jail run -d) is this binary
	// again, run by jail.Init below: it names options as the user types
	// them (--allow-domain), as a run in the foreground does, and asks at
	// its run's end which profile allows a refused registry.
	sandbox.Spell = config.SpellFlags
	jail.RegistryHints = backgroundRegistryHints
	// A sandbox's init or a detached supervisor (jail run -d) is a
	// re-exec of this binary: it never returns from here.
	jail.Init()
	prefault.More() // the heap's window past its first chunk, if the runtime has grown there
	f := &factory{
		IO:      &iostreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr},
		Env:     config.ProcessEnv,
		Version: buildVersion(),
	}
	sandbox.Version = f.Version
	os.Exit(run(f, os.Args[1:]))
}

// run parses args, runs what they ask for and returns the exit status.
func run(f *factory, args []string) int {
	return exitCode(f.IO.ErrOut, dispatch(f, args))
}

// verbs are the words jail takes first; anything else is the sandbox's
// flags, then -- and the command. A new verb cannot change what a command
// means: a command always follows --.
var verbs map[string]func(*factory) *command

func init() {
	// In init: the constructors refer to verbs themselves (help, completion).
	verbs = map[string]func(*factory) *command{
		"audit":      func(f *factory) *command { return newAuditCmd(f, nil) },
		"ps":         func(f *factory) *command { return newPSCmd(f, nil) },
		"kill":       func(f *factory) *command { return newKillCmd(f, nil) },
		"run":        func(f *factory) *command { return newRunVerbCmd(f, nil) },
		"exec":       func(f *factory) *command { return newExecCmd(f, nil) },
		"stop":       func(f *factory) *command { return newStopCmd(f, nil) },
		"logs":       func(f *factory) *command { return newLogsCmd(f, nil) },
		"attach":     func(f *factory) *command { return newAttachCmd(f, nil) },
		"inspect":    func(f *factory) *command { return newInspectCmd(f, nil) },
		"gc":         func(f *factory) *command { return newGCCmd(f, nil) },
		"doctor":     func(f *factory) *command { return newDoctorCmd(f, nil) },
		"version":    func(f *factory) *command { return newVersionCmd(f, nil) },
		"help":       func(f *factory) *command { return newHelpCmd(f) },
		"config":     func(f *factory) *command { return newConfigCmd(f, nil) },
		"trust":      func(f *factory) *command { return newTrustCmd(f, nil) },
		"profiles":   func(f *factory) *command { return newProfilesCmd(f, nil) },
		"completion": func(f *factory) *command { return newCompletionCmd(f, nil) },
		"man":        func(f *factory) *command { return newManCmd(f) },
	}
}

// verbOrder is the order --help lists them in.
var verbOrder = []string{"run", "exec", "ps", "stop", "kill", "logs", "attach", "inspect", "audit", "gc", "doctor", "config", "trust", "profiles", "completion", "man", "version", "help"}

func dispatch(f *factory, args []string) error {
	if len(args) > 0 {
		if mk, ok := verbs[args[0]]; ok {
			return mk(f).exec(args[1:])
		}
	}
	return newRunCmd(f, nil).exec(args)
}

// buildVersion is the version stamped at build time (make), else the one
// the Go toolchain recorded (go install module@version, or the VCS state of
// a checkout), else "devel".
func buildVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionFrom(bi)
}

func versionFrom(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "devel"
	}
	v := "devel-" + rev[:min(12, len(rev))]
	if modified == "true" {
		v += "-dirty"
	}
	return v
}
