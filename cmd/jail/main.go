// Command jail runs a command (an AI agent CLI, a build, any untrusted program)
// in a Linux sandbox. This file is the CLI only: flags become a policy, and
// subcommands dispatch; all kernel work lives in the packages it calls.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"jail/policy"
	"jail/sandbox"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usageText = `jail runs a command in a sandbox: new user, mount, pid, ipc, uts, cgroup and
network namespaces; the host read-only, the current directory writable, $HOME
empty, secrets hidden, no network, every capability dropped.

Usage:
  jail [flags] -- COMMAND [ARG...]
  jail version
  jail help

Examples:
  jail -- claude                      run an agent CLI in the current directory
  jail -r ~/.gitconfig -- git status  make one file of $HOME visible, read-only
  jail -w ~/.cache/go-build -- go test ./...
  jail --read-only -- ls -la          nothing writable but /tmp
  jail --env GITHUB_TOKEN -- gh pr list   pass one secret, by name
  jail --dry-run -- true              print every mount and exit

Flags:
`

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

type sizeFlag struct{ v *int64 }

func (s sizeFlag) String() string {
	if s.v == nil {
		return ""
	}
	return strconv.FormatInt(*s.v, 10)
}
func (s sizeFlag) Set(v string) error {
	n, err := policy.ParseSize(v)
	if err != nil {
		return err
	}
	*s.v = n
	return nil
}

func main() {
	if sandbox.IsInit() {
		sandbox.InitMain() // never returns
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "version":
			fmt.Fprintf(stdout, "jail %s\n", version)
			return 0
		case "help":
			newFlags(nil, stdout).Usage()
			return 0
		}
	}
	p := policy.Default()
	fs := newFlags(&p, stdout)
	// Errors are one line; usage only when asked for.
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
			return 0
		}
		fmt.Fprintf(stderr, "jail: %v (see jail --help)\n", err)
		return sandbox.ExitSetup
	}
	p.Command = fs.Args()
	if p.Workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			fmt.Fprintf(stderr, "jail: cannot read the current directory: %v\n", err)
			return sandbox.ExitSetup
		}
		p.Workspace = wd
	}
	if err := p.Validate(); err != nil {
		fmt.Fprintf(stderr, "jail: %v\n", err)
		return sandbox.ExitSetup
	}
	return sandbox.Run(&p)
}

func newFlags(p *policy.Policy, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("jail", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(out, usageText)
		fs.VisitAll(func(f *flag.Flag) {
			if len(f.Name) == 1 {
				return
			}
			name := "--" + f.Name
			for short, long := range shortNames {
				if long == f.Name {
					name = "-" + short + ", " + name
				}
			}
			fmt.Fprintf(out, "  %-26s %s\n", name, f.Usage)
		})
	}
	if p == nil {
		d := policy.Default()
		p = &d
	}
	list := func(v *[]string, name, usage string) {
		fs.Var((*stringList)(v), name, usage)
	}
	list(&p.Write, "write", "make PATH writable (repeatable)")
	list(&p.Read, "read", "make a hidden PATH visible read-only (repeatable)")
	fs.BoolVar(&p.ReadOnly, "read-only", false, "make the workspace read-only too")
	fs.StringVar(&p.Workspace, "workspace", "", "the workspace (default: the current directory)")
	list(&p.Env, "env", "pass host variable NAME into the sandbox (repeatable)")
	list(&p.SetEnv, "setenv", "set NAME=VALUE in the sandbox (repeatable)")
	fs.Var(sizeFlag{&p.TmpSize}, "tmp-size", "size cap of the private /tmp and other tmpfs (default 1G)")
	fs.StringVar(&p.Hostname, "hostname", "jail", "hostname inside")
	fs.BoolVar(&p.DryRun, "dry-run", false, "print the effective plan and exit")
	fs.BoolVar(&p.Quiet, "quiet", false, "no notices on stderr")
	fs.BoolVar(&p.Verbose, "v", false, "verbose: report enforcement and the exit summary")
	fs.DurationVar(&p.KillGrace, "kill-grace", 5*time.Second, "time between SIGTERM and SIGKILL")
	for short, long := range shortNames {
		f := fs.Lookup(long)
		fs.Var(f.Value, short, f.Usage)
	}
	return fs
}

var shortNames = map[string]string{"w": "write", "r": "read"}
