package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/cgroup"
	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/hostpath"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/pastwrite"
	"github.com/jail-sandbox/jail/statedir"
)

// This file: the audit trail: where it lives, how it stays out of sight, what opens it.

// record writes one event. The start event is always the first line of a
// trail: anything that comes before it (a signal or a notice during the
// setup) waits for it.
//
// Held events may come before the trail is even open (the exit check of a
// killed earlier run happens before this run's plan): they are kept as they
// are and redacted when written, once the redactor exists.
func (r *runner) record(ev audit.Event) { r.recordAs(ev, false) }

// heldEvent is an event recorded before the start event (r.early), and
// whether it is the run's servers' (recordRun).
type heldEvent struct {
	ev  audit.Event
	run bool
}

// recordRun is record for what the run's servers (the egress proxy, the
// DNS server, the exec guard) decide: it may come after the exit check
// began (trailEnding), from what the agent left in a socket before it
// exited, and must not take the end's room (audit.Writer.RecordRun).
func (r *runner) recordRun(ev audit.Event) { r.recordAs(ev, true) }

func (r *runner) recordAs(ev audit.Event, run bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.startRecorded {
		r.early = append(r.early, heldEvent{ev, run})
		return
	}
	if r.trail == nil {
		return
	}
	if run {
		r.trail.RecordRun(r.redact.event(ev))
		return
	}
	r.trail.Record(r.redact.event(ev))
}

// trailEnding marks the sandbox's end in the trail (endCheck): the
// sandbox's processes are gone, and the events recorded from now on may
// use the end's room of the budget.
func (r *runner) trailEnding() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.trail != nil {
		r.trail.Ending()
	}
}

// recordExit writes the exit event, the trail's last line, and leaves
// its fsync and the file's close to a goroutine that awaitTrail waits
// for before RunSession returns: the fsync (0.5-1 ms here) then runs
// while the rest of the end does (the registry entry, the control socket,
// the cgroups' removal, the inotify descriptors), not before them. The
// line is in the file when recordExit returns: the registry entry's
// removal, which tells the Go API's Wait (and jail ps) that the sandbox
// has ended, comes after it, as before; and jail returns (or exits) only
// with the trail on disk.
func (r *runner) recordExit(exit audit.Exit) {
	r.mu.Lock()
	w, started := r.trail, r.startRecorded
	r.mu.Unlock()
	if w == nil || !started {
		r.record(exit) // held for the start event, or no trail: as any event
		r.closeTrail()
		return
	}
	// Everything the run produced is written before its exit event
	// (RecordWritten waits for room in the queue: it is never refused),
	// which then says what the file does not hold; the exit event's fsync
	// puts it all on disk.
	r.mu.Lock()
	ev := r.redact.event(exit)
	r.mu.Unlock()
	if err := w.RecordWritten(ev); err != nil {
		r.errorf("%v", err)
	}
	r.mu.Lock()
	r.trail = nil // what comes now is late, as after a close
	r.mu.Unlock()
	done := make(chan error, 1)
	r.trailClosed, r.trailEnd = done, w.Path()
	go func() { done <- w.Close() }()
}

// awaitTrail waits for recordExit's fsync and close of the trail.
func (r *runner) awaitTrail() {
	if r.trailClosed == nil {
		return
	}
	if err := <-r.trailClosed; err != nil {
		r.errorf("audit trail %s: %v", r.trailEnd, err)
	}
	r.trailClosed = nil
}

func (r *runner) closeTrail() {
	if r.trail != nil {
		if err := r.trail.Close(); err != nil {
			r.errorf("audit trail %s: %v", r.trail.Path(), err)
		}
		r.trail = nil
	}
}

// openTrail creates the audit trail before anything runs, outside every path
// the sandbox can write, and hides it if it would be visible.
func (r *runner) openTrail(spec *ns.Spec) error {
	id := audit.NewID()
	r.id = id
	path, viewMasks, err := r.trailPlace(spec, id)
	if err != nil {
		return err
	}
	// The budget keeps an agent from filling the host's disk through its
	// trail (failed execs with huge argv, a flood of refused flows).
	w, err := audit.CreateOptions(path, audit.Options{MaxBytes: r.pol.AuditMaxSize})
	if err != nil {
		return fmt.Errorf("audit trail: %w", err)
	}
	if r.pol.AuditFile != "" {
		// Why: CheckDirs looked before the trail existed; another user
		// may have made a missing directory of its path (under /tmp)
		// since. The path must still lead, through places only this user
		// or root can change, to the file this writer holds.
		if err := w.CheckPlace(); err != nil {
			w.Close()
			return fmt.Errorf("`audit` %s: %w", path, err)
		}
	}
	if r.pol.AuditSyslog {
		s, err := audit.NewSyslog()
		if err != nil {
			w.Close()
			return fmt.Errorf("`audit-syslog`: %w", err)
		}
		w.AddSink(s)
	}
	r.trail = w
	r.trailPath = w.Path()
	spec.Mounts = append(spec.Mounts, hideTrail(w.Path(), spec.Mounts)...)
	spec.Mounts = append(spec.Mounts, viewMasks...)
	return nil
}

// trailPlace is where the run's trail goes (id: the run's, for the default
// path) and the masks that hide its directory's other views, or why the
// place is refused: openTrail's checks, made before anything of the trail
// exists. --dry-run makes them too, so that it says the refusal a real
// start would (trail16).
func (r *runner) trailPlace(spec *ns.Spec, id string) (string, []ns.Mount, error) {
	path := r.pol.AuditFile
	if path != "" {
		// Why: the trail's path is kept (the registry, the Go API's
		// TrailPath and Events, jail ps, jail audit ID) and opened again
		// by other processes in other directories: a relative one (the Go
		// API's AuditFile; the CLI makes --audit absolute) led each to a
		// file of its own directory's, the agent's from the workspace.
		// Made absolute against this directory (the policy's Cwd), where
		// the checks below and Create take it, and not cleaned as text
		// (hostpath.Abs: a ".." after a symlink stays the target's parent).
		abs, err := hostpath.Abs(path)
		if err != nil {
			return "", nil, fmt.Errorf("`audit` %s: %w", path, err)
		}
		path = abs
	} else {
		dir, err := statedir.Path(statedir.Audit)
		if err == nil {
			path, err = audit.DefaultPath(dir, r.started, id)
		}
		if err != nil {
			return "", nil, fmt.Errorf("audit trail: %w (set `audit` to a FILE)", err)
		}
	}
	// The agent must not be able to rewrite its own trail. A trail in jail's
	// state directory is out of reach even under a writable path when the
	// plan masks that directory.
	var hidden []string
	if r.plan.StateDirMasked {
		hidden = append(hidden, r.plan.StateDir)
	}
	// One pass of lookups for every check below: they resolve the same
	// writable paths again and again (audit.CheckPlacementWith).
	res := hostpath.NewResolver()
	defer res.Close()
	if err := audit.CheckPlacementWith(res, path, r.plan.Writable, hidden); err != nil {
		return "", nil, fmt.Errorf("`audit` %s: %w", path, err)
	}
	// The trail's directory seen through another mount of its file system
	// (a host bind of it, or of a parent, inside the workspace): hidden by
	// its path alone, the trail could be read there, or rewritten where
	// that place is writable. The default trail is in the state directory,
	// whose views the plan masks already (jailDirViews).
	var viewMasks []ns.Mount
	if r.pol.AuditFile != "" {
		// A place of the user's choosing: another user must not be able to
		// swap the trail for one of theirs (the chain has no secret). The
		// default trail is in the state directory, the user's own.
		if err := audit.CheckDirs(path); err != nil {
			return "", nil, fmt.Errorf("`audit` %s: %w", path, err)
		}
		// The plan's copy of the mount table (read once, at the plan): the
		// trail's masks are made from what the plan's are. Without one,
		// no view can be ruled out: refused, as before.
		if !r.plan.mountsRead {
			err := r.plan.mountsErr
			if err == nil {
				err = errors.New("the plan holds no mount table")
			}
			return "", nil, fmt.Errorf("`audit` %s: read the mount table for other mounts of its directory: %w", path, err)
		}
		// The trail's directory where the kernel opens the path (a ".."
		// after a symlink is the target's parent), not the path cleaned
		// as text: the directory CheckDirs, CheckPlacement and Create
		// take.
		abs, err := hostpath.Abs(path)
		if err != nil {
			return "", nil, fmt.Errorf("`audit` %s: %w", path, err)
		}
		real, _, err := hostpath.ResolveAsNamed(abs)
		if err != nil {
			return "", nil, fmt.Errorf("`audit` %s: %w", path, err)
		}
		// Why: the plan's writable paths are where the sandbox sees
		// what it can write; on the host, the same directories are also
		// where a bind's source is (a cache of jail's own, bound at the
		// cache's path) and where other mounts show them (a host bind of
		// the workspace elsewhere). A trail there, or a path through one
		// of them that leaves it again (a link the agent can point anew
		// after the run, a ".." out of a directory it can swap for a
		// link), is the agent's to rewrite or redirect, as in the
		// workspace itself.
		writable := trailWritable(res, r.plan)
		if err := audit.CheckPlacementWith(res, path, writable, hidden); err != nil {
			return "", nil, fmt.Errorf("`audit` %s: %w", path, err)
		}
		if err := trailPastPlacement(res, path, real, r.plan.past, hidden); err != nil {
			return "", nil, err
		}
		views := fsrules.Views(r.plan.hostMounts, filepath.Dir(real))
		if viewMasks, err = trailViews(res, path, views, writable, hidden, spec.Mounts); err != nil {
			return "", nil, err
		}
	}
	return path, viewMasks, nil
}

// trailPastPlacement refuses a trail at path (real: as the kernel opens
// it) in a tree another run could write: an earlier or a running
// sandbox's workspace or --write path, as jail's record of them (package
// pastwrite) has it. Why: that run's agent can rewrite the trail while it
// runs, and any run there later can, after this one ended: the chain has
// no secret, so a rewrite from the first line verifies. The trails of this
// run's own trees are CheckPlacement's; these are checked the same way
// (by path, a link or ".." on the way out of one too) and by the
// directory's identity (the tree reached by another name: a bind mount).
func trailPastPlacement(res *hostpath.Resolver, path, real string, past *pastwrite.Set, hidden []string) error {
	trees := past.Trees()
	if len(trees) == 0 {
		return nil
	}
	paths := make([]string, 0, len(trees))
	for _, t := range trees {
		paths = append(paths, t.Path)
	}
	const why = "a tree an earlier or running jail run could write (that run's agent, or a later one there, could rewrite the trail; the default trail is out of every run's reach)"
	if err := audit.CheckPlacementWith(res, path, paths, hidden); err != nil {
		return fmt.Errorf("`audit` %s: %s: %w", path, why, err)
	}
	for _, h := range hidden {
		if real == h || strings.HasPrefix(real, strings.TrimSuffix(h, "/")+"/") {
			return nil // masked in every run (jail's state directory)
		}
	}
	if t, ok := past.Holds(real); ok {
		return fmt.Errorf("`audit` %s: it is inside %s (as %s), %s; set `audit` to a path outside it: %w",
			path, t, real, why, audit.ErrWritableBySandbox)
	}
	return nil
}

// trailWritable returns every host path the sandbox can write (the
// trail's checks): the plan's writable paths, the host directories that
// its binds from elsewhere show (Source: a cache's, under jail's cache
// directory), and the places the host's mount table shows any of them at.
func trailWritable(res *hostpath.Resolver, pl *Plan) []string {
	w := slices.Clip(pl.Writable)
	for _, m := range pl.Mounts {
		if m.Kind == ns.KindBind && m.Source != "" {
			w = append(w, m.Source)
		}
	}
	return append(w, writableViews(res, pl.hostMounts, w)...)
}

// writableViews returns the other places the host's mount table shows
// each writable path (or a part of it) at: another mount of its file
// system, such as a host bind of the workspace elsewhere. Each path is
// resolved first (the table holds real paths), with the lookups of res.
func writableViews(res *hostpath.Resolver, hostMounts []fsrules.Mount, writable []string) []string {
	var out []string
	for _, w := range writable {
		if !filepath.IsAbs(w) {
			if r, err := filepath.EvalSymlinks(w); err == nil {
				w = r
			}
		} else if r, _, err := res.Resolve(w); err == nil {
			w = r // as EvalSymlinks for an absolute path
		}
		for _, v := range fsrules.Views(hostMounts, w) {
			out = append(out, v.Path)
		}
	}
	return out
}

// trailViews returns the masks that hide the places views (fsrules.Views of
// the trail's directory) show the trail at path or its directory, and an
// error when the trail itself would be writable at one of them (writable,
// outside hidden): there the agent could rewrite it, as if it lay in the
// workspace, which CheckPlacement refuses. A view of a part of the
// directory (a subdirectory: older trails) is masked where it is merely
// visible; where it is, or lies in, a path the plan binds (the workspace
// may be a subdirectory of the trail's), it is left as that bind shows it,
// as the same subdirectory is at its own path.
func trailViews(res *hostpath.Resolver, path string, views []fsrules.View, writable, hidden []string, plan []ns.Mount) ([]ns.Mount, error) {
	var masks []ns.Mount
	for _, v := range views {
		if !v.Part {
			at := filepath.Join(v.Path, filepath.Base(path)) // the trail itself
			if err := audit.CheckPlacementWith(res, at, writable, hidden); err != nil {
				return nil, fmt.Errorf("`audit` %s: its directory is also mounted at %s: %w", path, v.Path, err)
			}
			masks = append(masks, hideTrail(at, append(plan, masks...))...)
			continue
		}
		if !visibleIn(v.Path, plan) || inBind(v.Path, plan) {
			continue
		}
		if m, ok := viewMask(v.Path, "the audit trail's directory, another mount"); ok {
			masks = append(masks, m)
		}
	}
	return masks, nil
}

// inBind tells whether p is, or lies in, a path the plan binds from the
// host (the workspace, a --write or --read path), not the root's view.
func inBind(p string, plan []ns.Mount) bool {
	for _, m := range plan {
		if (m.Kind == ns.KindBind || m.Kind == ns.KindROBind) && m.Path != "/" &&
			(p == m.Path || strings.HasPrefix(p, strings.TrimSuffix(m.Path, "/")+"/")) {
			return true
		}
	}
	return false
}

// hideTrail returns the mounts that keep the trail out of the sandbox's
// sight. Where its directory is visible (the root's read-only view, or a
// --read bind), an empty, mode-0, read-only directory covers it, so neither
// this trail nor older ones can be listed, read or written. If the directory holds
// another mount of the plan (the workspace under it), covering it would hide
// that too: then the file alone is masked (its name stays visible).
func hideTrail(path string, plan []ns.Mount) []ns.Mount {
	dir := filepath.Dir(path)
	var deepest *ns.Mount
	for i := range plan {
		m := &plan[i]
		if dir == m.Path || strings.HasPrefix(dir, m.Path+"/") {
			if deepest == nil || len(m.Path) >= len(deepest.Path) { // later mounts cover earlier ones
				deepest = m
			}
		}
	}
	if deepest != nil && (deepest.Kind == ns.KindTmpfs || deepest.Kind == ns.KindMask && deepest.Dir) {
		return nil // under a private tmpfs or a masked directory (the state dir) already: not visible
	}
	for _, m := range plan {
		if m.Kind != ns.KindMask && m.Kind != ns.KindReadOnly && strings.HasPrefix(m.Path, dir+"/") {
			return []ns.Mount{{Kind: ns.KindMask, Path: path, FD: -1, Why: "the audit trail"}}
		}
	}
	return []ns.Mount{{Kind: ns.KindMask, Path: dir, Dir: true, FD: -1, Why: "the audit trail's directory"}}
}

// recordStart says the start's degraded modes and writes the start event,
// the trail's first line: what was recorded before it is held until then
// (recordAs). Called once per run; a later call (the end's, a failure's)
// returns once the event is written, so that what it records comes after
// it (recordStartBeside may have left the writing to a goroutine).
func (r *runner) recordStart(info map[string]string) {
	r.mu.Lock()
	done, written := r.startClaimed, r.startWritten
	r.startClaimed = true
	r.mu.Unlock()
	if done {
		if written != nil {
			<-written
		}
		return
	}
	r.sayStart(info)()
}

// recordStartBeside is recordStart for init's report (handleFiles), before
// the go: the degraded modes are said now, on the terminal before the
// agent has it, but the event is written on a goroutine, beside the
// agent's start. Its policy is the JSON made while init started
// (startEventPolicy), which under an agent's profile (a plan of 30
// writable paths and 90 mounts) was not ready in 6 starts of 10 when init
// reported, and the go waited 1-5 ms for it. The event is no less kept:
// before, it was only queued for the trail's writer at the go, as it is
// now a little later, and nothing the run records can come first (held
// in r.early until it is in); every later recordStart waits for it, and
// the run's end (endCheck) and a failure (fail) call one before they
// record anything of their own.
func (r *runner) recordStartBeside(info map[string]string) {
	r.mu.Lock()
	if r.startClaimed {
		r.mu.Unlock()
		return
	}
	r.startClaimed = true
	written := make(chan struct{})
	r.startWritten = written
	r.mu.Unlock()
	write := r.sayStart(info)
	go func() {
		defer close(written)
		write()
	}()
}

// sayStart says the start's degraded modes (stderr unless --quiet) and
// returns what writes the start event with them, then lets what was held
// for it through.
func (r *runner) sayStart(info map[string]string) (write func()) {
	// Each degraded mode is one sentence: on stderr (unless --quiet) and,
	// whatever --quiet says, in the start event's notes, so that the
	// record never shows a weaker sandbox as a full one
	// (docs/audit-schema.md: "one sentence per degraded mode").
	var degraded []string
	if info["seccomp.notify"] == "false" && (!r.pol.NoExecAudit || len(r.pol.BlockCommand) > 0) {
		// No listener: no exec is recorded and none is refused, not even
		// by --block-command.
		degraded = append(degraded, "exec audit and guard rail off: "+info["seccomp.reason"]+" (`require-exec-audit` makes this fatal)")
	}
	if miss := info["landlock.missing"]; miss != "" {
		var list []string
		_ = json.Unmarshal([]byte(miss), &list)
		degraded = append(degraded, fmt.Sprintf("landlock ABI %s: not enforced: %s", info["landlock.abi"], strings.Join(list, "; ")))
	}
	if r.trace && info["net.setup_us"] != "" {
		fmt.Fprintf(r.stderr, "jail: init network %8s us (%s)\n", info["net.setup_us"], info["net.mode"])
	}
	if off := info["net.refusals"]; off != "" {
		// --net none without its refusal plumbing: still closed, but a
		// refused name fails the old way (DNS error, retried by clients).
		degraded = append(degraded, "--net none: refused names are not answered ("+off+")")
	}
	netMode := r.pol.Net
	if info["net.mode"] == "proxy-aware" {
		netMode = "proxy"
		degraded = append(degraded, fmt.Sprintf("egress is proxy-aware only (%s): programs that ignore HTTP_PROXY/ALL_PROXY get no network", info["net.reason"]))
	}
	for _, d := range degraded {
		r.notef("%s", d)
	}
	return func() {
		defer r.startIn()
		r.writeStart(info, degraded, netMode)
	}
}

// startIn marks the start event written (or there is no trail): what
// waited for it follows, in the order it came, the run's servers'
// decisions as theirs (recordRun).
func (r *runner) startIn() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.startRecorded = true
	if r.trail != nil {
		for _, e := range r.early {
			if e.run {
				r.trail.RecordRun(r.redact.event(e.ev))
			} else {
				r.trail.Record(r.redact.event(e.ev))
			}
		}
	}
	r.early = nil
}

// writeStart writes the start event (sayStart).
func (r *runner) writeStart(info map[string]string, degraded []string, netMode string) {
	if r.trail == nil {
		return
	}
	var uts unix.Utsname
	_ = unix.Uname(&uts)
	abi := 0
	fmt.Sscan(info["landlock.abi"], &abi)
	cgMode := "none"
	if r.group != nil {
		cgMode = r.group.Mode()
	}
	var notes []string
	notes = append(notes, r.startNotes...)
	notes = append(notes, r.plan.Notes...)
	notes = append(notes, r.cgRep.Warnings...)
	notes = append(notes, degraded...)
	// Variables by name only: --env/--setenv values are the user's secrets.
	// (Written directly: record holds every other event until this one is
	// in, see the deferred function above.)
	r.trail.Record(audit.Start{
		Schema: audit.SchemaVersion, Version: Version, ID: r.id,
		Argv: r.redact.argv(os.Args), Command: r.redact.strs(r.pol.Command), Cwd: r.redact.str(r.plan.Cwd),
		UID: os.Getuid(), GID: os.Getgid(), PID: os.Getpid(), Root: os.Getuid() == 0,
		Policy: r.startEventPolicy(),
		Kernel: audit.Kernel{
			Release: unix.ByteSliceToString(uts.Release[:]), LandlockABI: abi,
			Seccomp: info["seccomp.arch"] != "", SeccompNotify: info["seccomp.notify"] == "true",
			CgroupMode: cgMode, NetworkMode: netMode,
		},
		Notes: r.redact.strs(notes),
	})
	r.guardStarted() // agent-config events found before the start event
}

// startEventPolicy is the start event's policy: the one made while init
// started, or made now (a setup that failed before init started).
func (r *runner) startEventPolicy() any {
	if r.startPolicy != nil {
		return <-r.startPolicy
	}
	return r.redact.startPolicy(r.pol, r.plan, r.cgRep)
}

// pruneEvery is how often retention runs at most: it stats every trail of
// the audit directory (4,000 trails cost about 30 ms of CPU here, at every
// start before this bound). Between two runs a trail may outlive
// audit-max-age by up to this much, and the directory exceed
// audit-max-total by the trails of this long; retention is housekeeping,
// not a protection, and the stamp lives in jail's state directory, which
// the sandbox cannot see or write (plan.go masks it).
const pruneEvery = time.Hour

// pruneTrails applies the audit directory's retention (audit-max-age,
// audit-max-total) in the background, at most once per pruneEvery (or at
// once when the bounds change), keeping every live trail: this run's, the
// running sandboxes' (the registry), and any a writer holds.
func (r *runner) pruneTrails() {
	dir, err := statedir.Path(statedir.Audit)
	if err != nil || (r.pol.AuditMaxAge == 0 && r.pol.AuditMaxTotal == 0) {
		return
	}
	ret := audit.Retention{MaxAge: r.pol.AuditMaxAge, MaxTotal: r.pol.AuditMaxTotal}
	stamp := filepath.Join(filepath.Dir(dir), statedir.AuditRetention)
	if !audit.PruneDue(stamp, ret, time.Now(), pruneEvery) {
		return
	}
	keep := append(liveTrails(), r.trailPath)
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		now := time.Now()
		removed, err := audit.Prune(dir, ret, now, keep)
		// Stamped after the pass, errors or not: one that failed on a
		// file would fail again at every start.
		if serr := audit.MarkPruned(stamp, ret, now); serr != nil {
			r.debugf("audit retention: %v", serr)
		}
		if len(removed) > 0 {
			r.debugf("audit retention: removed %d trail(s) from %s (`audit-max-age` %v, `audit-max-total` %s)",
				len(removed), dir, r.pol.AuditMaxAge, cgroup.FormatSize(r.pol.AuditMaxTotal))
		}
		if err != nil {
			r.debugf("audit retention: %v", err)
		}
	}()
}
