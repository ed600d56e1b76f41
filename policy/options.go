package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Kind is the type of an option's value.
type Kind int

// Option kinds. A List option is repeatable: every value is appended (once).
const (
	Bool Kind = iota + 1
	String
	Enum
	List
	Size
	Duration
	Int
	Uint
	Float
)

// Option is one user-settable field of the policy: the command-line flag
// --Name (and -Short), the config-file key Name, its help and its default.
// Options is the one table that parsing, Default, --help, completions, the
// man page, config files and profiles are all generated from, so they cannot
// disagree. The flag and the key are the same word with the same meaning.
type Option struct {
	Name        string   // long flag and config key
	Short       string   // one-letter flag, or ""
	Placeholder string   // what the value is, in help: PATH, SIZE, DURATION
	Kind        Kind     //
	Default     string   // the default as text, parsed by Set; "" is the zero value
	DefaultText string   // the default in words, where it is not a value
	Values      []string // the allowed values of an Enum or List (for checks, help and completion)
	Group       string   // help section
	Help        string   // one line, lower case, no trailing period
	Hidden      bool     // testing knobs: parsed, not listed
	Example     string   // a valid value, for errors and docs
	// field points at the Policy field the option sets.
	field func(*Policy) any
}

// Help groups, in the order --help prints them.
const (
	GroupFiles   = "Workspace and files"
	GroupEnv     = "Environment"
	GroupCommand = "Commands"
	GroupHost    = "Host"
	GroupLimits  = "Limits"
	GroupNet     = "Network"
	GroupAudit   = "Audit"
	GroupConfig  = "Configuration"
	GroupOutput  = "Output"
)

// Groups lists the help groups in order.
var Groups = []string{GroupFiles, GroupEnv, GroupCommand, GroupHost, GroupLimits, GroupNet, GroupAudit, GroupConfig, GroupOutput}

// Options is the table of every option, in help order within each group.
var Options = []Option{
	// Workspace and files.
	{Name: "workspace", Placeholder: "DIR", Kind: String, DefaultText: "the git top level of the current directory, else the current directory", Group: GroupFiles,
		Help: "the directory writable for the command unless --read-only", field: func(p *Policy) any { return &p.Workspace }},
	{Name: "write", Short: "w", Placeholder: "PATH", Kind: List, Group: GroupFiles, Example: "~/.cache/go-build",
		Help: "make PATH writable (repeatable; a symlink works at its own path)", field: func(p *Policy) any { return &p.Write }},
	{Name: "read", Short: "r", Placeholder: "PATH", Kind: List, Group: GroupFiles, Example: "~/.gitconfig",
		Help: "make a hidden PATH visible, read-only (repeatable; a symlink works at its own path)", field: func(p *Policy) any { return &p.Read }},
	{Name: "cache", Placeholder: "[NAME:]PATH", Kind: List, Group: GroupFiles, Example: "go:~/.cache/go-build",
		Help: "give PATH a persistent directory of jail's own, one per NAME (never the host's cache; repeatable)", field: func(p *Policy) any { return &p.Cache }},
	{Name: "host-caches", Kind: Bool, Group: GroupFiles,
		Help: "mount the host's own directories at the cache paths, writable (the host's next build uses what the sandbox left there)", field: func(p *Policy) any { return &p.HostCaches }},
	{Name: "read-only", Kind: Bool, Group: GroupFiles,
		Help: "make the workspace read-only too (only /tmp stays writable)", field: func(p *Policy) any { return &p.ReadOnly }},
	{Name: "deny", Placeholder: "PATTERN", Kind: List, Group: GroupFiles, Example: "secrets/**",
		Help: "make paths matching the glob unreadable and unwritable (repeatable; ** any depth)", field: func(p *Policy) any { return &p.Deny }},
	{Name: "no-default-deny", Kind: Bool, Group: GroupFiles,
		Help: "drop the built-in secret and write protections", field: func(p *Policy) any { return &p.NoDefaultDeny }},
	{Name: "no-default-deny-at", Placeholder: "PATH", Kind: List, Group: GroupFiles, Example: "testdata",
		Help: "drop the built-in protections at PATH and below, not git's (repeatable; a project's test keys and fixtures)", field: func(p *Policy) any { return &p.NoDefaultDenyAt }},
	{Name: "allow-git-config", Kind: Bool, Group: GroupFiles,
		Help: "trust the command with git: its config, hooks, commondir and .gitmodules writable, nothing git-related watched or quarantined", field: func(p *Policy) any { return &p.AllowGitConfig }},
	{Name: "allow-writable-home", Kind: Bool, Group: GroupFiles,
		Help: "let the workspace or a write path be $HOME or hold it (existing startup files stay read-only, absent ones are watched)", field: func(p *Policy) any { return &p.AllowWritableHome }},
	{Name: "end-if-unmasked", Kind: Bool, Group: GroupFiles,
		Help: "end the run when the host replaces a masked or read-only file during it (an editor's save of .env); by default that is said and the run goes on", field: func(p *Policy) any { return &p.EndIfUnmasked }},
	{Name: "max-file-size", Placeholder: "SIZE", Kind: Size, DefaultText: "none", Group: GroupFiles, Example: "1G",
		Help: "no file can grow beyond SIZE (writes fail with EFBIG)", field: func(p *Policy) any { return &p.MaxFileSize }},
	{Name: "tmp-size", Placeholder: "SIZE", Kind: Size, Default: "1G", Group: GroupFiles, Example: "1G",
		Help: "size cap of the private /tmp and other private tmpfs", field: func(p *Policy) any { return &p.TmpSize }},
	{Name: "require-landlock", Placeholder: "N", Kind: Int, DefaultText: "none", Group: GroupFiles, Example: "4",
		Help: "fail (exit 125) unless the kernel offers Landlock ABI N or newer", field: func(p *Policy) any { return &p.RequireLandlock }},
	{Name: "x-landlock-max-abi", Placeholder: "N", Kind: Int, Group: GroupFiles, Hidden: true, Example: "3",
		Help: "testing: use at most Landlock ABI N (simulates an older kernel)", field: func(p *Policy) any { return &p.LandlockMaxABI }},

	// Environment.
	{Name: "env", Placeholder: "NAME", Kind: List, Group: GroupEnv, Example: "GITHUB_TOKEN",
		Help: "pass the host variable NAME (repeatable; nothing else passes)", field: func(p *Policy) any { return &p.Env }},
	{Name: "setenv", Placeholder: "NAME=VALUE", Kind: List, Group: GroupEnv, Example: "CI=1",
		Help: "set NAME to VALUE inside (repeatable; the trail and --dry-run show the name only)", field: func(p *Policy) any { return &p.SetEnv }},
	{Name: "ssh-agent", Kind: Bool, Group: GroupEnv,
		Help: "let ssh inside sign with your ssh agent through jail's relay (listing and signing only; every request in the trail) and check host keys against a read-only copy of ~/.ssh/known_hosts, your Host aliases from one of ~/.ssh/config; the keys stay outside, but the command can sign with every key the agent holds", field: func(p *Policy) any { return &p.SSHAgent }},
	{Name: "hostname", Placeholder: "NAME", Kind: String, Default: "jail", Group: GroupEnv, Example: "jail",
		Help: "the hostname inside", field: func(p *Policy) any { return &p.Hostname }},

	// Commands: the programs shown, the seccomp filter and the exec guard rail.
	{Name: "runnable", Placeholder: "NAME", Kind: List, Group: GroupCommand, Example: "cargo",
		Help: "make the host's program NAME runnable inside where PATH finds it in $HOME: its install tree read-only, as the command's (repeatable; rustup's cargo, nvm's node)", field: func(p *Policy) any { return &p.Runnable }},
	{Name: "seccomp", Placeholder: "FILE", Kind: String, Group: GroupCommand, Example: "/etc/jail/seccomp.json",
		Help: "extend the seccomp filter with a JSON policy (go-seccomp-bpf format)", field: func(p *Policy) any { return &p.SeccompFile }},
	{Name: "seccomp-replace", Kind: Bool, Group: GroupCommand,
		Help: "with --seccomp: replace the built-in deny-list (the architecture check, the set-id rule, the network walls and the terminal ioctl rules stay)", field: func(p *Policy) any { return &p.SeccompReplace }},
	{Name: "allow-ptrace", Kind: Bool, Group: GroupCommand,
		Help: "allow ptrace between the sandbox's own processes (debuggers)", field: func(p *Policy) any { return &p.AllowPtrace }},
	{Name: "block-command", Placeholder: "REGEX", Kind: List, Group: GroupCommand, Example: "^git push",
		Help: "refuse execs whose command line matches REGEX (repeatable; a guard rail, not a boundary)", field: func(p *Policy) any { return &p.BlockCommand }},
	{Name: "no-guard-rails", Kind: Bool, Group: GroupCommand,
		Help: "drop the default guard-rail patterns (rm -rf /, mkfs, ...)", field: func(p *Policy) any { return &p.NoGuardRails }},
	{Name: "no-exec-audit", Kind: Bool, Group: GroupCommand,
		Help: "do not record every exec (no seccomp user notification)", field: func(p *Policy) any { return &p.NoExecAudit }},
	{Name: "require-exec-audit", Kind: Bool, Group: GroupCommand,
		Help: "fail (exit 125) where the exec audit is unavailable (WSL2, nested sandboxes)", field: func(p *Policy) any { return &p.RequireExecAudit }},
	{Name: "x-notify-ebusy", Kind: Bool, Group: GroupCommand, Hidden: true,
		Help: "testing: act as if seccomp user notification returned EBUSY (WSL2)", field: func(p *Policy) any { return &p.SimulateNotifyBusy }},
	{Name: "x-fork-init", Kind: Bool, Group: GroupHost, Hidden: true,
		Help: "testing: start init by a fork of jail, not by the lean init's own entry", field: func(p *Policy) any { return &p.ForkInit }},

	// Host: where namespaces are refused.
	{Name: "degraded", Kind: Bool, Group: GroupHost,
		Help: "where the host refuses namespaces (containers, CI, nested sandboxes), run with Landlock and seccomp only (weaker; see README)", field: func(p *Policy) any { return &p.Degraded }},
	{Name: "x-degraded", Kind: Bool, Group: GroupHost, Hidden: true,
		Help: "testing: run in degraded mode even where namespaces work", field: func(p *Policy) any { return &p.ForceDegraded }},

	// Limits.
	{Name: "memory", Placeholder: "SIZE", Kind: Size, DefaultText: "none", Group: GroupLimits, Example: "2G",
		Help: "memory limit, no swap beyond it", field: func(p *Policy) any { return &p.Memory }},
	{Name: "cpus", Placeholder: "N", Kind: Float, DefaultText: "none", Group: GroupLimits, Example: "0.5",
		Help: "CPU quota in CPUs, e.g. 0.5 or 2", field: func(p *Policy) any { return &p.CPUs }},
	{Name: "pids", Placeholder: "N", Kind: Int, Default: "1024", Group: GroupLimits, Example: "1024",
		Help: "maximum number of processes and threads", field: func(p *Policy) any { return &p.Pids }},
	{Name: "nofile", Placeholder: "N", Kind: Uint, DefaultText: "jail's default, capped at the hard limit", Group: GroupLimits, Example: "4096",
		Help: "maximum open files per process", field: func(p *Policy) any { return &p.NoFile }},
	{Name: "timeout", Placeholder: "DURATION", Kind: Duration, DefaultText: "none", Group: GroupLimits, Example: "30m",
		Help: "wall-clock limit, e.g. 30s or 10m (then exit 124)", field: func(p *Policy) any { return &p.Timeout }},
	{Name: "kill-grace", Placeholder: "DURATION", Kind: Duration, Default: "5s", Group: GroupLimits, Example: "5s",
		Help: "time between SIGTERM and SIGKILL", field: func(p *Policy) any { return &p.KillGrace }},
	{Name: "require-limits", Kind: Bool, Group: GroupLimits,
		Help: "fail (exit 125) when limits can only be approximated with rlimits", field: func(p *Policy) any { return &p.RequireLimits }},

	// Network.
	{Name: "net", Placeholder: "MODE", Kind: Enum, Values: []string{NetNone, NetAllow, NetHost}, Group: GroupNet, Example: NetAllow,
		DefaultText: "none; allow when an allow rule is given",
		Help:        "network: none (loopback only), allow (the allow rules), host (no isolation)", field: func(p *Policy) any { return &p.Net }},
	{Name: "allow-domain", Placeholder: "PATTERN[:PORT]", Kind: List, Group: GroupNet, Example: "api.example.com",
		Help: "allow egress to a host name or *.domain (repeatable)", field: func(p *Policy) any { return &p.AllowDomain }},
	{Name: "deny-domain", Placeholder: "PATTERN[:PORT]", Kind: List, Group: GroupNet, Example: "upload.example.com",
		Help: "refuse PATTERN even if allowed (repeatable)", field: func(p *Policy) any { return &p.DenyDomain }},
	{Name: "allow-ip", Placeholder: "CIDR[:PORT]", Kind: List, Group: GroupNet, Example: "192.0.2.0/24:443",
		Help: "allow egress to addresses (repeatable)", field: func(p *Policy) any { return &p.AllowIP }},
	{Name: "add-host", Placeholder: "NAME:IP", Kind: List, Group: GroupNet, Example: "db.internal:192.0.2.7",
		Help: "resolve NAME to IP on the host side (repeatable)", field: func(p *Policy) any { return &p.AddHost }},
	{Name: "allow-host-port", Placeholder: "PORT", Kind: List, Group: GroupNet, Example: "5432",
		Help: "reach the host's loopback PORT inside at 127.0.0.1:PORT and as host.jail.internal:PORT (repeatable)", field: func(p *Policy) any { return &p.AllowHostPort }},
	{Name: "publish", Short: "p", Placeholder: "[IP:]HOSTPORT:PORT", Kind: List, Group: GroupNet, Example: "8080:3000",
		Help: "publish a server inside on the host's 127.0.0.1:HOSTPORT (repeatable)", field: func(p *Policy) any { return &p.Publish }},
	{Name: "publish-if-free", Placeholder: "[IP:]HOSTPORT:PORT", Kind: List, Group: GroupNet, Example: "1455:1455",
		Help: "like --publish, but when HOSTPORT is taken run without it, with a notice (repeatable)", field: func(p *Policy) any { return &p.PublishIfFree }},
	{Name: "no-local-tcp", Kind: Bool, Group: GroupNet,
		Help: "with --net none: no TCP at all, not even on the sandbox's own loopback (test servers fail)", field: func(p *Policy) any { return &p.NoLocalTCP }},
	{Name: "allow-local-tcp", Kind: Bool, Group: GroupNet,
		Help: "TCP on the sandbox's own loopback (the default; see --no-local-tcp)", field: func(p *Policy) any { return &p.AllowLocalTCP }},
	{Name: "x-force-proxy-aware", Kind: Bool, Group: GroupNet, Hidden: true,
		Help: "testing: use the proxy-aware fallback instead of TPROXY", field: func(p *Policy) any { return &p.ForceProxyAware }},

	// Audit.
	{Name: "audit", Placeholder: "FILE", Kind: String, DefaultText: "~/.local/state/jail/audit/TIME-ID.jsonl", Group: GroupAudit, Example: "/var/log/jail/run.jsonl",
		Help: "write the audit trail to FILE", field: func(p *Policy) any { return &p.AuditFile }},
	{Name: "audit-syslog", Kind: Bool, Group: GroupAudit,
		Help: "also send audit events to syslog or the journal", field: func(p *Policy) any { return &p.AuditSyslog }},
	{Name: "audit-max-size", Placeholder: "SIZE", Kind: Size, Default: "64M", Group: GroupAudit, Example: "64M",
		Help: "the trail's size budget; past it events are counted, not written", field: func(p *Policy) any { return &p.AuditMaxSize }},
	{Name: "audit-max-age", Placeholder: "DURATION", Kind: Duration, Default: "720h", Group: GroupAudit, Example: "168h",
		Help: "at start, remove trails of the audit directory last written longer ago (0: no bound; a trail being written stays)", field: func(p *Policy) any { return &p.AuditMaxAge }},
	{Name: "audit-max-total", Placeholder: "SIZE", Kind: Size, Default: "1G", Group: GroupAudit, Example: "1G",
		Help: "then remove its oldest trails until the audit directory holds at most SIZE (0: no bound)", field: func(p *Policy) any { return &p.AuditMaxTotal }},

	// Configuration: what the readers expand into the other options.
	{Name: "profile", Short: "P", Placeholder: "NAME", Kind: List, Group: GroupConfig, Example: "example",
		Help: "apply a profile (repeatable; see jail profiles)", field: func(p *Policy) any { return &p.Profile }},
	{Name: "settings", Placeholder: "FILE", Kind: List, Group: GroupConfig, Example: "~/.srt-settings.json",
		Help: "read sandbox-runtime or Claude Code sandbox settings (JSON)", field: func(p *Policy) any { return &p.Settings }},

	// Output.
	{Name: "allow-terminal", Placeholder: "CLASS", Kind: List, Values: []string{"clipboard", "hyperlinks", "notify", "colors", "cwd", "all"}, Group: GroupOutput, Example: "hyperlinks",
		Help: "let CLASS of terminal sequences reach your terminal: clipboard, hyperlinks, notify, colors, cwd, or all (repeatable, or comma-separated)", field: func(p *Policy) any { return &p.AllowTerminal }},
	{Name: "dry-run", Kind: Bool, Group: GroupOutput,
		Help: "print the effective plan (every mount, mask and rule) and exit", field: func(p *Policy) any { return &p.DryRun }},
	{Name: "quiet", Kind: Bool, Group: GroupOutput,
		Help: "no notices on stderr", field: func(p *Policy) any { return &p.Quiet }},
	{Name: "verbose", Short: "v", Kind: Bool, Group: GroupOutput,
		Help: "report enforcement and print an exit summary", field: func(p *Policy) any { return &p.Verbose }},
}

// Lookup returns the option with the given long name, or nil.
func Lookup(name string) *Option {
	for i := range Options {
		if Options[i].Name == name {
			return &Options[i]
		}
	}
	return nil
}

// Default returns a policy with the documented defaults: every option's
// Default, from the table.
func Default() Policy {
	var p Policy
	for i := range Options {
		o := &Options[i]
		if o.Default == "" {
			continue
		}
		if err := o.Set(&p, o.Default); err != nil {
			panic("policy: bad default for " + o.Name + ": " + err.Error()) // caught by tests
		}
	}
	return p
}

// Set parses text and stores it in p: a List option appends (skipping a value
// already present), any other replaces. Errors are *FieldError naming the
// option and the value.
func (o *Option) Set(p *Policy, text string) error {
	bad := func(err error) error {
		reason := err.Error()
		if o.Example != "" && (err == errWholeNum || err == errNumber) {
			reason += ", e.g. " + o.Example
		}
		return &FieldError{Key: o.Name, Value: text, Reason: reason}
	}
	switch v := o.field(p).(type) {
	case *bool:
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		if err != nil {
			return bad(errBool)
		}
		*v = b
	case *string:
		// An empty enum is its default ("" for net: decided by the rules).
		if o.Kind == Enum && !slices.Contains(o.Values, text) && (text != "" || o.Default != "") {
			return bad(fmt.Errorf("want %s", orList(o.Values)))
		}
		*v = text
	case *[]string:
		// A list with Values takes those only (comma-separated allowed).
		for _, part := range strings.Split(text, ",") {
			if len(o.Values) > 0 && !slices.Contains(o.Values, strings.TrimSpace(part)) {
				return bad(fmt.Errorf("want %s", orList(o.Values)))
			}
		}
		if !slices.Contains(*v, text) {
			*v = append(*v, text)
		}
	case *int64:
		n, err := o.parseInt(text)
		if err != nil {
			return bad(err)
		}
		*v = n
	case *int:
		n, err := o.parseInt(text)
		if err != nil {
			return bad(err)
		}
		*v = int(n)
	case *uint64:
		n, err := strconv.ParseUint(strings.TrimSpace(text), 10, 64)
		if err != nil {
			return bad(errWholeNum)
		}
		*v = n
	case *float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil || f != f || f > 1e6 || f < -1e6 {
			return bad(errNumber)
		}
		*v = f
	case *time.Duration:
		d, err := ParseDuration(text)
		if err != nil {
			return bad(err)
		}
		*v = d
	default:
		panic(fmt.Sprintf("policy: option %s has field type %T", o.Name, v))
	}
	return nil
}

func (o *Option) parseInt(text string) (int64, error) {
	if o.Kind == Size {
		return ParseSize(text)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
	if err != nil {
		return 0, errWholeNum
	}
	return n, nil
}

// Format returns the option's value in p as text that Set reads back: one
// element per list entry, one element otherwise.
func (o *Option) Format(p *Policy) []string {
	switch v := o.field(p).(type) {
	case *bool:
		return []string{strconv.FormatBool(*v)}
	case *string:
		return []string{*v}
	case *[]string:
		return slices.Clone(*v)
	case *int64:
		if o.Kind == Size {
			return []string{FormatSize(*v)}
		}
		return []string{strconv.FormatInt(*v, 10)}
	case *int:
		return []string{strconv.Itoa(*v)}
	case *uint64:
		return []string{strconv.FormatUint(*v, 10)}
	case *float64:
		return []string{strconv.FormatFloat(*v, 'g', -1, 64)}
	case *time.Duration:
		return []string{FormatDuration(*v)}
	}
	panic("policy: option " + o.Name + " has an unknown field type")
}

// IsDefault reports whether p holds the option's default.
func (o *Option) IsDefault(p *Policy) bool {
	d := Default()
	return slices.Equal(o.Format(p), o.Format(&d))
}

// Reset sets the option in p back to its default (a list to empty).
func (o *Option) Reset(p *Policy) {
	d := Default()
	switch v := o.field(p).(type) {
	case *[]string:
		*v = nil
	default:
		_ = o.Set(p, o.Format(&d)[0])
	}
}

// String is the option as a flag.
func (o *Option) String() string { return "--" + o.Name }

func orList(vs []string) string {
	switch len(vs) {
	case 0:
		return ""
	case 1:
		return vs[0]
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " or " + vs[len(vs)-1]
}

// Nearest is the name of names closest to name, at most 2 edits away (the
// first of equals), "" for none: the "did you mean" of a mistyped flag or
// config key.
func Nearest(name string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := distance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// distance is the Levenshtein distance of two short strings.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
