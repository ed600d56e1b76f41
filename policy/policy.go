// Package policy is the user's intent for one sandbox: what the agent may read and
// write, its environment, limits, network and audit settings. It is plain data,
// validated here once, with defaults applied, and serialised as-is into the audit
// trail's start event. It does no kernel work; the sandbox package turns a Policy
// into mounts, rules and limits.
package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ErrInvalid marks a policy the user must fix; the CLI exits 125 with the message.
var ErrInvalid = errors.New("invalid policy")

// Policy is everything the user asked for. Paths are as given; Resolve turns them
// into absolute, symlink-free host paths.
type Policy struct {
	Command []string `json:"command"`
	// Workspace is the working directory, writable unless ReadOnly.
	Workspace string   `json:"workspace"`
	ReadOnly  bool     `json:"read_only,omitempty"`
	Write     []string `json:"write,omitempty"`
	Read      []string `json:"read,omitempty"`
	Deny      []string `json:"deny,omitempty"`

	NoDefaultDeny   bool  `json:"no_default_deny,omitempty"`
	AllowGitConfig  bool  `json:"allow_git_config,omitempty"`
	MaxFileSize     int64 `json:"max_file_size,omitempty"`
	RequireLandlock int   `json:"require_landlock,omitempty"`
	// LandlockMaxABI caps the Landlock ABI used (testing: simulates an older
	// kernel); 0 means the kernel's own.
	LandlockMaxABI int `json:"landlock_max_abi,omitempty"`

	// Env holds host variable names passed through; SetEnv NAME=VALUE pairs.
	Env    []string `json:"env,omitempty"`
	SetEnv []string `json:"setenv,omitempty"`

	TmpSize  int64  `json:"tmp_size"`
	Hostname string `json:"hostname"`

	// Seccomp.
	SeccompFile    string   `json:"seccomp_file,omitempty"`
	AllowPtrace    bool     `json:"allow_ptrace,omitempty"`
	BlockCommand   []string `json:"block_command,omitempty"`
	NoExecAudit    bool     `json:"no_exec_audit,omitempty"`
	NoGuardRails   bool     `json:"no_guard_rails,omitempty"`
	SeccompReplace bool     `json:"seccomp_replace,omitempty"`
	// RequireExecAudit makes a host without seccomp user notification
	// (WSL2, a nested sandbox: EBUSY) a setup error instead of a run
	// without exec audit and guard rail.
	RequireExecAudit bool `json:"require_exec_audit,omitempty"`
	// SimulateNotifyBusy makes the exec filter's install fail with EBUSY
	// (testing: the WSL2 path on any host).
	SimulateNotifyBusy bool `json:"simulate_notify_busy,omitempty"`

	// Degraded lets jail run without namespaces where the host refuses
	// them (containers, CI jobs, another sandbox): Landlock, seccomp,
	// no_new_privs and rlimits only, said loudly. ForceDegraded runs so
	// even where namespaces work (testing).
	Degraded      bool `json:"degraded,omitempty"`
	ForceDegraded bool `json:"force_degraded,omitempty"`

	// Limits.
	Memory        int64         `json:"memory,omitempty"`
	CPUs          float64       `json:"cpus,omitempty"`
	Pids          int64         `json:"pids"`
	NoFile        uint64        `json:"nofile,omitempty"`
	Timeout       time.Duration `json:"timeout,omitempty"`
	KillGrace     time.Duration `json:"kill_grace"`
	RequireLimits bool          `json:"require_limits,omitempty"`

	// Network.
	Net             string   `json:"net"`
	AllowDomain     []string `json:"allow_domain,omitempty"`
	DenyDomain      []string `json:"deny_domain,omitempty"`
	AllowIP         []string `json:"allow_ip,omitempty"`
	AddHost         []string `json:"add_host,omitempty"`
	AllowHostPort   []string `json:"allow_host_port,omitempty"`
	Publish         []string `json:"publish,omitempty"`
	ForceProxyAware bool     `json:"force_proxy_aware,omitempty"`
	// AllowLocalTCP lifts Landlock's TCP bind/connect denial under --net none
	// (servers on the sandbox's own loopback, e.g. a test suite's).
	AllowLocalTCP bool `json:"allow_local_tcp,omitempty"`

	// Terminal: classes of host-affecting sequences (clipboard, hyperlinks,
	// notify, colors, cwd, all; see package termfilter) that the terminal
	// relay lets through. Everything else that reaches beyond the screen is
	// dropped.
	AllowTerminal []string `json:"allow_terminal,omitempty"`

	// Audit.
	AuditFile   string `json:"audit_file,omitempty"`
	AuditSyslog bool   `json:"audit_syslog,omitempty"`
	// AuditMaxSize is the trail's size budget in bytes: past it events are
	// counted, not written, so an agent cannot fill the host's disk
	// through jail (--audit-max-size).
	AuditMaxSize int64 `json:"audit_max_size"`

	Quiet   bool `json:"-"`
	Verbose bool `json:"-"`
	DryRun  bool `json:"-"`
}

// Network modes.
const (
	NetNone  = "none"
	NetAllow = "allow"
	NetHost  = "host"
)

// Default returns a policy with the documented defaults.
func Default() Policy {
	return Policy{
		TmpSize:   1 << 30,
		Hostname:  "jail",
		Pids:      1024,
		KillGrace: 5 * time.Second,
		Net:       NetNone,

		AuditMaxSize: DefaultAuditMaxSize,
	}
}

// DefaultAuditMaxSize is the default size budget of one run's trail: room
// for about 150,000 exec events.
const DefaultAuditMaxSize = 64 << 20

// MinAuditMaxSize is the smallest budget accepted: the start event alone
// can take tens of KiB.
const MinAuditMaxSize = 1 << 20

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

// Validate checks the policy for contradictions a user must fix, and fills in
// what follows from other fields (e.g. --allow-domain implies --net allow).
func (p *Policy) Validate() error {
	if len(p.Command) == 0 {
		return invalid("no command given: usage is jail [flags] -- COMMAND [ARG...]")
	}
	allowRules := len(p.AllowDomain) + len(p.AllowIP) + len(p.AllowHostPort) + len(p.Publish)
	switch p.Net {
	case "":
		p.Net = NetNone
		if allowRules > 0 {
			p.Net = NetAllow
		}
	case NetNone, NetHost:
		if allowRules > 0 || len(p.DenyDomain) > 0 {
			return invalid("--net %s cannot be combined with --allow-domain/--allow-ip/--allow-host-port/--publish; use --net allow or drop --net", p.Net)
		}
	case NetAllow:
	default:
		return invalid("--net %q: want none, allow or host", p.Net)
	}
	if p.RequireExecAudit && p.NoExecAudit {
		return invalid("--require-exec-audit cannot be combined with --no-exec-audit")
	}
	if p.TmpSize <= 0 {
		return invalid("--tmp-size must be positive")
	}
	if p.AuditMaxSize < MinAuditMaxSize {
		return invalid("--audit-max-size must be at least 1M (the trail's size budget; default 64M)")
	}
	if p.Pids < 0 || p.Memory < 0 || p.CPUs < 0 || p.Timeout < 0 || p.KillGrace < 0 || p.MaxFileSize < 0 {
		return invalid("limits must not be negative")
	}
	for _, kv := range p.SetEnv {
		if i := strings.IndexByte(kv, '='); i <= 0 {
			return invalid("--setenv %q: want NAME=VALUE", kv)
		}
	}
	for _, n := range p.Env {
		if n == "" || strings.ContainsAny(n, "=\x00") {
			return invalid("--env %q: want a variable NAME", n)
		}
	}
	return nil
}

// ResolvePath makes a user-given path absolute (relative to base) and resolves
// symlinks on the host, once, at start: the sandbox then sees exactly that
// inode tree (a symlink swapped later cannot redirect a bind). flag names the
// option for the error message.
func ResolvePath(flag, base, p string) (string, error) {
	if p == "" {
		return "", invalid("%s: empty path", flag)
	}
	if strings.HasPrefix(p, "~/") || p == "~" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", invalid("%s %s: cannot expand ~: %v", flag, p, err)
		}
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", invalid("%s %s: no such file or directory (create it first, or drop the flag)", flag, p)
		}
		return "", fmt.Errorf("%w: %s %s: %v", ErrInvalid, flag, p, err)
	}
	return filepath.Clean(r), nil
}

// SafeEnvNames are the host variables that pass into the sandbox by default:
// terminal and locale settings only, never credentials.
var SafeEnvNames = []string{
	"PATH", "HOME", "TERM", "LANG", "LANGUAGE", "TZ", "USER", "LOGNAME", "SHELL",
	"COLORTERM", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "COLUMNS", "LINES", "EDITOR",
	"VISUAL", "PAGER", "TERM_PROGRAM", "TMPDIR",
}

// BuildEnv returns the agent's environment from the host's: the safe list, LC_*,
// names passed with --env, then --setenv assignments (which win).
func BuildEnv(host []string, pass, set []string) []string {
	allowed := map[string]bool{}
	for _, n := range SafeEnvNames {
		allowed[n] = true
	}
	for _, n := range pass {
		allowed[n] = true
	}
	vals := map[string]string{}
	for _, kv := range host {
		i := strings.IndexByte(kv, '=')
		if i <= 0 {
			continue
		}
		name := kv[:i]
		if allowed[name] || strings.HasPrefix(name, "LC_") {
			vals[name] = kv[i+1:]
		}
	}
	for _, kv := range set {
		i := strings.IndexByte(kv, '=')
		vals[kv[:i]] = kv[i+1:]
	}
	// TMPDIR must point into the sandbox's private /tmp, not a host path that
	// is hidden inside.
	if _, ok := vals["TMPDIR"]; ok && !containsName(set, "TMPDIR") {
		vals["TMPDIR"] = "/tmp"
	}
	if _, ok := vals["PATH"]; !ok {
		vals["PATH"] = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
	}
	out := make([]string, 0, len(vals))
	for k, v := range vals {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func containsName(kvs []string, name string) bool {
	for _, kv := range kvs {
		if strings.HasPrefix(kv, name+"=") {
			return true
		}
	}
	return false
}
