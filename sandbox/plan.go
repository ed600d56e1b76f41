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
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/jail-sandbox/jail/agentcfg"
	"github.com/jail-sandbox/jail/denials"
	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/gitguard"
	"github.com/jail-sandbox/jail/hostpath"
	"github.com/jail-sandbox/jail/internal/asciifold"
	"github.com/jail-sandbox/jail/internal/termsafe"
	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/netproxy/nsnet"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/pastwrite"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/statedir"
	"github.com/jail-sandbox/jail/ucount"
)

// Version is reported in the audit trail; set by main.
var Version = "dev"

// Exit codes of jail itself (the agent's own code passes through).
const (
	ExitTimeout  = 124
	ExitSetup    = 125
	ExitNotExec  = 126
	ExitNotFound = 127
)

// Plan is the effective, resolved sandbox: what --dry-run prints and the audit
// trail's start event records.
type Plan struct {
	Workspace string `json:"workspace"`
	// Cwd is where the command starts (in the workspace).
	Cwd    string     `json:"cwd"`
	Home   string     `json:"home"`
	Mounts []ns.Mount `json:"mounts"`
	Env    []string   `json:"env"`
	Notes  []string   `json:"notes,omitempty"`
	// Absent are protected paths missing at start in writable trees (see
	// fsrules.Plan.Absent): watched while the sandbox runs, moved to the
	// quarantine if created (sentry_linux.go).
	Absent []fsrules.Absent `json:"absent,omitempty"`
	// Globs are directories watched for new names matching a built-in
	// pattern (fsrules.Plan.Globs): such a name is moved to the
	// quarantine as an absent path is.
	Globs []fsrules.Glob `json:"globs,omitempty"`
	// Lifted are the trees where the built-in protections other than
	// git's do not apply (--no-default-deny-at, resolved).
	Lifted []string `json:"lifted,omitempty"`
	// Guarded are agent configuration files the agent may write but whose
	// command keys (hooks, MCP servers...) jail keeps as they were on the
	// host (package agentcfg).
	Guarded []agentcfg.Target `json:"guarded,omitempty"`
	// Git is what package gitguard decided for the git directories in the
	// writable trees: read-only control files (in Mounts too), watched
	// absent ones, observed directories. Nil when git is trusted
	// (--allow-git-config, --no-default-deny).
	Git *gitguard.Plan `json:"git,omitempty"`
	// PyDirs are agents' directories holding a python script the agent
	// configuration runs: a module new in one is moved out of the tree
	// (sentry_linux.go).
	PyDirs []PyDir `json:"py_dirs,omitempty"`
	// Writable lists every path the agent may write (mount and Landlock):
	// the audit trail must not be under any of them.
	Writable []string `json:"writable"`
	// past is what the plan read of the trees earlier runs made writable
	// (package pastwrite); the run adds its own to it (recordWritten).
	past *pastwrite.Set
	// otherSockets are the masked host sockets that were another user's
	// at the start (capped, not always masked): see runner.unmasked.
	otherSockets map[string]bool
	// Landlock is the second, independent wall, applied by init.
	Landlock landlock.Rules `json:"landlock"`
	// Counters bound the per-user kernel counters inside (package ucount),
	// so that the host user keeps its own.
	Counters []ucount.Bound `json:"counters"`
	// StateDir is jail's own state directory (package statedir), resolved;
	// StateDirMasked says the plan covers it because a visible path
	// contains it (the supervisor then makes sure it exists before start,
	// so that the mask has something to cover).
	StateDir       string `json:"state_dir,omitempty"`
	StateDirMasked bool   `json:"state_dir_masked,omitempty"`
	// RuntimeDir is jail's runtime directory ($XDG_RUNTIME_DIR/jail: the
	// running sandboxes' registry, control sockets and logs), resolved;
	// RuntimeDirMasked says the plan covers it, as StateDir.
	RuntimeDir       string `json:"runtime_dir,omitempty"`
	RuntimeDirMasked bool   `json:"runtime_dir_masked,omitempty"`
	// ConfigDir is jail's config directory ($XDG_CONFIG_HOME/jail: the
	// user's config, profiles and trust records), resolved;
	// ConfigDirMasked says the plan covers it, as StateDir.
	ConfigDir       string `json:"config_dir,omitempty"`
	ConfigDirMasked bool   `json:"config_dir_masked,omitempty"`

	gitNotes []string // the git notes (in Notes too): told at start
	// policyKept are the policy files the plan read (its own, and those the
	// policy-named record named when read): a name recorded after is
	// checked once the run is registered (policyNamedSince).
	policyKept map[string]bool
	// policyExposed are earlier runs' policy files this run leaves
	// writable through other names past the bound (markPolicyExposed).
	policyExposed []string
	// onceNotes are the notes (in Notes too) said once, not at every
	// start (saidBefore): the first-write lines of script directories,
	// the test-data note, what the runnable programs showed, the hidden
	// PATH directories.
	onceNotes map[string]bool
	// nameGuard is the exit check's sweep for fsrules.ExitNames when git
	// has no guard of its own (--allow-git-config): names only.
	nameGuard *gitguard.Guard

	// hostMounts is the host's mount table as the plan read and used it
	// (its views of hidden places), when mountsRead (mountsErr: why not).
	// The --audit trail's views are found in it too, so that the trail's
	// masks and the plan's agree; a plan without it (not read, or not
	// built by buildPlan) has none to offer, and the trail is refused.
	hostMounts []fsrules.Mount
	mountsRead bool
	mountsErr  error
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

// secretMasks are the masks of systemSecrets as the host has them now:
// a plain path or a pattern's matches, each that exists and is no
// symlink.
func secretMasks() []ns.Mount {
	var out []ns.Mount
	for _, pat := range systemSecrets {
		matches := []string{pat}
		if strings.ContainsAny(pat, `*?[\`) {
			// A pattern: its matches, each lstat'ed below. A plain path
			// is lstat'ed once, below (Glob would lstat it first too).
			matches, _ = filepath.Glob(pat)
		}
		for _, m := range matches {
			fi, err := os.Lstat(m)
			if err != nil || fi.Mode()&os.ModeSymlink != 0 {
				continue
			}
			out = append(out, ns.Mount{Kind: ns.KindMask, Path: m, Dir: fi.IsDir(), FD: -1, Why: "host secret"})
		}
	}
	return out
}

// sayOnce makes the note n (in Notes) one said once, not at every start.
func (p *Plan) sayOnce(n string) {
	if p.onceNotes == nil {
		p.onceNotes = map[string]bool{}
	}
	p.onceNotes[n] = true
}

func depth(p string) int { return strings.Count(filepath.Clean(p), "/") }

// BuildPlan resolves the policy against the host: paths are made absolute and
// symlink-free once, here, and checked to exist. env is the host environment.
func BuildPlan(p *policy.Policy, env []string) (*Plan, error) { return buildPlan(p, env, nil) }

// buildPlan is BuildPlan with the directories of the visible trees listed
// by dirs (nil: each is read): package dircache, which answers for a
// directory unchanged since an earlier run.
func buildPlan(p *policy.Policy, env []string, dirs fsrules.DirReader) (*Plan, error) {
	return planChecked(p, env, dirs, nil, false)
}

// planChecked is buildPlan taking what check built (nil: nothing), each
// part only for the values it was built from (fsrules.Input.Rules).
// degraded: the run builds no mount namespace (its paths become Landlock
// rules), so paths at init's own places are not refused.
func planChecked(p *policy.Policy, env []string, dirs fsrules.DirReader, chk *checked, degraded bool) (*Plan, error) {
	// The options are checked (and the network mode decided) here too, so a
	// caller that skipped Validate still gets a closed default.
	if err := expandSSHAgent(p, env); err != nil {
		return nil, err
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	// The check's resolution when it had these very inputs (resolved).
	res, err := chk.resolvedFor(p, env)
	if err != nil {
		return nil, err
	}
	if !degraded {
		// Before any walk of the trees (a workspace at /proc was walked
		// for the deny rules and failed on a /proc file: "readdirent").
		if err := refuseOwnPlaces(p, res); err != nil {
			return nil, err
		}
	}
	home, ws, cwd, wsNote, bl, raws := res.home, res.ws, res.cwd, res.wsNote, res.binds, res.raws
	plan := &Plan{Workspace: ws, Cwd: cwd, past: res.past}
	if wsNote != "" {
		plan.Notes = append(plan.Notes, wsNote)
		// Said once for its words (the same top level and subfolder):
		// at every start from a monorepo's subfolder it was a line the
		// user learnt to skip, among the notices that are news. --dry-run
		// and the trail keep it.
		plan.sayOnce(wsNote)
	}
	plan.Home = home
	homes := userHomes(home)
	for _, b := range bl {
		if b.Kind == ns.KindBind { // the workspace unless read-only, and the write paths
			if err := checkHome(b.Why, raws[b.Path], b.Path, homes, p.AllowWritableHome); err != nil {
				return nil, err
			}
		}
	}
	plan.Env = policy.BuildEnv(env, p.Env, p.SetEnv)
	plan.Env = refusalClientEnv(plan.Env, p.Net)

	// 1. Hide.
	// Sized for the hidden places, the home and a few data places: a
	// Mount is large, and growing the slice copied them several times.
	mounts := make([]ns.Mount, 0, len(hidden)+12)
	seen := make(map[string]bool, len(hidden)+12)
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
		addHide(home, 0o700, "empty home; only read/write paths reappear")
	}
	// Data places (/opt, /srv, /mnt, ...): secrets there (/opt/app/.env,
	// /srv/x/tls.key) are not searched at every start, so they are not shown.
	places := dataDirs()
	for _, d := range places {
		addHide(d, 0o755, "data place: only the workspace, read/write paths and programs on PATH reappear")
	}
	sort.SliceStable(mounts, func(i, j int) bool { return depth(mounts[i].Path) < depth(mounts[j].Path) })

	// 2. Re-expose: the workspace and the read/write paths (resolveRoots),
	//    the directories of the programs the agent runs from data places
	//    (PATH=/opt/tool/bin:...): read-only, searched like a read path. One
	//    that a deny rule covers stays hidden.
	var progs []ns.Mount
	var bindRoots []string // writable: the sandbox's symlinks there are not followed
	for _, b := range bl {
		if b.Kind == ns.KindBind {
			bindRoots = append(bindRoots, b.Path)
		}
	}
	lr, _ := dirs.(linkReader) // the cache across starts (nil: read)
	// The rules are compiled once for the check (or the first program
	// directory) and the walk: fsrules uses them only for these values.
	rules := chk.fsRules()
	for _, r := range programRoots(places, hiddenPaths(mounts), bindRoots, lookupEnv(plan.Env, "PATH"), p.Command, ws, lr) {
		if enclosingBind(r, bl) {
			continue
		}
		rs, err := fsrules.CheckRules(fsrules.Input{Workspace: ws, Home: home, Deny: p.Deny, NoDefaultDeny: p.NoDefaultDeny,
			AllowGitConfig: p.AllowGitConfig, Readable: []string{r}, Rules: rules, Lifted: res.lifts})
		if err != nil {
			plan.Notes = append(plan.Notes, fmt.Sprintf("program directory %s is on PATH but denied: it stays hidden", r))
			continue
		}
		rules = rs
		fi, err := os.Stat(r)
		if err != nil || !fi.IsDir() {
			continue
		}
		progs = append(progs, ns.Mount{Kind: ns.KindROBind, Path: r, Dir: true, FD: -1, Why: "program directory on PATH, in a data place"})
	}
	if len(progs) > 0 {
		bl = append(bl, progs...)
		sort.SliceStable(bl, func(i, j int) bool { return depth(bl[i].Path) < depth(bl[j].Path) })
	}
	// The command (and its interpreters) where the host's PATH finds them,
	// when that is in another hidden place ($HOME, /tmp): its install tree
	// read-only. Then the programs a profile names (`runnable`: rustup's
	// cargo for the agent's builds), which the agent finds on the same
	// PATH; their notes are the same at every start, so said once.
	xp := newExposer(lookupEnv(plan.Env, "PATH"), cwd, home, env, plan.Env, append(append([]ns.Mount{}, mounts...), bl...), cacheTargets(p, home), hostWritable(bl, res.past))
	xp.command(p.Command, "command", false)
	for _, name := range p.Runnable {
		xp.command([]string{name}, "runnable", true)
	}
	exp := xp.e
	plan.Notes = append(plan.Notes, exp.notes...)
	if len(p.Command) > 1 {
		// The command's own arguments that name a hidden file (a script,
		// a dataset under the home): said now, not left to the program's
		// "No such file or directory".
		plan.Notes = append(plan.Notes, hiddenArgNotes(p.Command[1:], cwd, home, xp.sd, append(append(append([]ns.Mount{}, mounts...), bl...), exp.binds...), false)...)
	}
	for n := range exp.once {
		plan.sayOnce(n)
	}
	plan.Env = append(plan.Env, exp.env...)
	if len(exp.binds) > 0 {
		have := map[string]bool{}
		for _, b := range bl {
			have[b.Path] = true
		}
		for _, b := range exp.binds {
			if !have[b.Path] {
				bl = append(bl, b)
			}
		}
		sortBinds(bl)
	}

	//    The caches: jail's own directories at the tools' cache paths.
	caches, err := cacheMounts(p, env, home, bl)
	if err != nil {
		return nil, err
	}
	bl = append(bl, caches...)
	sortBinds(bl)
	// The HOME seen through another mount of its file system (a host bind
	// of /home/u at /var/lib/v, of ~/.ssh somewhere): hiding the HOME by
	// its path would leave it readable there. Found in the mount table the
	// walk reads anyway (read here once, handed to it).
	mountinfo, miErr := readMountinfo()
	var hostMounts []fsrules.Mount
	if mountinfo != nil {
		hostMounts = fsrules.ParseMountinfo(mountinfo)
	}
	// Kept for the --audit trail's views (openTrail): the trail's masks
	// come from the very table the plan's do.
	plan.hostMounts, plan.mountsRead, plan.mountsErr = hostMounts, miErr == nil && mountinfo != nil, miErr
	var lateViews []ns.Mount // views inside a bind: masked after the binds
	// hideViews hides the views of a hidden place (what names it) as the
	// place is hidden: those in no bind by an empty tmpfs of the place's
	// mode, before the binds; those in a bind, and files, by a mask after
	// them.
	hideViews := func(early, late []string, mode uint32, what string) {
		for _, v := range early {
			if !visibleIn(v, mounts) {
				continue // in a place hidden anyway (/home, /tmp, a data place)
			}
			fi, err := os.Lstat(v)
			if err != nil || fi.Mode()&os.ModeSymlink != 0 {
				continue // absent: nothing shows the place there
			}
			if !fi.IsDir() {
				late = append(late, v)
				continue
			}
			// Like the place: an empty tmpfs, where only the read/write
			// paths named in it reappear.
			addHide(v, mode, "another mount of "+what+": empty; only read/write paths reappear")
		}
		for _, v := range late {
			if m, ok := viewMask(v, "another mount of "+what); ok {
				lateViews = append(lateViews, m)
			}
		}
	}
	// The private places hidden above (/tmp, /var/tmp, /run, /root,
	// /home, /var/spool, ...), seen through another mount of their file
	// system (a host bind of /var/tmp at /var/lib/x, of / elsewhere, of
	// /run/user/UID and its sockets): hiding a place by its path would
	// leave others' files, and the user's sockets, readable there. Their
	// own trees only (TreeViews): what another file system mounted inside
	// one shows elsewhere is mostly the host's own tree again (WSLg's
	// /mnt/wslg/distro). Not the data places: they are hidden because the
	// walk does not search them, not because they are private, and a view
	// of one in a system path (/usr/local/tool bound from /opt/tool) is as
	// unsearched as any other visible path, and may hold a PATH directory
	// the plan shows only inside the data place itself. First, so that a
	// view of the HOME inside one of their views is hidden with it.
	for _, h := range hidden {
		if !seen[h.path] || h.path == home {
			continue // not hidden here (absent, a link), or the HOME (below)
		}
		early, late, notes, err := placeViews(fsrules.TreeViews(hostMounts, h.path), bl, raws, h.path)
		if err != nil {
			return nil, err
		}
		plan.Notes = append(plan.Notes, notes...)
		hideViews(early, late, h.mode, h.path)
	}
	if home != "" {
		early, late, notes, err := homeViews(fsrules.Views(hostMounts, home), bl, raws, p.AllowWritableHome)
		if err != nil {
			return nil, err
		}
		plan.Notes = append(plan.Notes, notes...)
		hideViews(early, late, 0o700, "the home directory")
	}
	sort.SliceStable(mounts, func(i, j int) bool { return depth(mounts[i].Path) < depth(mounts[j].Path) })
	mounts = append(mounts, bl...)
	// Symlinks on the way to --write/--read paths and to the command, where
	// they sit in a hidden place: recreated, so that each works at its own
	// path (the binds above are of their targets).
	links, err := userLinks(p, ws)
	if err != nil {
		return nil, err
	}
	mounts = append(mounts, linkMounts(append(links, exp.links...), mounts)...)
	// The PATH directories in the home that stay hidden: what the command
	// runs from them is not found, and only the agent would say so.
	if n := hiddenPathNote(lookupEnv(plan.Env, "PATH"), home, xp.sd, mounts); n != "" {
		plan.Notes = append(plan.Notes, n)
		plan.sayOnce(n)
	}
	// A git remote that is a repository on this machine the sandbox hides
	// or keeps read-only: git's own error inside does not say why.
	for _, n := range gitRemoteNotes(ws, home, xp.sd, mounts) {
		plan.Notes = append(plan.Notes, n)
		plan.sayOnce(n)
	}
	// A variable passed by name whose value is a path hidden inside (the
	// ssh agent's socket): the command's own error does not say why.
	envNames := p.Env
	if p.SSHAgent {
		// SSH_AUTH_SOCK is the relay's inside (4d), not the host's path.
		envNames = slices.DeleteFunc(slices.Clone(p.Env), func(n string) bool { return n == sshAuthSock })
	}
	for _, n := range envPathNotes(envNames, env, home, xp.sd, mounts) {
		plan.Notes = append(plan.Notes, n)
		plan.sayOnce(n)
	}

	// jail's own state directory (old trails, the run registry, the
	// quarantine, the agent-configuration records) is the user's record: never shown to the
	// sandbox, not even read-only. A bind that names it or a path in it is
	// refused; where a visible path contains it, it is masked below.
	// jailDirs are jail's directories as the next run names them, before
	// any symlink is followed: a symlink on the way that the agent can
	// replace would send the next run elsewhere (3c guards it).
	var jailDirs []string
	if sd, err := statedir.From(func(k string) string { return lookupEnv(env, k) }); err == nil {
		jailDirs = append(jailDirs, sd)
		plan.StateDir = res.existingPath(sd)
		if err := inStateDir(bl, plan.StateDir, nil); err != nil {
			return nil, err
		}
		plan.StateDirMasked = visibleIn(plan.StateDir, mounts)
		if lateViews, err = jailDirViews(lateViews, hostMounts, plan.StateDir, "state directory (old audit trails, the run registry)", bl, mounts); err != nil {
			return nil, err
		}
	}
	// The runtime directory likewise: its control sockets would let the
	// sandbox ask its own supervisor (or another sandbox's) to run a
	// command outside its limits were the peer checks ever to fail.
	// Masked whether or not jail uses it (it falls back to the state
	// directory when XDG_RUNTIME_DIR is not private): the check is the
	// registry's, the mask does not depend on it.
	if rd, ok := statedir.RuntimeFrom(func(k string) string { return lookupEnv(env, k) }); ok {
		jailDirs = append(jailDirs, rd)
		plan.RuntimeDir = res.existingPath(rd)
		if err := inJailDir(bl, plan.RuntimeDir, "runtime directory (running sandboxes' control sockets)", nil); err != nil {
			return nil, err
		}
		plan.RuntimeDirMasked = visibleIn(plan.RuntimeDir, mounts)
		if lateViews, err = jailDirViews(lateViews, hostMounts, plan.RuntimeDir, "runtime directory (running sandboxes' control sockets)", bl, mounts); err != nil {
			return nil, err
		}
	}
	// The config directory likewise, and not as a built-in protection
	// (which --no-default-deny lifts, and which the Go API's sandboxes, with
	// $XDG_CONFIG_HOME elsewhere than ~/.config, never matched): a config,
	// profile or trust record the agent left there would be read and
	// trusted by every later run (review14b).
	if cd, ok := statedir.ConfigFrom(func(k string) string { return lookupEnv(env, k) }); ok {
		jailDirs = append(jailDirs, cd)
		plan.ConfigDir = res.existingPath(cd)
		if err := inJailDir(bl, plan.ConfigDir, configDirWhat, nil); err != nil {
			return nil, err
		}
		plan.ConfigDirMasked = visibleIn(plan.ConfigDir, mounts)
		if lateViews, err = jailDirViews(lateViews, hostMounts, plan.ConfigDir, configDirWhat, bl, mounts); err != nil {
			return nil, err
		}
	}
	// The system secrets (masked in 4.), and each place where another
	// mount shows one (a host bind of / or /etc elsewhere): masked there
	// too, after the binds, like the HOME's views inside a bind.
	secrets := secretMasks()
	for _, sm := range secrets {
		for _, v := range fsrules.TreeViews(hostMounts, sm.Path) {
			if !visibleIn(v.Path, mounts) {
				continue
			}
			if m, ok := viewMask(v.Path, "host secret, another mount"); ok {
				lateViews = append(lateViews, m)
			}
		}
	}
	var readable, writable []string
	for _, b := range bl {
		if b.Kind == ns.KindBind {
			if n := foreignNote(b.Path, b.Why); n != "" {
				plan.Notes = append(plan.Notes, n)
			}
			writable = append(writable, b.Path)
		} else {
			readable = append(readable, b.Path)
		}
	}

	// 3. Secrets and write protections inside the visible trees (fsrules):
	//    after the binds, so deny wins over read and write.
	in := fsrules.Input{
		Workspace: ws, Home: home, Deny: p.Deny,
		NoDefaultDeny: p.NoDefaultDeny, AllowGitConfig: p.AllowGitConfig,
		Readable: readable, Writable: writable, Lifted: res.lifts,
		// jail's own caches (not --host-caches: those are the host's own
		// directories, read by its tools, and keep every watch): no host
		// program reads them, so a protected name appearing there is not
		// watched for (fsrules.Input.Own).
		Own: ownCaches(caches),
		// Home-anchored protections hold in the passwd home too; the walk
		// does not enter what the sandbox replaces with an empty tmpfs.
		Homes: homes, Hidden: append(hiddenPaths(mounts), mountPaths(lateViews)...),
		Dirs: dirs, Rules: rules, Mountinfo: mountinfo,
	}
	fp, err := fsrules.Expand(in)
	if err != nil {
		return nil, invalid(err)
	}
	plan.Lifted = res.lifts
	// 3b. git (package gitguard): the control files of every git dir in the
	//     writable trees, and what their configuration points at, read-only;
	//     .git files that do not verify hidden; a verified linked worktree's
	//     common dir writable (git commit writes objects and refs there).
	gp := gitguard.Scan(gitguard.Input{
		Found: fp.Found, Writable: writable, Workspace: ws, Home: home,
		UserConfigs: gitguard.UserConfigFiles(env),
		EnvConfig:   gitguard.EnvConfig(env),
		// Both flags lift the built-in git protections.
		AllowGitConfig: p.AllowGitConfig || p.NoDefaultDeny,
		KeptSince:      keptSince(plan.StateDir),
	})
	for _, w := range gp.Writable {
		mounts = append(mounts, ns.Mount{Kind: ns.KindBind, Path: w, Dir: true, FD: -1, Why: "git worktree's shared git dir"})
		writable = append(writable, w)
	}
	// A pack's other names (hard links) in the writable trees: the
	// read-only bind covers one name, not the file (historyLinks).
	keptBase := ""
	if plan.StateDir != "" {
		keptBase = filepath.Join(plan.StateDir, statedir.GitKept)
	}
	packLinks, linkNotes := historyLinks(gp.History, writable, keptBase, mountinfo, hostMounts, dirs)
	gp.History = append(gp.History, packLinks...)
	gp.Notes = append(gp.Notes, linkNotes...)
	// The exit check's names (fsrules.ExitNames): a file a host program
	// loads from its directory, created deeper than the watched tops,
	// leaves the tree when the sandbox ends. In gitguard's sweep, which
	// walks every tree anyway; its own guard when git is trusted.
	names := exitNames(p, fp.Masks, mounts, bl, writable, degraded)
	if gp.Guard != nil && len(gp.Guard.Roots) > 0 {
		gp.Guard.Names, gp.Guard.Kept, gp.Guard.Covered, gp.Guard.Lifted = names.names, names.kept, names.covered, res.lifts
		plan.Git = &gp
	} else if len(names.names) > 0 && len(writable) > 0 {
		plan.nameGuard = &gitguard.Guard{Roots: slices.Clone(writable), NoGit: true,
			Names: names.names, Kept: names.kept, Covered: names.covered, Lifted: res.lifts, Since: time.Now().UnixNano()}
	}
	plan.Notes = append(plan.Notes, gp.Notes...)
	plan.gitNotes = gp.Notes
	// 3c. Agent configuration (package agentcfg): the files that name
	//     commands are guarded key by key while the sandbox runs; the
	//     scripts those commands run, when they lie in a writable tree, are
	//     read-only (and watched while absent).
	var roots []agentcfg.Root
	for _, b := range bl {
		// A cache of jail's own (a Source of its own) is read by no program
		// on the host: nothing in it needs guarding.
		if b.Kind == ns.KindBind && b.Source == "" {
			roots = append(roots, agentcfg.Root{Path: b.Path, Dir: b.Dir})
		}
	}
	plan.Guarded = agentcfg.Targets(home, roots, agentcfg.Files)
	named, namedAbsent, namedLinks, namedNotes, pyDirs, onceNotes := agentNamed(plan.Guarded, home, ws, writable, roots, fp.Masks)
	for n := range onceNotes {
		plan.sayOnce(n)
	}
	// A project's test data the built-ins hide: said once (per words),
	// with the lift that shows it (fixturenote.go).
	if n := fixtureNote(fp.Masks, ws); n != "" {
		plan.Notes = append(plan.Notes, n)
		plan.sayOnce(n)
	}
	// The project's .env files the built-ins hide: said once (per
	// words), with the ways out (dotenvnote.go).
	if n := dotenvNote(fp.Masks, ws, cwd); n != "" {
		plan.Notes = append(plan.Notes, n)
		plan.sayOnce(n)
	}
	if len(p.Command) > 1 {
		// The command's arguments that name a file the protections make
		// unreadable (`jail -- cat .env`): said with the rule, not left
		// to the program's "Permission denied".
		plan.Notes = append(plan.Notes, maskedArgNotes(p.Command[1:], cwd, home, fp.Masks, false)...)
	}
	plan.PyDirs = pyDirs
	plan.Notes = append(plan.Notes, namedNotes...)
	plan.Guarded = append(plan.Guarded, namedLinks...)
	plan.Guarded = append(plan.Guarded, gitLinks(gp.Links, roots, plan.Guarded)...)
	plan.Guarded = append(plan.Guarded, jailDirLinks(jailDirs, roots, plan.Guarded)...)
	var wayPins []wayPin
	// One pass, one resolver: the ways of a start's guarded targets share
	// their directories (the workspace's, the home's), each looked up once
	// (perf16: six targets in an empty workspace walked it from / six
	// times, ~90 system calls a start).
	wr := hostpath.NewResolver()
	plan.Guarded, wayPins = guardedWays(wr, uncovered(plan.Guarded, fp.Masks), roots)
	wayPins = append(wayPins, gitWays(wr, gp.Ways, roots)...)
	wr.Close()
	if err := degradedWays(degraded, wayPins); err != nil {
		return nil, err
	}
	cfgMasks, cfgNotes := unguardedMasks(plan)
	plan.Notes = append(plan.Notes, cfgNotes...)
	named = append(named, cfgMasks...)
	// 3d. The files this run's policy was read from (settings, --config,
	//     --seccomp), when the sandbox could write them: read-only.
	var covered []string // what a directory mask (hidden or read-only whole) covers already
	for _, m := range append(fp.Masks, named...) {
		if m.Dir {
			covered = append(covered, m.Path)
		}
	}
	for _, d := range []struct {
		masked bool
		path   string
	}{{plan.StateDirMasked, plan.StateDir}, {plan.RuntimeDirMasked, plan.RuntimeDir}, {plan.ConfigDirMasked, plan.ConfigDir}} {
		if d.masked {
			covered = append(covered, d.path)
		}
	}
	earlier := earlierPolicyFiles(plan.StateDir, allPolicyFiles(p))
	plan.policyKept = policyKept(allPolicyFiles(p), earlier)
	pfMasks, pfTargets, pfNotes, exposed, pfWays, err := policyFileRules(p, earlier, roots, plan.Guarded, append(fp.Masks, named...), covered, hostMounts, degraded)
	if err != nil {
		return nil, err
	}
	if err := degradedWays(degraded, pfWays); err != nil {
		return nil, err
	}
	wayPins = append(wayPins, pfWays...)
	named = append(named, pfMasks...)
	plan.Guarded = append(plan.Guarded, pfTargets...)
	plan.Notes = append(plan.Notes, pfNotes...)
	plan.policyExposed = exposed
	// 3e. The agents' state moved by the environment (CODEX_HOME,
	//     CLAUDE_CONFIG_DIR, GEMINI_CLI_HOME) into a writable tree:
	//     read-only, or watched while missing (movedAgentHomes).
	ahMasks, ahAbsent, ahNotes, err := movedAgentHomes(env, home, cwd, bl, raws)
	if err != nil {
		return nil, err
	}
	named = append(named, ahMasks...)
	plan.Absent = append(plan.Absent, ahAbsent...)
	plan.Notes = append(plan.Notes, ahNotes...)
	masks := mergeMasks(append(fp.Masks, named...), gp)
	plan.Absent = append(plan.Absent, namedAbsent...)
	// A mount point cannot be renamed or removed (EBUSY), but the directory
	// holding it can: `mv .git .git.old && mkdir -p .git/hooks` would leave
	// the protection behind on the moved tree. Every directory between a
	// writable root and a mask is therefore bound onto itself, which pins it.
	pinned := map[string]bool{}
	var pins []ns.Mount
	protected := make([]string, 0, len(masks)+1)
	for _, m := range masks {
		protected = append(protected, m.Path)
	}
	protected = append(protected, mountPaths(lateViews)...)
	if plan.StateDirMasked {
		protected = append(protected, plan.StateDir)
	}
	if plan.RuntimeDirMasked {
		protected = append(protected, plan.RuntimeDir)
	}
	if plan.ConfigDirMasked {
		protected = append(protected, plan.ConfigDir)
	}
	for _, mp := range protected {
		root := enclosing(mp, writable)
		if root == "" {
			continue // in a read-only tree: rename fails with EROFS anyway
		}
		for d := filepath.Dir(mp); d != root && strings.HasPrefix(d, root+"/"); d = filepath.Dir(d) {
			if !pinned[d] {
				pinned[d] = true
				pins = append(pins, ns.Mount{Kind: ns.KindPin, Path: d, Dir: true, FD: -1, Why: "pinned: holds a protected path"})
			}
		}
	}
	// A directory a link on the way to agent settings passes and leaves
	// (ws/.claude -> b/../cfg/claude): the guard watches the links and the
	// file, not b, which the agent swapped for a link of its own
	// (b -> evil/x): the host's claude then read evil/cfg/claude's hooks
	// (review18d). Pinned with the directories above it, it stays. The
	// same for a guarded link's own way (jail's config dir, git's links).
	for _, wp := range wayPins {
		root := enclosing(wp.Dir, writable)
		for d := wp.Dir; root != "" && d != root && strings.HasPrefix(d, root+"/"); d = filepath.Dir(d) {
			if !pinned[d] {
				pinned[d] = true
				pins = append(pins, ns.Mount{Kind: ns.KindPin, Path: d, Dir: true, FD: -1, Why: "pinned: on the way to agent settings, git's or jail's own files"})
			}
		}
	}
	// A cache inside a writable tree is a mount point there too: the
	// directories above it are pinned the same way.
	var plainWritable []string
	for _, b := range bl {
		if b.Kind == ns.KindBind && b.Source == "" {
			plainWritable = append(plainWritable, b.Path)
		}
	}
	for _, c := range caches {
		root := enclosing(c.Path, plainWritable)
		if root == "" {
			continue
		}
		for d := filepath.Dir(c.Path); d != root && strings.HasPrefix(d, root+"/"); d = filepath.Dir(d) {
			if !pinned[d] {
				pinned[d] = true
				pins = append(pins, ns.Mount{Kind: ns.KindPin, Path: d, Dir: true, FD: -1, Why: "pinned: holds a cache"})
			}
		}
	}
	sort.SliceStable(pins, func(i, j int) bool { return depth(pins[i].Path) < depth(pins[j].Path) })
	mounts = append(mounts, pins...)
	for _, m := range masks {
		kind := ns.KindMask
		if m.Kind == fsrules.ReadOnly {
			kind = ns.KindReadOnly
		}
		mounts = append(mounts, ns.Mount{Kind: kind, Path: m.Path, Dir: m.Dir, FD: -1, Why: m.Rule})
	}
	if plan.StateDirMasked {
		// An empty, mode-0, read-only directory: the old trails and the
		// registry can be neither listed, read, rewritten nor added to; the
		// pins above keep its parents from being renamed away.
		mounts = append(mounts, ns.Mount{Kind: ns.KindMask, Path: plan.StateDir, Dir: true, FD: -1, Why: "jail's state directory (audit trails, run registry)"})
	}
	// The HOME's views inside a visible bind (a writable workspace holding
	// a bind of the HOME): empty, mode-0, read-only, like the state
	// directory; the pins above keep their parents in place.
	mounts = append(mounts, lateViews...)
	if plan.RuntimeDirMasked {
		mounts = append(mounts, ns.Mount{Kind: ns.KindMask, Path: plan.RuntimeDir, Dir: true, FD: -1, Why: "jail's runtime directory (running sandboxes' control sockets and logs)"})
	}
	if plan.ConfigDirMasked {
		// Empty, mode-0, read-only: the agent can neither read the user's
		// config nor write one, a profile or a trust record for the next
		// run; the pins above keep its parents from being renamed away.
		mounts = append(mounts, ns.Mount{Kind: ns.KindMask, Path: plan.ConfigDir, Dir: true, FD: -1, Why: "jail's " + configDirWhat})
	}
	plan.Notes = append(plan.Notes, p.Notices...) // recorded in the trail's start event
	// One note per thing said, naming every root it is true of (not one per -w).
	plan.Notes = append(plan.Notes, mergeRootNotes(fp.Notes, append(append([]string{}, writable...), ws))...)
	for _, a := range fp.Absent {
		// The built-in .config/jail/ watch is not for jail's own config
		// directory: the plan masks it, and the supervisor creates it for
		// the mask to cover (a watch would quarantine that directory, and
		// the mask would then cover nothing).
		if plan.ConfigDirMasked && a.Path == plan.ConfigDir {
			continue
		}
		plan.Absent = append(plan.Absent, a)
	}
	plan.Globs = fp.Globs

	// 4. Masks over system secrets (found before the pins, with the
	//    places where another mount shows them).
	mounts = append(mounts, secrets...)
	// 4b. Masks over the host's Unix sockets the view still shows (outside
	//     the private /run, /tmp and HOME): connect(2) needs no write access
	//     to the mount, and Landlock does not mediate it, so a read-only
	//     bind of MySQL's /var/lib/mysql/mysql.sock, LXD's socket under
	//     /var/snap or a language server's socket in the workspace would be
	//     a way to a host process. A mask (an empty, mode-0 file) refuses
	//     connect(2) with EACCES, at the socket's path and at every other
	//     place a mount of its file system shows it (hostMounts). Degraded
	//     mode builds no mounts and refuses socket(AF_UNIX) with seccomp
	//     instead (NoUnix).
	//     The far search's record of each file system this run writes on
	//     is dropped by the run itself (raiseWalls: farWriting), not here:
	//     a plan (--dry-run, the Go API's, a test's) writes no state.
	if !degraded {
		masks, others, note, once, err := hostSocketMasksRecorded(mounts, hostMounts, append(append([]string{}, readable...), writable...), plan.StateDir)
		if err != nil {
			return nil, err
		}
		mounts = append(mounts, masks...)
		plan.otherSockets = others
		if note != "" {
			plan.Notes = append(plan.Notes, note)
		}
		if once != "" {
			plan.Notes = append(plan.Notes, once)
			plan.sayOnce(once)
		}
	}
	// 4c. Files placed for the tools inside (Policy.Files: Maven's
	//     settings.xml as a copy without its servers' passwords), only
	//     where the sandbox's own private tmpfs is the place: never over
	//     what a read or write path shows of the host (the tool reads
	//     that), and nothing is made on the host (init makes the place in
	//     the tmpfs, read-only once the copy is bound there).
	for _, f := range p.Files {
		if degraded {
			plan.Notes = append(plan.Notes, f.Path+": jail's copy is not placed (degraded mode builds no mounts): "+f.Why)
			continue
		}
		if d := deepestMount(f.Path, mounts); d == nil || d.Kind != ns.KindTmpfs {
			// The host's place shows: a read or write path the user gave
			// shows the host's file, which the tool reads; only where a
			// mask hides it is the tool left without either.
			if d != nil && d.Kind == ns.KindMask {
				plan.Notes = append(plan.Notes, f.Path+": hidden, and jail's copy cannot be placed over the host's place ("+f.Why+")")
			}
			continue
		}
		mounts = append(mounts, ns.Mount{Kind: ns.KindFile, Path: f.Path, Data: []byte(f.Content), FD: -1, Why: f.Why})
	}
	// 4d. --ssh-agent: the host agent's socket in the private /run, named
	//     by SSH_AUTH_SOCK (the known_hosts copy is one of the files above).
	if p.SSHAgent {
		m, err := sshAgentMount(env, mounts, degraded)
		if err != nil {
			return nil, err
		}
		mounts = append(mounts, m)
		plan.Env = slices.DeleteFunc(plan.Env, func(kv string) bool { return strings.HasPrefix(kv, sshAuthSock+"=") })
		plan.Env = append(plan.Env, sshAuthSock+"="+agentSocket)
	}
	// 5. The sandbox's own record of its denials (package denials): a
	//    read-only directory in the private /run that only the supervisor
	//    can write to, named by $JAIL_DENIALS.
	if rec, why := denialRecord(mounts); rec != nil {
		mounts = append(mounts, *rec)
		plan.Env = slices.DeleteFunc(plan.Env, func(kv string) bool { return strings.HasPrefix(kv, denials.Env+"=") })
		plan.Env = append(plan.Env, denials.Env+"="+denials.Path)
	} else {
		plan.Notes = append(plan.Notes, "no record of denials inside ($"+denials.Env+"): "+why)
	}
	plan.Mounts = mounts
	plan.Env = withGitIdentity(plan.Env, ws, env, hostWritable(mounts, plan.past))
	plan.Env = withGitHubCredential(plan.Env)
	if n := goCacheNote(p.Command, plan.Env, home, cwd, mounts); n != "" {
		plan.Notes = append(plan.Notes, n)
	}
	plan.Writable = writable

	// The Landlock wall: read and execute everywhere the mounts show, write
	// only where the mounts allow it. Init drops paths that do not exist in
	// the sandbox (fewer rights, never more).
	rw := append([]string{}, writable...)
	rw = append(rw, "/tmp", "/var/tmp", "/dev/shm", "/dev/null", "/dev/zero", "/dev/full")
	if home != "" {
		rw = append(rw, home)
	}
	if plan.Counters, err = ucount.Plan(ucount.Source{}); err != nil {
		return nil, err
	}
	plan.Landlock = landlock.Rules{
		ReadExec: []string{"/"},
		// "/" is the host's live root filesystem, read-only: hiding data
		// places is decided at the start, so a top-level directory or
		// file the host makes later would be readable. Pinned, Landlock
		// grants only what "/" holds when init applies it (the mount tree
		// built); anything made there later can be listed, not read or run.
		PinRoot:   true,
		ReadWrite: rw,
		DevIoctl:  []string{"/dev/tty", "/dev/pts"},
		// Landlock TCP rules (ABI 4): only with --no-local-tcp. Under --net
		// none the sandbox's network namespace has nothing but its own
		// loopback: a server there (a test's httptest) is reachable from
		// inside only, and neither the host's 127.0.0.1 nor any route out
		// exists, so TCP there crosses no wall. Degraded mode, without a
		// network namespace, denies it anyway (setupDegraded).
		DenyTCP: p.Net == policy.NetNone && p.NoLocalTCP,
		// Except to jail's own refusal listeners in the sandbox (80, 443, 22):
		// under --net none they are all that those ports reach, and they
		// say "refused" in the client's protocol.
		ConnectTCP: connectPorts(p),
		// ABI 6: no abstract Unix socket or signal out of the sandbox's
		// Landlock domain (abstract sockets ignore the mount view).
		Scope:   true,
		Require: p.RequireLandlock,
		MaxABI:  p.LandlockMaxABI,
	}
	return plan, nil
}

// inStateDir refuses a bind that is, or lies in, jail's state directory;
// raws gives the values as the user wrote them (nil: the resolved paths).
func inStateDir(binds []ns.Mount, stateDir string, raws map[string]string) error {
	return inJailDir(binds, stateDir, "state directory (old audit trails, the run registry)", raws)
}

// configDirWhat names jail's config directory in reasons and refusals.
const configDirWhat = "config directory (config, profiles, trusted project files)"

// inJailDir refuses a bind that is, or lies in, jail's directory stateDir
// (what names it for the message).
func inJailDir(binds []ns.Mount, stateDir, what string, raws map[string]string) error {
	for _, b := range binds {
		// A cache's source is checked too ($XDG_CACHE_HOME inside the
		// state directory would show it).
		if src := b.BindSource(); src == stateDir || strings.HasPrefix(src, stateDir+"/") || b.Path == stateDir || strings.HasPrefix(b.Path, stateDir+"/") {
			v := b.Path
			if r, ok := raws[b.Path]; ok && r != "" {
				v = r
			}
			return &policy.FieldError{Key: b.Why, Value: v, Reason: fmt.Sprintf(
				"it is, or lies in, jail's %s %s: the sandbox never sees it; choose another path", what, stateDir)}
		}
	}
	return nil
}

// connectPorts are the TCP ports Landlock leaves open under --net none:
// those of jail's refusal listeners (nsnet.RefusalPorts).
func connectPorts(p *policy.Policy) []uint16 {
	if p.Net != policy.NetNone || !p.NoLocalTCP {
		return nil
	}
	return slices.Clone(nsnet.RefusalPorts)
}

// denialRecord returns the mount of the sandbox's record of denials, or why
// there is none: it needs the private tmpfs on /run (nothing may be created
// on the host) and a /run/jail that no other mount of the plan claims.
func denialRecord(mounts []ns.Mount) (*ns.Mount, string) {
	run := filepath.Dir(denials.Dir)
	hasRun := false
	for _, m := range mounts {
		if m.Path == run {
			// The last mount there is what /run is: a read or write
			// path at /run, bound after the private tmpfs, covers it, and
			// init's mkdir of /run/jail failed on the host's tree ("record
			// /run/jail: mkdir /run/jail: read-only file system", or made
			// it on the host through a writable one).
			hasRun = m.Kind == ns.KindTmpfs
		}
		if m.Path == denials.Dir || strings.HasPrefix(m.Path, denials.Dir+"/") {
			return nil, m.Path + " is mounted there"
		}
	}
	if !hasRun {
		return nil, run + " is not a private tmpfs on this host"
	}
	return &ns.Mount{Kind: ns.KindRecord, Path: denials.Dir, File: denials.File, Dir: true,
		Size: denials.DefaultBudget + 64<<10, FD: -1, Why: "the sandbox's record of its denials, $" + denials.Env + " (read-only; written by jail)"}, ""
}

// visibleIn reports whether path would be visible in the sandbox given the
// mounts so far: the deepest mount containing it is not a private tmpfs
// (no mount at all: the read-only view of the host root shows it).
func visibleIn(path string, mounts []ns.Mount) bool {
	deepest := deepestMount(path, mounts)
	return deepest == nil || deepest.Kind != ns.KindTmpfs
}

// deepestMount is the mount of mounts that holds path in the sandbox (nil
// where none does: the host's read-only view shows it).
func deepestMount(path string, mounts []ns.Mount) *ns.Mount {
	var deepest *ns.Mount
	for i := range mounts {
		m := &mounts[i]
		if pathUnder(path, m.Path) {
			if deepest == nil || len(m.Path) >= len(deepest.Path) { // later mounts cover earlier ones
				deepest = m
			}
		}
	}
	return deepest
}

// pathUnder reports whether path is dir or below it (dir may end in "/").
// Why not HasPrefix(path, dir+"/"): that concatenation, for each mount
// and each host socket (deepestMount from socketVisible), was most of a
// root start's time with another user's 50,000 sockets visible (socks15).
func pathUnder(path, dir string) bool {
	if path == dir {
		return true
	}
	d := strings.TrimSuffix(dir, "/")
	return len(path) > len(d) && path[len(d)] == '/' && path[:len(d)] == d
}

// resolveExisting makes p symlink-free as far as it exists (the rest is
// appended as is), so that a symlinked XDG_STATE_HOME or HOME cannot hide
// where the state directory really is.
func resolveExisting(p string) string {
	rest := ""
	for cur := filepath.Clean(p); ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return filepath.Clean(p)
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// readMountinfo reads the host's mount table (a test seam: a table with
// the second mounts only root can make).
var readMountinfo = fsrules.ReadMountinfo

// planEUID is who starts jail (a test seam).
var planEUID = os.Geteuid

// foreignNote: started by root, the agent is host uid 65534 and writable
// paths are idmapped mounts through which only root's files become the
// agent's; a path owned by another user stays that user's, read-only to
// the agent unless its mode lets anyone write. Said, rather than left to
// a puzzling EACCES.
func foreignNote(path, why string) string {
	if planEUID() != 0 {
		return ""
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil || st.Uid == 0 || st.Mode&0o002 != 0 {
		return ""
	}
	return fmt.Sprintf("read-only: %s (%s) is owned by uid %d, not root: started by root, the agent runs as nobody and cannot write it; start jail as that user (sudo -u '#%d' jail ...) or chown it to root", path, why, st.Uid, st.Uid)
}

// resolveRoots resolves the workspace and the write and read paths on the
// host, once, with every check that needs no walk of the trees: each exists,
// none makes the whole host writable, and a read-only workspace is not made
// writable again by a write path. It returns the workspace and the binds,
// shallow first, so that a deeper writable path inside a read-only one stays
// writable. raw maps each resolved path back to the value as given, for
// errors about it. Errors are *policy.FieldError or *policy.ConflictError.
func resolveRoots(p *policy.Policy, ws string, past *pastwrite.Set) ([]ns.Mount, map[string]string, error) {
	if ws == "/" && !p.ReadOnly {
		return nil, nil, &policy.FieldError{Key: "workspace", Value: "/", Reason: "the whole host: cd into a project directory, or give `workspace` one (`degraded` mode also takes it with `read-only`)"}
	}
	binds := map[string]ns.Mount{}
	raw := p.Workspace
	if raw == "" {
		raw = ws
	}
	raws := map[string]string{ws: raw}
	var grants []grant
	addBind := func(key, raw string, rw bool, why string) error {
		path, err := policy.ResolvePath(key, ws, raw)
		if err != nil {
			return err
		}
		if key != "workspace" {
			grants = append(grants, grant{key: key, raw: raw, path: path, rw: rw})
		}
		if _, seen := raws[path]; !seen {
			raws[path] = raw
		}
		if path == "/" && rw {
			return &policy.FieldError{Key: key, Value: raw, Reason: "the whole host cannot be writable"}
		}
		// A write path at or above the workspace makes it writable again.
		if rw && p.ReadOnly && key != "workspace" && (ws == path || strings.HasPrefix(ws, path+"/")) {
			return &policy.ConflictError{Key1: "read-only", Key2: key, Value2: raw,
				Reason: "a read-only workspace cannot be writable too; drop one of the two"}
		}
		fi, err := os.Stat(path)
		if err != nil {
			return &policy.FieldError{Key: key, Value: raw, Reason: err.Error()}
		}
		kind := ns.KindROBind
		if rw {
			kind = ns.KindBind
		}
		if old, ok := binds[path]; ok && old.Kind == ns.KindBind {
			return nil // writable wins over read-only for the same path
		}
		// NoLinks: path is resolved, and grantLinks checks the links that
		// led to it; init opens it with none on the way (a link put there
		// since is refused, not followed).
		binds[path] = ns.Mount{Kind: kind, Path: path, NoLinks: true, Dir: fi.IsDir(), FD: -1, Why: why}
		return nil
	}
	if err := addBind("workspace", ws, !p.ReadOnly, "workspace"); err != nil {
		return nil, nil, err
	}
	for _, w := range p.Write {
		if err := addBind("write", w, true, "write"); err != nil {
			return nil, nil, err
		}
	}
	for _, r := range p.Read {
		if err := addBind("read", r, false, "read"); err != nil {
			return nil, nil, err
		}
	}
	if err := grantLinks(ws, !p.ReadOnly, grants, binds, past); err != nil {
		return nil, nil, err
	}
	if p.Workspace != "" {
		if err := workspaceLinks(p.Workspace, ws, grants, binds, past); err != nil {
			return nil, nil, err
		}
	}
	var bl []ns.Mount
	for _, b := range binds {
		bl = append(bl, b)
	}
	sortBinds(bl)
	return bl, raws, nil
}

// grant is one write or read path as resolveRoots bound it.
type grant struct {
	key, raw string
	path     string // what it was resolved to, and is bound
	rw       bool
}

// grantLinks refuses a write or read path reached through a symlink that
// lies in the workspace or in a write path, unless the path it leads to is
// given too, by a way with no symlink, with at least the same access (or
// lies in the writable workspace). The bind is of the link's target,
// resolved at start; a command run in the sandbox can write those trees,
// so an earlier run can have pointed the link elsewhere (~/.ssh, a
// dotfile's directory) for this one to grant (trustfollow). The workspace
// counts even when read-only now: it was writable in earlier runs. A link
// elsewhere (~/.cache -> /data/cache) is the user's and works at its own
// path, as before, unless it lies in a tree an earlier run made writable
// (past: an earlier --write path, another project's workspace), which a
// command run then could have pointed anywhere as well (prevwrite).
func grantLinks(ws string, wsWritable bool, grants []grant, binds map[string]ns.Mount, past *pastwrite.Set) error {
	trees := []string{ws}
	for _, b := range binds {
		if b.Kind == ns.KindBind {
			trees = append(trees, b.Path)
		}
	}
	type linked struct {
		grant
		links []hostpath.Link
	}
	var viaLinks []linked
	// The paths given with no link on the way, and whether writable; the
	// workspace is one (what lies in it is granted already).
	direct := map[string]bool{ws: wsWritable}
	for _, g := range grants {
		abs, err := policy.AbsPath(g.key, ws, g.raw)
		if err != nil {
			return err
		}
		final, links, err := hostpath.Resolve(abs)
		if err == nil && final != g.path {
			err = fmt.Errorf("now leads to %s", final)
		}
		if err != nil {
			// Why: the links checked must be those of the path bound;
			// one that changes while jail starts (a sandbox still
			// running retargets it) is refused, not guessed at.
			return &policy.FieldError{Key: g.key, Value: g.raw, Reason: fmt.Sprintf(
				"resolved to %s, then changed while jail started (%v): a command running in a sandbox may be changing it", g.path, err)}
		}
		if len(links) == 0 {
			direct[g.path] = direct[g.path] || g.rw
			continue
		}
		viaLinks = append(viaLinks, linked{g, links})
	}
	for _, g := range viaLinks {
		covered := false
		for d, rw := range direct {
			if enclosing(g.path, []string{d}) != "" && (rw || !g.rw) {
				covered = true // the user named the target itself (or its tree)
				break
			}
		}
		if covered {
			continue
		}
		if l, what, ok := retargetable(g.links, trees, ws, past); ok {
			// Why: a link the sandbox could have retargeted must not
			// choose what this run grants.
			return linkRefused(g.key, g.raw, l, what, g.path)
		}
	}
	return nil
}

// retargetable returns the first of links that a command run in a sandbox
// can have pointed elsewhere, and where it lies in words: one in trees
// (the workspace ws, writable in earlier runs even when read-only now,
// and the write paths), or in a tree an earlier run made writable (past).
// A link that is such a tree's own root is judged by past alone.
func retargetable(links []hostpath.Link, trees []string, ws string, past *pastwrite.Set) (hostpath.Link, string, bool) {
	for _, l := range links {
		tree := enclosing(l.Path, trees)
		what := "the workspace " + ws
		if tree != ws {
			what = "the writable " + tree
		}
		if tree == "" || tree == l.Path {
			// Why: a tree only an earlier run could write holds
			// links its command may have made, as this run's do.
			t, ok := past.Holds(l.Path)
			if !ok {
				continue
			}
			what = t + ", writable in an earlier run"
		}
		return l, what, true
	}
	return hostpath.Link{}, "", false
}

// linkRefused is the refusal of the path raw given as key, which leads
// through the link l (in what: retargetable's words) to final.
func linkRefused(key, raw string, l hostpath.Link, what, final string) error {
	return &policy.FieldError{Key: key, Value: raw, Reason: fmt.Sprintf(
		"leads through the symlink %s, in %s, which a command run in the sandbox can point elsewhere, to %s: give that path itself (`%s` %s) if you mean it",
		l.Path, what, final, key, final)}
}

// workspaceLinks is grantLinks' rule for the workspace the user named
// (--workspace, `workspace`: raw, resolved from / as workspaceOf does): a
// symlink on its way that lies in a write path is refused unless the
// workspace is given as a write path itself, with no link on the way. The
// workspace is bound writable at the link's target, resolved at start; a
// command run in the sandbox (this one's, or an earlier run's with the
// same write path) can point that link anywhere (~/.ssh), and the next
// run with the same flags would make it the writable workspace
// (review14f). A link elsewhere (~/src -> /data/src) is the user's and
// works as before; so does one in the workspace it leads to (a loop back
// to itself), which is not a write path of its own. A link in a tree an
// earlier run made writable (past) is refused like one in a write path
// now (prevwrite).
func workspaceLinks(raw, ws string, grants []grant, binds map[string]ns.Mount, past *pastwrite.Set) error {
	abs, err := policy.AbsPath("workspace", "/", raw)
	if err != nil {
		return err
	}
	final, links, err := hostpath.Resolve(abs)
	if err == nil && final != ws {
		err = fmt.Errorf("now leads to %s", final)
	}
	if err != nil {
		// Why: the links checked must be those of the workspace bound.
		return &policy.FieldError{Key: "workspace", Value: raw, Reason: fmt.Sprintf(
			"resolved to %s, then changed while jail started (%v): a command running in a sandbox may be changing it", ws, err)}
	}
	if len(links) == 0 {
		return nil
	}
	var trees []string
	for _, b := range binds {
		if b.Kind == ns.KindBind && b.Path != ws {
			trees = append(trees, b.Path)
		}
	}
	for _, g := range grants {
		if !g.rw || enclosing(ws, []string{g.path}) == "" {
			continue
		}
		// Named as a write path by a way with no link: the user's choice.
		abs, err := policy.AbsPath(g.key, ws, g.raw)
		if err != nil {
			continue
		}
		if _, gl, err := hostpath.Resolve(abs); err == nil && len(gl) == 0 {
			return nil
		}
	}
	for _, l := range links {
		tree := enclosing(l.Path, trees)
		what := "the writable " + tree
		if tree == "" || tree == l.Path {
			// Why: as grantLinks, a tree only an earlier run could
			// write holds links its command may have made. Not one in
			// the workspace it leads to (a loop back to itself).
			t, ok := past.Holds(l.Path)
			if !ok || enclosing(l.Path, []string{ws}) != "" {
				continue
			}
			what = t + ", writable in an earlier run"
		}
		// Why: a link the sandbox could have retargeted must not choose
		// the tree this run makes writable.
		return &policy.FieldError{Key: "workspace", Value: raw, Reason: fmt.Sprintf(
			"leads through the symlink %s, in %s, which a command run in the sandbox can point elsewhere, to %s: give that path itself (`workspace` %s) if you mean it",
			l.Path, what, ws, ws)}
	}
	return nil
}

// sortBinds orders binds shallow first (then by path), so that a deeper
// writable path inside a read-only one stays writable.
// ownCaches returns the paths of the caches that are jail's own directories
// (a Source of their own), not the host's (--host-caches).
func ownCaches(caches []ns.Mount) []string {
	var out []string
	for _, c := range caches {
		if c.Source != "" && c.Source != c.Path {
			out = append(out, c.Path)
		}
	}
	return out
}

func sortBinds(bl []ns.Mount) {
	sort.Slice(bl, func(i, j int) bool {
		if di, dj := depth(bl[i].Path), depth(bl[j].Path); di != dj {
			return di < dj
		}
		return bl[i].Path < bl[j].Path
	})
}

// invalid marks err as the user's to fix (policy.ErrInvalid), keeping its
// type for a reader that names the value's source.
func invalid(err error) error {
	if errors.Is(err, policy.ErrInvalid) {
		return err
	}
	return &invalidError{err}
}

type invalidError struct{ error }

func (e *invalidError) Unwrap() []error { return []error{e.error, policy.ErrInvalid} }

// mergeMasks adds gitguard's read-only and hidden paths to fsrules' masks:
// one list, sorted so that a parent comes before anything inside it, with
// what an earlier mask covers already left out (a hidden directory hides
// everything in it, a read-only one keeps everything in it read-only).
func mergeMasks(fm []fsrules.Mask, gp gitguard.Plan) []fsrules.Mask {
	byPath := map[string]fsrules.Mask{}
	for _, m := range fm {
		byPath[m.Path] = m
	}
	add := func(ps []gitguard.Protect, kind fsrules.Kind) {
		for _, p := range ps {
			if old, ok := byPath[p.Path]; ok && (old.Kind == fsrules.Hide || old.Kind == kind) {
				continue
			}
			byPath[p.Path] = fsrules.Mask{Path: p.Path, Kind: kind, Dir: p.Dir, Rule: "git: " + p.Why}
		}
	}
	add(gp.ReadOnly, fsrules.ReadOnly)
	add(gp.History, fsrules.ReadOnly)
	add(gp.Hide, fsrules.Hide)
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []fsrules.Mask
	// The directories kept so far, by path: a path's ancestors are looked
	// up (its depth in lookups), not every directory compared with every
	// path -- 2,000 repositories in a writable tree (each git dir's hooks a
	// read-only directory) made that 40 million string joins, 1.4 s of a
	// start (gitpacks3).
	hidden, ro := map[string]bool{}, map[string]bool{}
	within := func(p string, dirs map[string]bool) bool {
		if len(dirs) == 0 {
			return false
		}
		for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
			if dirs[d] {
				return true
			}
		}
		return false
	}
	for _, p := range paths {
		m := byPath[p]
		if within(p, hidden) || (m.Kind == fsrules.ReadOnly && within(p, ro)) {
			continue
		}
		out = append(out, m)
		if m.Dir && m.Kind == fsrules.Hide {
			hidden[p] = true
		}
		if m.Dir && m.Kind == fsrules.ReadOnly {
			ro[p] = true
		}
	}
	return out
}

// whyHistory is the mount reason of a git pack (gitguard.Plan.History).
const whyHistory = "git: " + gitguard.HistoryWhy

// enclosingBind reports whether p is a directory bind in binds or lies
// inside one.
func enclosingBind(p string, binds []ns.Mount) bool {
	for _, b := range binds {
		if b.Dir && enclosing(p, []string{b.Path}) != "" {
			return true
		}
	}
	return false
}

// hiddenPaths lists the places the sandbox replaces with an empty tmpfs:
// the tmpfs of mounts that no later bind covers again (a workspace /home
// shows /home/u through its own recursive bind).
func hiddenPaths(mounts []ns.Mount) []string {
	var out []string
	for i, m := range mounts {
		if m.Kind != ns.KindTmpfs {
			continue
		}
		covered := false
		for _, b := range mounts[i+1:] {
			if (b.Kind == ns.KindBind || b.Kind == ns.KindROBind) && enclosing(m.Path, []string{b.Path}) != "" {
				covered = true
			}
		}
		if !covered {
			out = append(out, m.Path)
		}
	}
	return out
}

// enclosing returns the deepest root in roots that contains p, or "".
func enclosing(p string, roots []string) string {
	best := ""
	for _, r := range roots {
		if (p == r || strings.HasPrefix(p, r+"/")) && len(r) > len(best) {
			best = r
		}
	}
	return best
}

func lookupEnv(env []string, name string) string {
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			return kv[len(name)+1:]
		}
	}
	return ""
}

// Print writes the plan for --dry-run, one step a line, each line inert on
// a terminal (safeLines).
func (pl *Plan) Print(w io.Writer) {
	w = safeLines{w}
	fmt.Fprintf(w, "workspace  %s\n", pl.Workspace)
	fmt.Fprintf(w, "root       / read-only, nosuid, nodev (recursive bind of the host root)\n")
	for _, m := range pl.Mounts {
		extra := ""
		if m.Kind == ns.KindTmpfs && m.Size > 0 {
			extra = fmt.Sprintf(" size=%d mode=%#o", m.Size, m.Mode)
		}
		if m.Kind == ns.KindSymlink {
			extra = " -> " + m.Link
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
	pin := ""
	if pl.Landlock.PinRoot {
		pin = " (/: its entries at the start; later ones list-only)"
	}
	fmt.Fprintf(w, "landlock   read+exec %s%s; read+write %s; tty ioctl %s; deny tcp %v; scoped %v; require ABI %d\n",
		strings.Join(pl.Landlock.ReadExec, " "), pin, strings.Join(pl.Landlock.ReadWrite, " "),
		strings.Join(pl.Landlock.DevIoctl, " "), pl.Landlock.DenyTCP, pl.Landlock.Scope, pl.Landlock.Require)
	for _, c := range pl.Counters {
		fmt.Fprintf(w, "counter    %s\n", c)
	}
	for _, l := range pl.Lifted {
		fmt.Fprintf(w, "lifted     %s  (no-default-deny-at: no built-in protection but git's applies here or below)\n", l)
	}
	for _, g := range pl.Guarded {
		what := "any change put back"
		if n := len(g.File.Keys); n > 0 {
			what = fmt.Sprintf("%d command keys kept as on the host: %s", n, g.File.Why)
		}
		fmt.Fprintf(w, "guard      %s (%s; %s)\n", g.Path, g.File.Agent, what)
	}
	pl.printWatched(w)
	for _, n := range pl.Notes {
		fmt.Fprintf(w, "note       %s\n", n)
	}
}

// printWatched lists what the sentinel watches while the sandbox runs and
// what the exit check covers.
func (pl *Plan) printWatched(w io.Writer) {
	const moved = "absent at start: moved to the quarantine if it appears"
	for _, a := range pl.Absent {
		fmt.Fprintf(w, "watch      %s  (%s; %s)\n", a.Path, a.Rule, moved)
	}
	for _, g := range pl.Globs {
		fmt.Fprintf(w, "watch      %s/%s  (%s; a new name: moved to the quarantine)\n", g.Dir, g.Pattern, g.Rule)
	}
	for _, d := range pl.PyDirs {
		fmt.Fprintf(w, "observe    %s  (python imports from here for %s: a module new here is moved to the quarantine)\n", d.Dir, d.Script)
	}
	g := pl.Git
	if g == nil {
		if len(pl.Absent) > 0 || len(pl.Globs) > 0 || len(pl.PyDirs) > 0 {
			fmt.Fprintf(w, "exit       the paths above are checked again when the sandbox ends\n")
		}
		return
	}
	for _, a := range g.Absent {
		fmt.Fprintf(w, "watch      %s  (git: %s; %s)\n", a.Path, a.Why, moved)
	}
	for _, a := range g.Watch {
		fmt.Fprintf(w, "watch      %s  (git: %s; absent at start: judged when it appears, a config keeps only its harmless keys)\n", a.Path, a.Why)
	}
	for _, d := range g.Observe {
		fmt.Fprintf(w, "observe    %s  (git: a new .git, git init, worktree or submodule here is judged as it appears)\n", d)
	}
	for _, r := range g.Repos {
		fmt.Fprintf(w, "git        repository %s: its control files are read-only (listed above)\n", r)
	}
	fmt.Fprintf(w, "git        exit check: every writable tree is walked for .git entries and git dirs that were not there at start, and every watched path is checked again\n")
}

// IsInvalid reports whether err is the user's to fix.
func IsInvalid(err error) bool { return errors.Is(err, policy.ErrInvalid) }

// safeLines writes each Write (one Fprintf: one line) with its control
// characters escaped but its final newline. Why: --dry-run's lines name
// paths that others chose: a host socket's name is any local user's
// (bind(2) in a directory of theirs), a file's in the workspace may be an
// earlier agent's; an escape sequence in one reached the user's terminal
// as it was (a title, a cleared screen, a clipboard write with OSC 52, a
// line overwritten so a mask seems absent).
type safeLines struct{ w io.Writer }

func (s safeLines) Write(p []byte) (int, error) {
	line, nl := strings.CutSuffix(string(p), "\n")
	line = termsafe.Escape(line)
	if nl {
		line += "\n"
	}
	if _, err := io.WriteString(s.w, line); err != nil {
		return 0, err
	}
	return len(p), nil
}

// uncovered drops the targets inside a directory masked whole (hidden,
// such as a directory its owner cannot read, or read-only): the agent can
// write nothing there, and the guard, which could not read it either,
// would refuse the start (New).
func uncovered(guarded []agentcfg.Target, masks []fsrules.Mask) []agentcfg.Target {
	var dirs []string
	for _, m := range masks {
		if m.Dir {
			dirs = append(dirs, m.Path)
		}
	}
	if len(dirs) == 0 {
		return guarded
	}
	out := guarded[:0:0]
	for _, t := range guarded {
		// A mask above the target's writable root does not count: the
		// root's own bind, made after it, may show the tree again.
		if d := enclosing(filepath.Dir(t.Path), dirs); d == "" || enclosing(d, []string{t.Root}) == "" {
			out = append(out, t)
		}
	}
	return out
}

// guardedWays replaces each guarded target whose way, below its writable
// root, holds a symlink (ws/.claude -> cfg/claude, a shared configuration)
// with what the host's agent reads through it: the file where the links
// lead, guarded there when a writable root holds it, and each link on the
// way (format Whole, as gitLinks). The guard reads nothing through a
// symlink below its root (the agent controls every name there), so such a
// target was left out, only said: the agent wrote its hooks through the
// link, or replaced the link with a directory of its own, and the host's
// next session in the workspace ran them (session 18). A way that loops
// has only its links guarded (nothing is read through it); one jail cannot
// resolve otherwise stays as it is: New refuses it.
//
// pins are the directories such a way passes and leaves (b in
// .claude -> b/../cfg/claude), inside a writable root: what the way leads to
// changes with them, and neither the links nor the file shows it: the
// caller pins them. A guarded target that is itself a link (gitLinks,
// jailDirLinks: ~/.config/jail -> b/../../dotfiles/jail) counts its own
// way too: the link's text held, b swapped for a link of the agent's made
// every later run read the agent's config.toml (session 19). r is the
// pass's resolver (nil: names looked up afresh).
func guardedWays(r *hostpath.Resolver, guarded []agentcfg.Target, roots []agentcfg.Root) (targets []agentcfg.Target, pins []wayPin) {
	out := guarded[:0:0]
	seen := make(map[string]bool, len(guarded))
	for _, t := range guarded {
		seen[t.Path] = true
	}
	type way struct {
		agent string
		links []gitguard.Protect
	}
	var ways []way
	for _, t := range guarded {
		if t.InPlace {
			out = append(out, t)
			continue
		}
		if fi, err := os.Lstat(t.Path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if end, via, err := resolveNamedBy(r, t.Path); err == nil || errors.Is(err, hostpath.ErrLoop) {
				for _, d := range leftDirs(r, t.Path, end, via, roots) {
					pins = append(pins, wayPin{Dir: d, Of: t.Path})
				}
			}
		}
		// The file's own name is not resolved: a symlink there is
		// guarded as one.
		dir, via, err := resolveNamedBy(r, filepath.Dir(t.Path))
		loop := errors.Is(err, hostpath.ErrLoop) && len(via) > 0
		if (err != nil && !loop) || len(via) == 0 {
			out = append(out, t)
			continue
		}
		w := way{agent: t.File.Agent}
		for _, l := range via {
			w.links = append(w.links, gitguard.Protect{Path: l, Why: "a symlink on the way to " + t.Path + ", which the host's " + t.File.Agent + " follows"})
		}
		ways = append(ways, w)
		for _, d := range leftDirs(r, filepath.Dir(t.Path), dir, via, roots) {
			pins = append(pins, wayPin{Dir: d, Of: t.Path})
		}
		if loop {
			// A loop: the host's agent reads nothing there, and only a
			// change of one of its links (guarded) makes it read
			// something. Kept as a target, its way unopenable, the guard
			// refused the start, every start, and the agent makes such a
			// loop where its run guards nothing (sub/.claude -> .claude,
			// then jail in sub: session 18, review18d).
			continue
		}
		real := filepath.Join(dir, filepath.Base(t.Path))
		r := enclosing(real, rootPaths(roots))
		if r == "" || seen[real] {
			continue // read-only inside (only the links can change), or guarded
		}
		rt := agentcfg.Target{File: t.File, Path: real, Root: r}
		if r == real {
			if slices.ContainsFunc(roots, func(x agentcfg.Root) bool { return x.Path == r && x.Dir }) {
				continue // a directory where the file should be: the guard has nothing to write
			}
			rt.InPlace = true
		}
		seen[real] = true
		out = append(out, rt)
	}
	for _, w := range ways {
		out = append(out, linkTargets(w.agent, w.links, roots, out)...)
	}
	return out, pins
}

// degradedWays refuses a degraded plan with ways to pin. Why: no mounts,
// so no pin: the agent swaps the directory the link passes for a link of
// its own, the guarded link's text and file unchanged, and the host's
// tools (or jail's next start, for a policy file) read the agent's file
// through it (review18d's hole, open under --degraded: session 19).
// Refused, not left: nothing else holds it.
func degradedWays(degraded bool, ways []wayPin) error {
	if !degraded || len(ways) == 0 {
		return nil
	}
	w := ways[0]
	return invalid(fmt.Errorf("the way to %s passes %s and leaves it (a \"..\" in a symlink), and --degraded cannot pin that directory against the sandbox: make the symlink point straight at its target (ln -sfn), or run without --degraded", w.Of, w.Dir))
}

// gitWays are the directories the way to each of ways (gitguard's
// Plan.Ways: a user's core.hooksPath ws/l/../hooks, l -> sub/dir) passes
// and leaves. Why: git hands the path to the kernel, which walks the ".."
// from the link's target; the link is guarded and the hooks read-only,
// but the agent swapped sub/dir for a link into a tree of its own and
// every repository of the host ran its hooks (review20a). r is the pass's
// resolver (nil: names looked up afresh).
func gitWays(r *hostpath.Resolver, ways []gitguard.Protect, roots []agentcfg.Root) []wayPin {
	var pins []wayPin
	for _, w := range ways {
		end, via, err := resolveNamedBy(r, w.Path)
		if err != nil && !errors.Is(err, hostpath.ErrLoop) {
			continue
		}
		for _, d := range leftDirs(r, w.Path, end, via, roots) {
			pins = append(pins, wayPin{Dir: d, Of: w.Path})
		}
	}
	return pins
}

// wayPin is a directory (Dir) the way to a guarded path (Of) passes and
// leaves.
type wayPin struct{ Dir, Of string }

// leftDirs lists the directories resolving p passes and then leaves by a
// ".." in a link (neither the way to end, where p leads, nor to a link of
// via), inside a writable root and below it. r is the pass's resolver
// (nil: names looked up afresh).
func leftDirs(r *hostpath.Resolver, p, end string, via []string, roots []agentcfg.Root) []string {
	held := append([]string{end}, via...)
	under := func(d string) bool {
		for _, h := range held {
			if d == h || strings.HasPrefix(h, d+"/") {
				return true
			}
		}
		return false
	}
	var out []string
	_, _ = r.Walk(p, func(s hostpath.Step) error {
		if s.Err != nil || s.Info == nil || !s.Info.IsDir() || under(s.Path) {
			return nil
		}
		if r := enclosing(s.Path, rootPaths(roots)); r != "" && r != s.Path {
			out = append(out, s.Path)
		}
		return nil
	})
	return out
}

// unguardedNote starts the note for a guarded path masked for the run.
const unguardedNote = "agent configuration masked: "

// unguardedMasks takes out of plan.Guarded the paths that hold, at start,
// what the guard cannot snapshot (a FIFO, a directory, a file larger than
// agentcfg.MaxSize), and masks them. Left unguarded, the agent could
// unlink or rename away what the host put there and write a settings file
// of its own (hooks the host's next agent session runs) that outlives the
// run: it fails closed instead. The mask is an empty, mode-0, read-only
// file (a directory over a directory): a mount point, which the agent can
// neither unlink nor rename over (EBUSY); the pins made for every mask
// keep the directories above it from being renamed away, and maskwatch
// says when the host takes it away. The host's path is left as it is.
func unguardedMasks(plan *Plan) ([]fsrules.Mask, []string) {
	ok, bad := agentcfg.Unguardable(plan.Guarded)
	if len(bad) == 0 {
		return nil, nil
	}
	plan.Guarded = ok
	masks := make([]fsrules.Mask, 0, len(bad))
	notes := make([]string, 0, len(bad))
	for _, u := range bad {
		masks = append(masks, fsrules.Mask{Path: u.Target.Path, Kind: fsrules.Hide, Dir: u.Dir,
			Rule: "agent configuration jail cannot guard: " + u.What})
		notes = append(notes, fmt.Sprintf("%s%s is %s, not a file jail can guard: hidden for the run (an empty, unreadable %s the agent cannot replace)",
			unguardedNote, u.Target.Path, u.What, map[bool]string{false: "file", true: "directory"}[u.Dir]))
	}
	return masks, notes
}

// exitNameSet is what the exit check judges by name (gitguard's
// Guard.Names, Kept and Covered).
type exitNameSet struct {
	names   map[string]string
	kept    map[string]bool
	covered []string
}

// exitNames are fsrules.ExitNames, none under --no-default-deny, with the
// files of those names the walk found at start (its masks: kept
// read-only or hidden then, not the agent's), and the directories whose
// insides the agent cannot write on the host: a directory masked whole
// (read-only or hidden), a cache of jail's own mounted over the host's
// path, a private tmpfs (hidden, binds: the plan's so far), each inside
// a writable root (the one holding a root, /tmp around a workspace in it,
// covers nothing the agent writes). What is in them on the host is the
// host's, whatever its change time. degraded: no mount holds any of
// that, so nothing is kept or covered (a file is judged by its change
// time alone).
func exitNames(p *policy.Policy, masks []fsrules.Mask, hidden, binds []ns.Mount, writable []string, degraded bool) exitNameSet {
	if p.NoDefaultDeny {
		return exitNameSet{}
	}
	set := exitNameSet{names: fsrules.ExitNames(), kept: map[string]bool{}}
	if degraded {
		return set
	}
	inside := func(d string) bool {
		for _, w := range writable {
			if strings.HasPrefix(d, w+"/") {
				return true
			}
		}
		return false
	}
	for _, m := range masks {
		if m.Dir && inside(m.Path) {
			set.covered = append(set.covered, m.Path)
		} else if !m.Dir && set.names[asciifold.Lower(filepath.Base(m.Path))] != "" {
			set.kept[m.Path] = true
		}
	}
	for _, m := range hidden {
		if m.Kind == ns.KindTmpfs && inside(m.Path) {
			set.covered = append(set.covered, m.Path)
		}
	}
	for _, b := range binds {
		if b.Source != "" && inside(b.Path) {
			set.covered = append(set.covered, b.Path)
		}
	}
	return set
}
