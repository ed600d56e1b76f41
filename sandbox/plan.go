// Package sandbox is the supervisor: it turns a policy into a plan (mounts,
// environment, rules), starts the sandbox's init through package ns, relays the
// terminal and signals, enforces limits and the timeout, feeds the audit trail
// and reports the agent's exit status. It is the one place where the feature
// packages (landlock, seccomp, cgroup, netproxy, audit) are tied together.
package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"jail/ns"
	"jail/policy"
)

// Plan is the effective, resolved sandbox: what --dry-run prints and the audit
// trail's start event records.
type Plan struct {
	Workspace string     `json:"workspace"`
	Home      string     `json:"home"`
	Mounts    []ns.Mount `json:"mounts"`
	Env       []string   `json:"env"`
	Notes     []string   `json:"notes,omitempty"`
}

// hidden are host places replaced by empty private tmpfs: where other users'
// files and, above all, host sockets live. A read-only bind would not stop
// connect(2) on a Unix socket found there (docker.sock, the D-Bus bus,
// ssh-agent, X11, WSLg), so these must not be visible at all.
var hidden = []struct {
	path string
	mode uint32
}{
	{"/tmp", 0o1777},
	{"/var/tmp", 0o1777},
	{"/run", 0o755},
	{"/var/run", 0o755}, // a symlink to /run on most systems: then skipped
	{"/root", 0o700},
	{"/home", 0o755},
	{"/mnt/wslg", 0o755}, // WSL2: X11/Wayland/PulseAudio sockets
	{"/var/lib/docker", 0o700},
	{"/var/spool", 0o755},
	{"/var/mail", 0o755},
}

// systemSecrets are unreadable inside even though the rest of /etc is visible
// (they are unreadable to ordinary users anyway; started by root the mask
// keeps it so). Globs are expanded at start.
var systemSecrets = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/ssh/ssh_host_*_key", "/etc/ssl/private", "/etc/sudoers", "/etc/sudoers.d",
	"/etc/security/opasswd", "/var/lib/sss", "/etc/krb5.keytab",
}

func depth(p string) int { return strings.Count(filepath.Clean(p), "/") }

// BuildPlan resolves the policy against the host: paths are made absolute and
// symlink-free once, here, and checked to exist. env is the host environment.
func BuildPlan(p *policy.Policy, env []string) (*Plan, error) {
	ws, err := policy.ResolvePath("workspace", "/", p.Workspace)
	if err != nil {
		return nil, err
	}
	if ws == "/" && !p.ReadOnly {
		return nil, fmt.Errorf("%w: the workspace is / (the whole host): cd into a project directory, or add --read-only", policy.ErrInvalid)
	}
	plan := &Plan{Workspace: ws}
	home := lookupEnv(env, "HOME")
	if home != "" {
		if r, err := filepath.EvalSymlinks(home); err == nil {
			home = r
		} else {
			home = ""
		}
	}
	plan.Home = home

	// 1. Hide.
	var mounts []ns.Mount
	seen := map[string]bool{}
	addHide := func(path string, mode uint32, why string) {
		if seen[path] || path == "/" {
			return
		}
		fi, err := os.Lstat(path)
		if err != nil || !fi.IsDir() {
			return // absent, or a symlink into a place hidden anyway
		}
		seen[path] = true
		mounts = append(mounts, ns.Mount{Kind: ns.KindTmpfs, Path: path, Dir: true, Size: p.TmpSize, Mode: mode, FD: -1, Why: why})
	}
	for _, h := range hidden {
		addHide(h.path, h.mode, "private, empty")
	}
	if home != "" {
		addHide(home, 0o700, "empty home; only --read/--write paths reappear")
	}
	sort.SliceStable(mounts, func(i, j int) bool { return depth(mounts[i].Path) < depth(mounts[j].Path) })

	// 2. Re-expose: the workspace and --read/--write paths, shallow first so
	//    that a deeper writable path inside a read-only one stays writable.
	binds := map[string]ns.Mount{}
	addBind := func(flag, raw string, rw bool, why string) error {
		path, err := policy.ResolvePath(flag, ws, raw)
		if err != nil {
			return err
		}
		if path == "/" && rw {
			return fmt.Errorf("%w: %s /: the whole host cannot be writable", policy.ErrInvalid, flag)
		}
		fi, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("%w: %s %s: %v", policy.ErrInvalid, flag, raw, err)
		}
		kind := ns.KindROBind
		if rw {
			kind = ns.KindBind
		}
		if old, ok := binds[path]; ok && old.Kind == ns.KindBind {
			return nil // writable wins over read-only for the same path
		}
		binds[path] = ns.Mount{Kind: kind, Path: path, Dir: fi.IsDir(), FD: -1, Why: why}
		return nil
	}
	if err := addBind("workspace", ws, !p.ReadOnly, "workspace"); err != nil {
		return nil, err
	}
	for _, w := range p.Write {
		if err := addBind("--write", w, true, "--write"); err != nil {
			return nil, err
		}
	}
	for _, r := range p.Read {
		if err := addBind("--read", r, false, "--read"); err != nil {
			return nil, err
		}
	}
	var bl []ns.Mount
	for _, b := range binds {
		bl = append(bl, b)
	}
	sort.Slice(bl, func(i, j int) bool {
		if di, dj := depth(bl[i].Path), depth(bl[j].Path); di != dj {
			return di < dj
		}
		return bl[i].Path < bl[j].Path
	})
	mounts = append(mounts, bl...)

	// 3. Masks over system secrets.
	for _, pat := range systemSecrets {
		matches, _ := filepath.Glob(pat)
		for _, m := range matches {
			fi, err := os.Lstat(m)
			if err != nil || fi.Mode()&os.ModeSymlink != 0 {
				continue
			}
			mounts = append(mounts, ns.Mount{Kind: ns.KindMask, Path: m, Dir: fi.IsDir(), FD: -1, Why: "host secret"})
		}
	}
	plan.Mounts = mounts
	plan.Env = policy.BuildEnv(env, p.Env, p.SetEnv)
	return plan, nil
}

func lookupEnv(env []string, name string) string {
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			return kv[len(name)+1:]
		}
	}
	return ""
}

// Print writes the plan for --dry-run, one step a line.
func (pl *Plan) Print(w io.Writer) {
	fmt.Fprintf(w, "workspace  %s\n", pl.Workspace)
	fmt.Fprintf(w, "root       / read-only, nosuid, nodev (recursive bind of the host root)\n")
	for _, m := range pl.Mounts {
		extra := ""
		if m.Kind == ns.KindTmpfs && m.Size > 0 {
			extra = fmt.Sprintf(" size=%d mode=%#o", m.Size, m.Mode)
		}
		fmt.Fprintf(w, "%-10s %s%s  (%s)\n", m.Kind, m.Path, extra, m.Why)
	}
	fmt.Fprintf(w, "dev        /dev minimal: null zero full random urandom tty, new devpts, shm\n")
	fmt.Fprintf(w, "proc       /proc fresh for the sandbox's pid namespace\n")
	for _, e := range pl.Env {
		name := e
		if i := strings.IndexByte(e, '='); i > 0 {
			name = e[:i]
		}
		fmt.Fprintf(w, "env        %s\n", name)
	}
	for _, n := range pl.Notes {
		fmt.Fprintf(w, "note       %s\n", n)
	}
}

// IsInvalid reports whether err is the user's to fix.
func IsInvalid(err error) bool { return errors.Is(err, policy.ErrInvalid) }
