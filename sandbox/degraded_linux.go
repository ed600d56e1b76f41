package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/denials"
	"github.com/jail-sandbox/jail/hostcheck"
	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/notice"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/procstat"
	"github.com/jail-sandbox/jail/sandbox/inithooks"
)

// This file: degraded mode (--degraded), for hosts that refuse namespaces
// (containers, CI jobs, another sandbox). Without a mount namespace the
// plan's hiding and masking cannot be done with mounts; Landlock does what
// it can of it: read and execute only on the paths the plan leaves
// visible, computed as their cover (every sibling of a hidden path, down
// to it), write only on the writable ones. What Landlock cannot do (hide a
// file inside a tree the agent may write, make a file read-only inside
// it) is listed, said and recorded.

// degradedNotes is what degraded mode does not protect, one line each, for
// stderr (-v), --dry-run and the trail's start event.
var degradedNotes = []string{
	"degraded: no namespaces: jail runs the command with Landlock, seccomp, no_new_privs and rlimits only",
	"degraded: no mount masks: secrets inside writable paths (.env, *.pem, keys in the workspace) are readable, and the read-only files inside them (shell rc files, .vscode/, .claude/commands/ and the other agent and editor files) are writable; git's are watched instead (what the agent writes in .git/hooks, a hooksPath directory or a git control file is moved to the quarantine) and agent configuration keys are guarded as usual",
	"degraded: no pid namespace: the sandbox sees the host's processes and their command lines (Landlock ABI 6 scoping stops signals to them; ptrace is refused)",
	"degraded: no network namespace: `net` none is seccomp refusing IP and Unix sockets (socketpair stays); `net` allow is not available",
	"degraded: no ipc or uts namespace; the host's /tmp, /dev/shm and /run are unreadable, TMPDIR is a private directory",
	// Not masked with a mount (none here), and Landlock cannot help: it
	// only allows, so hiding one file of /proc means allowing each of its
	// siblings instead of /proc, and the /proc/PID of every process
	// started later (the agent's own /proc/self) would be unreadable.
	// keyctl, which reads the payloads, is refused by seccomp as always.
	"degraded: /proc/keys and /proc/key-users are not masked: the agent sees the names of your kernel keys (not their contents: keyctl stays refused)",
	"degraded: if jail itself is SIGKILLed, processes the agent left may outlive it (no pid namespace whose end kills them)",
	"degraded: refused connections are not answered by name and there is no record of denials inside ($JAIL_DENIALS); the guard rail's notices remain",
}

// decideDegraded says whether this run goes without namespaces, and why:
// only when --degraded is given and the host refuses what a run does (the
// same probe as jail doctor), or when a test forces it.
func (r *runner) decideDegraded() (bool, string) {
	if r.pol.ForceDegraded {
		return true, "forced (`x-degraded`, testing)"
	}
	if !r.pol.Degraded {
		return false, ""
	}
	err := ns.Probe(os.Getuid() == 0, r.pol.Net == policy.NetHost)
	if err == nil {
		return false, ""
	}
	f := hostcheck.Read("", os.Environ(), os.Getuid())
	return true, hostcheck.Diagnose(f, probeErr(err)).Why
}

// checkDegraded refuses what degraded mode cannot do.
func checkDegraded(p *policy.Policy) error {
	if p.Net == policy.NetAllow {
		key := "degraded"
		if p.ForceDegraded && !p.Degraded {
			key = "x-degraded"
		}
		// Name what asked for egress: the first allow rule, else net itself.
		rk, rv := "net", p.Net
		for _, r := range []struct {
			key  string
			vals []string
		}{{"allow-domain", p.AllowDomain}, {"allow-ip", p.AllowIP}, {"allow-host-port", p.AllowHostPort}, {"publish", p.Publish}, {"publish-if-free", p.PublishIfFree}} {
			if len(r.vals) > 0 {
				rk, rv = r.key, r.vals[0]
				break
			}
		}
		return &policy.ConflictError{Key1: key, Key2: rk, Value2: rv, Reason: "`degraded` mode cannot filter egress (no network namespace here): use `net` none (the default) or `net` host (no filtering), or run where user namespaces work"}
	}
	if ns, _ := landlockABI(); ns <= 0 {
		return &policy.FieldError{Key: "degraded", Reason: "needs Landlock (Linux 5.13+ with lsm=...,landlock): without namespaces it is the only filesystem wall"}
	}
	return nil
}

func landlockABI() (int, error) { return landlock.ABI(), nil }

// degradedRules turns the final mount plan into Landlock rules for a run
// without a mount namespace. tmp is the private TMPDIR (read-write). It
// returns the rules and the protected paths Landlock cannot protect (masks
// and read-only files inside writable trees).
func degradedRules(mounts []ns.Mount, base landlock.Rules, tmp string) (landlock.Rules, []string, error) {
	var hidden, ro, rw, lost []string
	packs := 0
	for _, m := range mounts {
		switch m.Kind {
		case ns.KindTmpfs:
			hidden = append(hidden, m.Path)
		case ns.KindROBind:
			ro = append(ro, m.Path)
		case ns.KindBind:
			if m.Source != "" {
				// A cache: jail's own directory mounted at the tool's path.
				// Without a mount namespace it cannot be put there, and
				// granting the path would hand the host's own cache over:
				// it stays unwritable (fewer rights, never more).
				continue
			}
			rw = append(rw, m.Path)
		}
	}
	for _, m := range mounts {
		if m.Why == whyHostSocket {
			// A plan made before the run fell back to degraded mode: its
			// host sockets need no Landlock cover (listing their
			// directories, where other runs' files come and go), since
			// seccomp refuses socket(AF_UNIX) here (NoUnix).
			continue
		}
		switch m.Kind {
		case ns.KindMask, ns.KindReadOnly:
			if m.Why == whyHistory {
				if enclosing(m.Path, rw) != "" {
					packs++
				}
				continue
			}
			if enclosing(m.Path, rw) != "" {
				lost = append(lost, m.Path)
			} else if m.Kind == ns.KindMask {
				hidden = append(hidden, m.Path)
			}
		}
	}
	// The host's /dev: its shared memory (writable by every user), and
	// every terminal of the host: the user's other terminals and tmux
	// panes (/dev/pts/N, the user's own: Landlock was all that stood
	// between the agent and writing escape sequences to them, or reading
	// the keys typed there), the user's terminal jail hands on read-only
	// as stdin (reopened for writing through /proc/self/fd/0), consoles,
	// serial lines, and whatever device the user's groups or seat ACLs
	// open (cameras, sound, security keys; without ABI 5 Landlock does not
	// check their ioctls). Under namespaces /dev is the sandbox's own; here
	// only the same few nodes are (devNodes), and the agent's terminal is
	// the descriptors it was given plus /dev/tty.
	hidden = append(hidden, "/dev")
	visible, err := cover("/", hidden)
	if err != nil {
		return landlock.Rules{}, nil, err
	}
	r := base
	// A --read path inside a hidden place reappears, like its bind would.
	r.ReadExec = append(append(visible, ro...), "/dev/random", "/dev/urandom")
	r.ReadOnly = nil
	// /dev/tty is the caller's controlling terminal, whatever its path:
	// the relayed pty, or none (ENXIO). /dev/pts would be the host's.
	r.DevIoctl = nil
	for _, d := range base.DevIoctl {
		if d == "/dev/tty" {
			r.DevIoctl = append(r.DevIoctl, d)
		}
	}
	r.ReadWrite = append(append([]string{}, rw...), tmp, "/dev/null", "/dev/zero", "/dev/full")
	// Without a network namespace, Landlock's TCP rule is all there is for
	// TCP under --net none (seccomp also refuses IP sockets), and there are
	// no refusal listeners: their ports would be the host's.
	r.ConnectTCP = nil
	sort.Strings(lost)
	if packs > 0 {
		// One entry for them all: a repository has many packs, each a
		// .pack and its .idx.
		lost = append(lost, fmt.Sprintf("(git history: %d pack files)", packs))
	}
	return r, lost, nil
}

// cover returns paths whose trees together hold everything under root
// except the hidden paths: for each directory between root and a hidden
// path, its other entries. Symlinks are left out (Landlock checks a path by
// where it resolves; a symlink's target is covered, or hidden, on its own).
// Entries that appear later are not covered: fewer rights, never more.
func cover(root string, hidden []string) ([]string, error) {
	clean := map[string]bool{}
	for _, h := range hidden {
		clean[filepath.Clean(h)] = true
	}
	if clean[root] {
		return nil, nil
	}
	// isAncestor: d holds some hidden path below it.
	isAncestor := func(d string) bool {
		for h := range clean {
			if strings.HasPrefix(h, d+"/") || (d == "/" && h != "/") {
				return true
			}
		}
		return false
	}
	if !isAncestor(root) {
		return []string{root}, nil
	}
	var out []string
	var walk func(dir string) error
	walk = func(dir string) error {
		ents, err := os.ReadDir(dir)
		if err != nil {
			if errors.Is(err, os.ErrPermission) {
				return nil // unreadable to us: the agent gets nothing there
			}
			return fmt.Errorf("degraded mode: list %s: %w", dir, err)
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			if clean[p] || e.Type()&os.ModeSymlink != 0 {
				continue
			}
			if e.IsDir() && isAncestor(p) {
				if err := walk(p); err != nil {
					return err
				}
				continue
			}
			out = append(out, p)
		}
		return nil
	}
	return out, walk(root)
}

// setupDegraded prepares a run without namespaces: a private TMPDIR, the
// Landlock rules that stand in for the mount plan, and the notices. The
// returned func removes the private TMPDIR.
func (r *runner) setupDegraded(spec *ns.Spec) (func(), error) {
	// Without a pid namespace init's death kills no one, and the agent can
	// SIGKILL init: the thread init forks it from shares its Landlock
	// domain, whose signal scope lets the signal through (review17a). Init
	// is the subreaper of the agent's orphans; the supervisor, the only
	// process above init, becomes theirs once init is gone, so that the
	// run's end finds and kills them (finish: killLeft) before its checks,
	// instead of leaving the agent writing after jail has exited.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("degraded mode: become the child subreaper: %w", err)
	}
	tmp, err := os.MkdirTemp("", leftoverName("tmp")+"-")
	if err != nil {
		return nil, fmt.Errorf("degraded mode: private TMPDIR: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(tmp) }
	var base landlock.Rules
	if b := spec.Hooks[ns.HookLandlock]; len(b) > 0 {
		if err := inithooks.LandlockUnwire(b, &base); err != nil {
			cleanup()
			return nil, err
		}
	}
	// No network namespace here: 127.0.0.1 is the host's loopback, with
	// the user's own services on it. The sandbox's private loopback that
	// --net none allows TCP on does not exist, so Landlock denies all TCP
	// (seccomp also refuses IP sockets).
	base.DenyTCP = base.DenyTCP || r.pol.Net == policy.NetNone
	rules, lost, err := degradedRules(spec.Mounts, base, tmp)
	if err != nil {
		cleanup()
		return nil, err
	}
	spec.Hooks[ns.HookLandlock] = inithooks.LandlockWire(rules)
	env := spec.Env[:0:0]
	for _, kv := range spec.Env {
		// No mount: no record of denials either ($JAIL_DENIALS would name
		// a path of the host's).
		if !strings.HasPrefix(kv, "TMPDIR=") && !strings.HasPrefix(kv, denials.Env+"=") {
			env = append(env, kv)
		}
	}
	spec.Env = append(env, "TMPDIR="+tmp)

	var caches []string
	for _, m := range spec.Mounts {
		if m.Kind == ns.KindBind && m.Source != "" {
			caches = append(caches, m.Path)
		}
	}
	spec.Mounts = nil // nothing to mount: init builds no tree
	r.notef("degraded mode: %s", r.degradedWhy)
	if len(caches) > 0 {
		// Said at once: the tool will fail to write its cache, and why.
		n := "degraded: caches are not writable without a mount namespace (never the host's instead): " + strings.Join(caches, " ")
		r.startNotes = append(r.startNotes, n)
		r.notef("%s", n)
	}
	r.notef("degraded mode: no namespaces; Landlock, seccomp, no_new_privs and rlimits only; secrets and write protections inside writable paths do not hold (-v lists what is weaker; README: Containers)")
	r.startNotes = append(r.startNotes, "degraded: "+r.degradedWhy)
	r.startNotes = append(r.startNotes, degradedNotes...)
	if len(lost) > 0 {
		r.startNotes = append(r.startNotes, "degraded: not protected (inside writable paths): "+strings.Join(lost, " "))
	}
	if r.pol.Verbose {
		for _, n := range degradedNotes {
			r.errorf("%s", n)
		}
		if len(lost) > 0 {
			r.errorf("degraded: not protected (inside writable paths): %s", strings.Join(lost, " "))
		}
	}
	return cleanup, nil
}

// diagnoseSetup turns init's setup failure into the host's cause and fix
// when it is a refusal of what namespaces need (EPERM on the first mounts:
// AppArmor's restriction, a container's masked /proc); "" otherwise.
func (r *runner) diagnoseSetup(msg string) string {
	if r.degraded || !strings.Contains(msg, "operation not permitted") {
		return ""
	}
	if !strings.HasPrefix(msg, "build the sandbox's file system") && !strings.HasPrefix(msg, "sethostname") &&
		!strings.HasPrefix(msg, "bring up the sandbox's loopback") && !strings.HasPrefix(msg, "network") {
		return ""
	}
	err := ns.Probe(os.Getuid() == 0, r.pol.Net == policy.NetHost)
	if err == nil {
		return ""
	}
	f := hostcheck.Read("", os.Environ(), os.Getuid())
	return "cannot build the sandbox in its namespaces: " + hostcheck.Diagnose(f, probeErr(err)).Line
}

// killLeft kills what is left of a degraded run's sandbox once init is
// reaped, before the run's end checks (endCheck) and jail's exit. Without
// a pid namespace, init's death (the agent's own SIGKILL to it, or the
// kill switch's, which signals init alone where there is no cgroup) kills
// none of its descendants: they were re-parented to the supervisor
// (setupDegraded made it the child subreaper) and would go on writing in
// the workspace after the checks, past jail's exit. The cgroup, where
// there is one, is killed first; then every descendant of the supervisor,
// whose only child was init, round after round until none is left.
func (r *runner) killLeft() {
	if r.group != nil && r.group.Mode() != "none" {
		_ = r.group.Kill()
	}
	// Init is reaped: its orphans were re-parented before it became a
	// zombie. The kernel's word that none is left (read twice, as
	// sandboxQuiet does: a child moves between threads' lists as they
	// exit) spares the scan of every process; without children files,
	// the scan.
	self := os.Getpid()
	if tids, ok := threads(self); ok && childless(self, tids) && childless(self, tids) {
		r.tracef("left none")
		return
	}
	ns.KillDescendants()
	r.tracef("left killed")
}

// initStopPoll is how often a degraded run looks whether init is stopped.
const initStopPoll = 200 * time.Millisecond

// keepInitGoing continues init whenever it is found stopped, until init
// exits. Without a pid namespace the agent can SIGSTOP init (the thread
// init forked it from shares the agent's Landlock domain, whose signal
// scope lets SIGSTOP through; in a pid namespace the kernel drops it for
// pid 1): a stopped init never reaps the agent's command nor reports its
// exit, so the run, and the user's terminal, was held until the kill
// switch or Ctrl-C, with no word of why (degraded18). Continuing is all
// it takes: the agent could SIGKILL init anyway (killLeft then ends the
// rest), so a stop gives it nothing a kill does not, and a SIGCONT is
// harmless when the stop was the user's own (a whole job stopped: jail
// is stopped too then and looks again only once continued). The pidfd
// names init even after its pid is reaped and reused.
func (r *runner) keepInitGoing(sb *ns.Sandbox) {
	fd, err := unix.PidfdOpen(sb.Pid, 0)
	if err != nil {
		// Landlock (5.13) comes with pidfd_open (5.3): not met here.
		r.tracef("init stop watch: no pidfd")
		return
	}
	defer unix.Close(fd)
	tick := time.NewTicker(initStopPoll)
	defer tick.Stop()
	said := false
	for {
		select {
		case <-sb.Done():
			return
		case <-tick.C:
		}
		st, err := procstat.Read("", sb.Pid)
		if err != nil || st.State != 'T' {
			continue
		}
		if err := unix.PidfdSendSignal(fd, unix.SIGCONT, nil, 0); err != nil || said {
			continue
		}
		said = true
		r.record(audit.Signal{Signal: "SIGCONT", Number: int(unix.SIGCONT), From: "supervisor", To: "init"})
		r.say(notice.Notice{Kind: "job", Severity: notice.Warning, Group: "init-stopped",
			Text: "the sandbox's init was stopped (SIGSTOP from inside: degraded mode has no pid namespace): continued it, as jail will each time"})
	}
}
