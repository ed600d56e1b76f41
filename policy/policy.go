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

// File is one of Policy.Files.
type File struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Why     string `json:"why,omitempty"`
}

// Bounds of Policy.Files: a tool's configuration, not a way to ship data.
const (
	MaxFiles       = 16
	MaxFileContent = 64 << 10
)

// Policy is everything the user asked for. Paths are as given; Resolve turns them
// into absolute, symlink-free host paths.
type Policy struct {
	Command []string `json:"command"`
	// Name names a session (jail run -d --name): a long-lived sandbox that
	// jail exec, stop, kill, logs and inspect reach by it; unique among the
	// user's running sandboxes. Empty for a plain run.
	Name string `json:"name,omitempty"`
	// Workspace is writable unless ReadOnly. Empty: the top level of the
	// git work tree Cwd is in, else Cwd (the sandbox decides, and says so).
	Workspace string `json:"workspace"`
	// WorkspaceFromCwd says Workspace was chosen by jail's readers from
	// Cwd (package config: a trusted project holding the current
	// directory, narrower than its git work tree), not by the user: Cwd's
	// links are then checked as with no Workspace. Why: a symlink a
	// sandboxed command planted, leading into such a project, would
	// otherwise choose the writable workspace unchecked (review15b).
	WorkspaceFromCwd bool `json:"workspace_from_cwd,omitempty"`
	// Cwd is where the command starts: the directory jail was started in.
	// Outside the workspace, the command starts in the workspace. Empty:
	// the process's, $PWD as the shell keeps it when it names that
	// directory (os.Getwd). Without Workspace, a Cwd named through a
	// symlink that lies in a git work tree (or a Write path) and leads out
	// of that tree is refused: a sandboxed command can point such a link at
	// another project, which would become the writable workspace. A Cwd
	// given here is the caller's choice and checked all the same (it may be
	// a path a user typed); give the resolved path, or set Workspace.
	Cwd      string   `json:"cwd,omitempty"`
	ReadOnly bool     `json:"read_only,omitempty"`
	Write    []string `json:"write,omitempty"`
	Read     []string `json:"read,omitempty"`
	Deny     []string `json:"deny,omitempty"`
	// Cache lists "[NAME:]PATH": a persistent directory of jail's own (per
	// user and NAME, see statedir.CacheFrom) mounted writable at PATH, so a
	// tool keeps its cache across runs without the sandbox writing the
	// host's: a cache shared with the host is a way back out (an object the
	// agent plants in the Go build cache is linked into the host's next
	// build; npm and pip caches are poisoned the same way). HostCaches mounts
	// the host's own directories there instead, writable (the user's
	// explicit choice; README prices it).
	Cache      []string `json:"cache,omitempty"`
	HostCaches bool     `json:"host_caches,omitempty"`

	NoDefaultDeny bool `json:"no_default_deny,omitempty"`
	// NoDefaultDenyAt lifts the built-in protections other than git's at
	// these paths and below (a repository's test keys and fixtures): the
	// rest keep them. Each must exist inside the workspace or a Write or
	// Read path, and be reached with no symlink a sandbox could have
	// pointed elsewhere.
	NoDefaultDenyAt []string `json:"no_default_deny_at,omitempty"`
	AllowGitConfig  bool     `json:"allow_git_config,omitempty"`
	// AllowWritableHome lets the workspace or a --write path be the home
	// directory or hold it (refused by default: startup files live there).
	AllowWritableHome bool `json:"allow_writable_home,omitempty"`
	// EndIfUnmasked ends the run when the host takes one of the sandbox's
	// masks, read-only binds or pins away (package maskwatch); by default
	// that is said and the run goes on.
	EndIfUnmasked   bool  `json:"end_if_unmasked,omitempty"`
	MaxFileSize     int64 `json:"max_file_size,omitempty"`
	RequireLandlock int   `json:"require_landlock,omitempty"`
	// LandlockMaxABI caps the Landlock ABI used (testing: simulates an older
	// kernel); 0 means the kernel's own.
	LandlockMaxABI int `json:"landlock_max_abi,omitempty"`

	// Env holds host variable names passed through; SetEnv NAME=VALUE pairs.
	Env    []string `json:"env,omitempty"`
	SetEnv []string `json:"setenv,omitempty"`
	// SSHAgent passes the host's ssh agent: SSH_AUTH_SOCK and its socket
	// (read), and a copy of ~/.ssh/known_hosts (Files); the sandbox adds
	// them to Env, Read and Files at its check (sandbox's sshagent.go).
	SSHAgent bool `json:"ssh_agent,omitempty"`
	// Files are read-only files placed inside where the sandbox's own
	// home shows nothing of the host's (package toolreg: Maven's
	// ~/.m2/settings.xml, hidden because it may hold passwords, placed as
	// a copy of its mirrors and repositories only). Where the run shows
	// the host's place (a read or write path holds it), the host's file
	// stays and the copy is not placed.
	Files []File `json:"files,omitempty"`

	TmpSize  int64  `json:"tmp_size"`
	Hostname string `json:"hostname"`

	// Runnable names programs made runnable inside where the host's PATH
	// finds them in a hidden place ($HOME): each one's install tree
	// read-only, as for the command (a toolchain profile's cargo under
	// rustup, which the agent runs).
	Runnable []string `json:"runnable,omitempty"`

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
	// ForkInit starts init the old way, by a fork of the supervisor, even
	// where the lean init's entry could start it (testing: both paths).
	ForkInit bool `json:"fork_init,omitempty"`

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
	Net           string   `json:"net"`
	AllowDomain   []string `json:"allow_domain,omitempty"`
	DenyDomain    []string `json:"deny_domain,omitempty"`
	AllowIP       []string `json:"allow_ip,omitempty"`
	AddHost       []string `json:"add_host,omitempty"`
	AllowHostPort []string `json:"allow_host_port,omitempty"`
	Publish       []string `json:"publish,omitempty"`
	// Refused are host names (normalized) the profiles' programs reach
	// for and do without, each with what the program does without it
	// (a profile's [refused]): their refusal says that instead of the
	// flag that would allow them. They allow nothing.
	Refused map[string]string `json:"refused,omitempty"`
	// PublishIfFree are published like Publish when the host port is free;
	// a taken one (another sandbox's sign-in callback) is left out with a
	// notice instead of failing the start.
	PublishIfFree   []string `json:"publish_if_free,omitempty"`
	ForceProxyAware bool     `json:"force_proxy_aware,omitempty"`
	// NoLocalTCP forbids TCP on the sandbox's own loopback under --net none
	// (Landlock denies every TCP bind and connect). By default it works:
	// test servers (httptest, dev servers) need it, and the sandbox's
	// network namespace reaches nothing of the host's.
	NoLocalTCP bool `json:"no_local_tcp,omitempty"`
	// AllowLocalTCP asks for what is now the default (kept so that command
	// lines and settings that say it keep working).
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
	// Retention of the trails in jail's audit directory, applied at each
	// start: trails last written longer ago than AuditMaxAge are removed,
	// then the oldest until the rest fit in AuditMaxTotal bytes; a trail
	// still being written never is (--audit-max-age, --audit-max-total;
	// 0 = no bound).
	AuditMaxAge   time.Duration `json:"audit_max_age"`
	AuditMaxTotal int64         `json:"audit_max_total"`

	// Profile and Settings name what the policy was read from; the readers
	// (package config) have already merged them into the fields above.
	Profile  []string `json:"profile,omitempty"`
	Settings []string `json:"settings,omitempty"`
	// PolicyFiles are the files the readers read this policy from (the
	// user's config, --config, settings files; not a trusted project
	// file, whose trust covers its bytes), besides SeccompFile. The
	// sandbox makes the ones inside a writable tree read-only for the
	// run: the next run reads them again, and an agent that rewrote one
	// (allowWrite, allowedDomains) would widen that run (policyfiles).
	PolicyFiles []PolicyFile `json:"policy_files,omitempty"`

	Quiet   bool `json:"-"`
	Verbose bool `json:"-"`
	DryRun  bool `json:"-"`

	// Notices are one-line messages from the readers (an unset --env name, a
	// created profile path) for the supervisor's notice channel.
	Notices []string `json:"-"`
	// ProfileHints are the profiles named like the command that the run
	// does not apply (jail -- claude, no -P claude), with the names they
	// allow: a refusal of one says that the profile would allow it.
	ProfileHints []ProfileHint `json:"-"`
	// RegistryHints, when set, names the toolchain profiles the run does
	// not apply whose registries (registries = ["npm"]) include one of
	// tools, each with the hosts the host's configuration of that tool
	// names (package toolreg) as its Domains. The supervisor asks it at
	// the end of a run that refused a name and ran one of the tools
	// (toolreg.ToolOf), and says which profile would have allowed the
	// name. It may run the tools on the host (toolreg.Resolve).
	RegistryHints func(tools []string) []ProfileHint `json:"-"`
}

// ProfileHint is one profile the run could apply and the allow-domain
// patterns it holds.
type ProfileHint struct {
	Profile string
	Domains []string
	// Tool is the tool whose registries Domains are (a RegistryHints
	// answer: "npm"), "" for a profile's own allow-domain patterns.
	Tool string
	// Caches reports that the profile keeps caches of jail's own (cache =
	// [...]).
	Caches bool
}

// PolicyFile is a file a policy was read from, and what named it ("--settings",
// "--config", "settings in ~/.config/jail/config.toml").
type PolicyFile struct {
	Path string `json:"path"` // absolute
	From string `json:"from"`
}

// Network modes.
const (
	NetNone  = "none"
	NetAllow = "allow"
	NetHost  = "host"
)

// DefaultAuditMaxSize is the default size budget of one run's trail: room
// for about 150,000 exec events (the audit-max-size option's default says
// the same; a test keeps them equal).
const DefaultAuditMaxSize = 64 << 20

// Default retention of the audit directory (the audit-max-age and
// audit-max-total options' defaults say the same; a test keeps them equal).
const (
	DefaultAuditMaxAge   = 30 * 24 * time.Hour
	DefaultAuditMaxTotal = 1 << 30
)

// MinAuditMaxSize is the smallest budget accepted: the start event alone
// can take tens of KiB.
const MinAuditMaxSize = 1 << 20

// Validate checks the policy for contradictions a user must fix, and fills in
// what follows from other fields (e.g. an allow rule implies net allow).
func (p *Policy) Validate() error {
	if len(p.Command) == 0 {
		return invalid("no command given: usage is jail [flags] -- COMMAND [ARG...]")
	}
	return p.Check()
}

// Check is Validate without the command: the options alone.
func (p *Policy) Check() error {
	// The first allow rule, to name it in a conflict.
	var ruleKey, ruleVal string
	for _, r := range []struct {
		key  string
		vals []string
	}{{"allow-domain", p.AllowDomain}, {"allow-ip", p.AllowIP}, {"allow-host-port", p.AllowHostPort}, {"publish", p.Publish}, {"publish-if-free", p.PublishIfFree}, {"deny-domain", p.DenyDomain}} {
		if len(r.vals) > 0 && ruleKey == "" {
			ruleKey, ruleVal = r.key, r.vals[0]
		}
	}
	switch p.Net {
	case "":
		p.Net = NetNone
		if ruleKey != "" && ruleKey != "deny-domain" {
			p.Net = NetAllow
		}
	case NetNone, NetHost:
		// deny-domain alone under none changes nothing (nothing is allowed),
		// which keeps Check idempotent: "" with only deny rules becomes none.
		if ruleKey != "" && (ruleKey != "deny-domain" || p.Net == NetHost) {
			return &ConflictError{Key1: "net", Value1: p.Net, Key2: ruleKey, Value2: ruleVal,
				Reason: "rules need `net` allow; drop the `net` setting, or the rule"}
		}
	case NetAllow:
	default:
		return &FieldError{Key: "net", Value: p.Net, Reason: "want none, allow or host"}
	}
	if p.NoLocalTCP && p.AllowLocalTCP {
		return &ConflictError{Key1: "no-local-tcp", Key2: "allow-local-tcp", Reason: "TCP on the sandbox's loopback cannot be both refused and allowed: drop one of the two"}
	}
	for _, c := range p.Cache {
		if _, _, err := ParseCache(c); err != nil {
			return err
		}
	}
	if p.RequireExecAudit && p.NoExecAudit {
		return &ConflictError{Key1: "require-exec-audit", Key2: "no-exec-audit", Reason: "the exec audit cannot be both required and off: drop one of the two"}
	}
	if p.TmpSize <= 0 {
		return &FieldError{Key: "tmp-size", Value: FormatSize(p.TmpSize), Reason: "must be positive, e.g. 1G"}
	}
	if p.AuditMaxSize < MinAuditMaxSize {
		return &FieldError{Key: "audit-max-size", Value: FormatSize(p.AuditMaxSize), Reason: "at least 1M: the trail's size budget (default 64M)"}
	}
	if p.AuditMaxAge < 0 {
		return &FieldError{Key: "audit-max-age", Value: p.AuditMaxAge.String(), Reason: "must not be negative (0 keeps trails of any age)"}
	}
	if p.AuditMaxTotal < 0 {
		return &FieldError{Key: "audit-max-total", Value: fmt.Sprint(p.AuditMaxTotal), Reason: "must not be negative (0: no bound)"}
	}
	for _, n := range []struct {
		key string
		neg bool
		val string
	}{
		{"pids", p.Pids < 0, fmt.Sprint(p.Pids)},
		{"memory", p.Memory < 0, fmt.Sprint(p.Memory)},
		{"cpus", p.CPUs < 0, fmt.Sprint(p.CPUs)},
		{"timeout", p.Timeout < 0, p.Timeout.String()},
		{"kill-grace", p.KillGrace < 0, p.KillGrace.String()},
		{"max-file-size", p.MaxFileSize < 0, fmt.Sprint(p.MaxFileSize)},
	} {
		if n.neg {
			return &FieldError{Key: n.key, Value: n.val, Reason: "limits must not be negative"}
		}
	}
	// What cgroup would refuse later, refused here where the reader can
	// still say where the value came from.
	if p.Memory > 0 && p.Memory < 1<<20 {
		return &FieldError{Key: "memory", Value: FormatSize(p.Memory), Reason: "below 1M nothing can run; use e.g. 64M or more"}
	}
	if p.CPUs > 0 && p.CPUs < 0.01 {
		return &FieldError{Key: "cpus", Value: fmt.Sprint(p.CPUs), Reason: "below 0.01, the kernel's smallest quota; use e.g. 0.5"}
	}
	for _, kv := range p.SetEnv {
		if i := strings.IndexByte(kv, '='); i <= 0 {
			return &FieldError{Key: "setenv", Value: kv, Reason: "want NAME=VALUE"}
		}
	}
	if len(p.Files) > MaxFiles {
		return &FieldError{Key: "files", Value: fmt.Sprint(len(p.Files)), Reason: fmt.Sprintf("at most %d files", MaxFiles)}
	}
	for _, f := range p.Files {
		if !filepath.IsAbs(f.Path) || filepath.Clean(f.Path) != f.Path || f.Path == "/" {
			return &FieldError{Key: "files", Value: f.Path, Reason: "want an absolute, clean path of a file"}
		}
		if len(f.Content) > MaxFileContent {
			return &FieldError{Key: "files", Value: f.Path, Reason: fmt.Sprintf("content over %d bytes", MaxFileContent)}
		}
	}
	for _, n := range p.Env {
		if n == "" || strings.ContainsAny(n, "=\x00") {
			return &FieldError{Key: "env", Value: n, Reason: "want a variable NAME (set values with `setenv`)"}
		}
	}
	for _, n := range p.Runnable {
		// A name, looked up on PATH as execvp would: a path would be a
		// --read of its directory under another name.
		if n == "" || n == "." || n == ".." || strings.ContainsAny(n, "/\x00") {
			return &FieldError{Key: "runnable", Value: n, Reason: "want a program NAME as PATH finds it (`read` shows a path)"}
		}
	}
	return nil
}

// ResolvePath makes a user-given path absolute (relative to base) and resolves
// symlinks on the host, once, at start: the sandbox then sees exactly that
// inode tree (a symlink swapped later cannot redirect a bind). key names the
// option for the error (a *FieldError).
func ResolvePath(key, base, p string) (string, error) {
	abs, err := AbsPath(key, base, p)
	if err != nil {
		return "", err
	}
	r, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", &FieldError{Key: key, Value: p, Reason: "no such file or directory: create it first, or drop it"}
		}
		return "", &FieldError{Key: key, Value: p, Reason: err.Error()}
	}
	return filepath.Clean(r), nil
}

// AbsPath makes a user-given path absolute, ~ expanded, relative to base,
// without resolving symlinks: where the user will look for it.
func AbsPath(key, base, p string) (string, error) {
	if p == "" {
		return "", &FieldError{Key: key, Reason: "empty path"}
	}
	orig := p
	if strings.HasPrefix(p, "~/") || p == "~" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", &FieldError{Key: key, Value: orig, Reason: fmt.Sprintf("cannot expand ~: %v", err)}
		}
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p), nil
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

// DefaultCacheName is the NAME of a cache given without one (a flag or a
// config file); a profile's caches are named after the profile.
const DefaultCacheName = "default"

// ValidName reports whether s is a cache's or a profile's name: a
// lower-case letter or digit, then up to 63 of those, '.', '_' and '-'
// (so never "." or "..", and never a path). A loop, not a regular
// expression: compiling one cost every -P start ~0.1 ms of its plan.
func ValidName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// ParseCache splits a cache value "[NAME:]PATH". PATH is absolute or under
// the home directory (~/...): a cache is never relative to the workspace,
// which the agent controls.
func ParseCache(v string) (name, path string, err error) {
	name, path = DefaultCacheName, v
	if i := strings.Index(v, ":"); i > 0 && !strings.ContainsAny(v[:i], "/~") {
		name, path = v[:i], v[i+1:]
	}
	if !ValidName(name) {
		return "", "", &FieldError{Key: "cache", Value: v, Reason: "NAME is lower-case letters, digits, '-', '.' and '_', e.g. go:~/go/pkg/mod"}
	}
	clean := filepath.Clean(path)
	switch {
	case path == "" || path == "~" || clean == "/":
		return "", "", &FieldError{Key: "cache", Value: v, Reason: "want a directory below ~ or /, e.g. ~/.cache/go-build"}
	case !strings.HasPrefix(path, "~/") && !filepath.IsAbs(path):
		return "", "", &FieldError{Key: "cache", Value: v, Reason: "write it as ~/... or an absolute path (a cache is never relative to the workspace)"}
	case strings.Contains("/"+path+"/", "/../"):
		return "", "", &FieldError{Key: "cache", Value: v, Reason: "no .. in a cache path"}
	}
	return name, path, nil
}
