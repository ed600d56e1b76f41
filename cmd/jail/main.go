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

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/sandbox"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usageText = `jail runs a command in a sandbox: new user, mount, pid, ipc, uts, cgroup and
network namespaces; the host read-only, the current directory writable, $HOME
empty, secrets hidden, no network, every capability dropped.

Usage:
  jail [flags] -- COMMAND [ARG...]
  jail audit [--follow] [--json] [--type T] [--verify] FILE
  jail ps | jail kill [--now] ID|all | jail gc | jail doctor [--apparmor-profile]
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
	sandbox.Version = version
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "version":
			fmt.Fprintf(stdout, "jail %s\n", version)
			return 0
		case "doctor":
			if len(args) > 1 && args[1] == "--apparmor-profile" {
				return sandbox.AppArmorProfile(stdout, stderr)
			}
			return sandbox.Doctor(stdout)
		case "ps":
			return sandbox.PS(stdout)
		case "gc":
			return sandbox.GC(stdout)
		case "kill":
			ks := flag.NewFlagSet("jail kill", flag.ContinueOnError)
			ks.SetOutput(stderr)
			now := ks.Bool("now", false, "kill at once instead of SIGTERM then --kill-grace")
			if err := ks.Parse(args[1:]); err != nil || ks.NArg() == 0 {
				fmt.Fprintln(stderr, "usage: jail kill [--now] ID|PID|all ... (see jail ps)")
				return 2
			}
			return sandbox.Kill(ks.Args(), *now, stderr)
		case "audit":
			return audit.Main(args[1:], stdout, stderr)
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
			return 0 // the flag package has printed the usage
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
			if len(f.Name) == 1 || strings.HasPrefix(f.Name, "x-") {
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
		fmt.Fprint(out, "\nBuilt-in protections (lifted by --no-default-deny; git ones by --allow-git-config):\n")
		for _, b := range fsrules.Builtins {
			kind := "unreadable"
			if b.Kind == fsrules.ReadOnly {
				kind = "read-only "
			}
			fmt.Fprintf(out, "  %s  %-22s %s\n", kind, b.Name, b.Why)
		}
		fmt.Fprint(out, "\nExit status: the command's; 128+N if killed by signal N; 124 timeout;\n125 jail could not set up the sandbox; 126 not executable; 127 not found.\n")
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

	// Filesystem policy.
	list(&p.Deny, "deny", "make paths matching the glob PATTERN unreadable and unwritable (repeatable; ** any depth)")
	fs.BoolVar(&p.NoDefaultDeny, "no-default-deny", false, "drop the built-in secret and write protections")
	fs.BoolVar(&p.AllowGitConfig, "allow-git-config", false, "let the agent write .git/config, .git/hooks and .gitmodules")
	fs.Var(sizeFlag{&p.MaxFileSize}, "max-file-size", "no file can grow beyond SIZE (writes fail with EFBIG)")
	fs.IntVar(&p.RequireLandlock, "require-landlock", 0, "fail (exit 125) unless the kernel offers Landlock ABI N or newer")
	fs.IntVar(&p.LandlockMaxABI, "x-landlock-max-abi", 0, "testing: use at most Landlock ABI N (simulates an older kernel)")

	// Seccomp.
	fs.StringVar(&p.SeccompFile, "seccomp", "", "extend the seccomp policy with a JSON FILE (go-seccomp-bpf format)")
	fs.BoolVar(&p.SeccompReplace, "seccomp-replace", false, "with --seccomp: replace the built-in deny-list (the architecture check stays)")
	fs.BoolVar(&p.AllowPtrace, "allow-ptrace", false, "allow ptrace and process_vm_* between the sandbox's own processes (debuggers)")
	list(&p.BlockCommand, "block-command", "refuse execs whose argv matches REGEX (repeatable; a guard rail, not a boundary)")
	fs.BoolVar(&p.NoGuardRails, "no-guard-rails", false, "drop the default guard-rail patterns (rm -rf /, mkfs, ...)")
	fs.BoolVar(&p.NoExecAudit, "no-exec-audit", false, "do not record every exec (no seccomp user notification)")
	fs.BoolVar(&p.RequireExecAudit, "require-exec-audit", false, "fail (exit 125) where the exec audit is unavailable (WSL2, nested sandboxes)")
	fs.BoolVar(&p.SimulateNotifyBusy, "x-notify-ebusy", false, "testing: act as if seccomp user notification returned EBUSY (WSL2)")
	fs.BoolVar(&p.Degraded, "degraded", false, "where the host refuses namespaces (containers, CI, nested sandboxes), run with Landlock and seccomp only (weaker; see README)")
	fs.BoolVar(&p.ForceDegraded, "x-degraded", false, "testing: run in degraded mode even where namespaces work")

	// Limits.
	fs.Var(sizeFlag{&p.Memory}, "memory", "memory limit, e.g. 512M (no swap beyond it)")
	fs.Float64Var(&p.CPUs, "cpus", 0, "CPU quota in CPUs, e.g. 0.5")
	fs.Int64Var(&p.Pids, "pids", 1024, "maximum number of processes")
	fs.Uint64Var(&p.NoFile, "nofile", 0, "maximum open files per process")
	fs.DurationVar(&p.Timeout, "timeout", 0, "wall-clock limit, e.g. 30s or 10m (exit 124)")
	fs.BoolVar(&p.RequireLimits, "require-limits", false, "fail (exit 125) when limits can only be approximated with rlimits")

	// Network.
	fs.StringVar(&p.Net, "net", "", "network: none (default), allow (with --allow-*), host (no isolation)")
	list(&p.AllowDomain, "allow-domain", "allow egress to PATTERN[:PORT] (example.com, *.example.com; repeatable)")
	list(&p.DenyDomain, "deny-domain", "refuse PATTERN even if allowed (repeatable)")
	list(&p.AllowIP, "allow-ip", "allow egress to CIDR[:PORT] (repeatable)")
	list(&p.AddHost, "add-host", "resolve NAME to IP on the host side (repeatable)")
	list(&p.AllowHostPort, "allow-host-port", "reach the host's loopback PORT as host.jail.internal:PORT (repeatable)")
	list(&p.Publish, "publish", "publish [HOSTIP:]HOSTPORT:PORT of a server inside (repeatable)")
	fs.BoolVar(&p.AllowLocalTCP, "allow-local-tcp", false, "with --net none: allow TCP on the sandbox's own loopback")
	fs.BoolVar(&p.ForceProxyAware, "x-force-proxy-aware", false, "testing: use the proxy-aware fallback instead of TPROXY")

	// Terminal.
	list(&p.AllowTerminal, "allow-terminal", "let CLASS of terminal sequences reach your terminal: clipboard, hyperlinks, notify, colors, cwd, or all (repeatable)")

	// Audit.
	fs.StringVar(&p.AuditFile, "audit", "", "write the audit trail to FILE (default ~/.local/state/jail/audit/)")
	fs.BoolVar(&p.AuditSyslog, "audit-syslog", false, "also send audit events to syslog/the journal")
	fs.Var(sizeFlag{&p.AuditMaxSize}, "audit-max-size", "the trail's size budget; past it events are counted, not written (default 64M)")
	for short, long := range shortNames {
		f := fs.Lookup(long)
		fs.Var(f.Value, short, f.Usage)
	}
	return fs
}

var shortNames = map[string]string{"w": "write", "r": "read", "p": "publish"}
