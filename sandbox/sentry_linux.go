package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/gitguard"
	"github.com/jail-sandbox/jail/internal/heartbeat"
	"github.com/jail-sandbox/jail/internal/jsonenc"
	"github.com/jail-sandbox/jail/notice"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/sentinel"
	"github.com/jail-sandbox/jail/statedir"
)

// This file: what must not appear in the writable trees (package sentinel,
// judged by package gitguard and the plan's absent paths): watched while the
// sandbox runs, checked again when it ends, and, when a supervisor was
// killed before its exit check, at the next start.

// heartbeatEvery is how often a running supervisor touches its run record: the
// next start takes the record's mtime (plus two beats) as the end of a
// killed run, and leaves what changed after it to the user.
const heartbeatEvery = 2 * time.Second

// sentry is this run's watch.
type sentry struct {
	s     *sentinel.Sentinel
	guard *gitguard.Guard
	py    *pyJudge // agents' directories with a named python script (PyDir); nil: none
	dir   string   // this run's quarantine directory; "" when there is none

	record     *os.File // run.json, flocked while the run lasts
	recordPath string   // its path
	beat       *heartbeat.Beat

	mu    sync.Mutex
	moved int
}

// runRecord is what the next start needs to check a killed run's trees.
type runRecord struct {
	ID        string            `json:"id"`
	Started   time.Time         `json:"started"`
	Workspace string            `json:"workspace"`
	Roots     []string          `json:"roots"`
	Absent    []sentinel.Absent `json:"absent,omitempty"`
	Globs     []sentinel.Glob   `json:"globs,omitempty"`
	Guard     *gitguard.Guard   `json:"guard,omitempty"`
	PyDirs    []PyDir           `json:"py_dirs,omitempty"`
}

// runRecordEncoder is zjson_linux.go's encoder of a runRecord, nil
// without the file.
var runRecordEncoder func([]byte, *runRecord) ([]byte, error)

// marshalRunRecord is the run record's line as json.NewEncoder's Encode
// writes it (json.Marshal's bytes and a newline), by the generated encoder
// when it is there: on the path from init's spec to the go, where
// encoding/json would first build the record's encoders by reflection.
func marshalRunRecord(rec *runRecord) ([]byte, error) {
	// The bytes' size, about (a profile's ~40 KB): one buffer, not a copy
	// at each doubling (0.5 ms of a profile's start).
	size := 2048 + len(rec.Absent)*160 + len(rec.Globs)*200 + len(rec.PyDirs)*400
	for _, r := range rec.Roots {
		size += len(r) + 4
	}
	if g := rec.Guard; g != nil {
		size += 1024 + (len(g.Known)+len(g.Dirs))*200 + len(g.Globs)*200
	}
	b, err := jsonenc.Marshal(runRecordEncoder, size, rec)
	return append(b, '\n'), err
}

// quarantineBase is where every run's quarantine directory lives: in jail's
// state directory, which the sandbox never reaches (see BuildPlan), so the
// agent can neither change what was taken away nor forge the record the
// next start trusts.
func quarantineBase() (string, error) { return statedir.Path(statedir.Quarantine) }

// absentPaths is every protected path that did not exist at start: the
// fsrules built-ins' and gitguard's.
func absentPaths(pl *Plan) []sentinel.Absent {
	n := len(pl.Absent)
	if pl.Git != nil {
		n += len(pl.Git.Absent)
	}
	out := make([]sentinel.Absent, 0, n) // one allocation: ~100 of them on an empty workspace
	for _, a := range pl.Absent {
		out = append(out, sentinel.Absent{Path: a.Path, Dir: a.Dir, Rule: a.Rule})
	}
	if pl.Git != nil {
		for _, a := range pl.Git.Absent {
			out = append(out, sentinel.Absent{Path: a.Path, Dir: a.Dir, Rule: "git", Why: a.Why})
		}
	}
	return out
}

// globsAtStart is the plan's pattern directories with the names there now
// (sentinel.List) that the plan keeps read-only: listed here, before the
// sandbox starts, not taken from the plan (which may be older than this
// start). Why the mounts too: a name made on the host after the plan was
// made (a host codex's new database) is covered by no mount, so the agent
// can write it; it is not kept as the user's but moved at the end, said,
// like one the agent made (closed, and in the quarantine to take back).
func globsAtStart(pl *Plan) []sentinel.Glob {
	if len(pl.Globs) == 0 {
		return nil
	}
	kept := map[string]bool{}
	for _, m := range pl.Mounts {
		switch m.Kind {
		case ns.KindReadOnly, ns.KindROBind, ns.KindMask:
			kept[m.Path] = true
		}
	}
	out := make([]sentinel.Glob, 0, len(pl.Globs))
	for _, g := range pl.Globs {
		sg := sentinel.List(sentinel.Glob{Dir: g.Dir, Pattern: g.Pattern, Rule: g.Rule})
		sg.Had = slices.DeleteFunc(sg.Had, func(n string) bool { return !kept[filepath.Join(g.Dir, n)] })
		out = append(out, sg)
	}
	return out
}

// items turns gitguard's findings into what the sentinel moves.
func items(fs []gitguard.Finding) []sentinel.Item {
	out := make([]sentinel.Item, 0, len(fs))
	for _, f := range fs {
		out = append(out, sentinel.Item{Path: f.Path, Rule: f.Rule, Reason: f.Reason, Replace: f.Replace, ReportOnly: f.ReportOnly})
	}
	return out
}

// sentinelConfig is the sentinel of one run: this one (run "") or a killed
// one found at start (its id).
func (r *runner) sentinelConfig(dir string, roots []string, absent []sentinel.Absent, g *gitguard.Guard, py *pyJudge, run string, count func()) sentinel.Config {
	cfg := sentinel.Config{
		Dir: dir, Roots: roots, Absent: absent,
		Notify: func(ev sentinel.Event) {
			if count != nil && !ev.ReportOnly && ev.Error == "" {
				count()
			}
			r.quarantined(ev, run)
		},
	}
	if g != nil {
		for d := range g.Dirs {
			cfg.Observe = append(cfg.Observe, d)
		}
		sort.Strings(cfg.Observe)
	}
	if py != nil {
		cfg.Observe = append(cfg.Observe, py.observe()...)
	}
	if g != nil || py != nil {
		cfg.Inspect = func(dir string, names []string) ([]sentinel.Item, []string) {
			// A directory of the python judge's (an agent's directory
			// with a named python script) is judged by it; git's
			// observed directories by gitguard. One directory can be
			// both (a writable root that is an agent's directory).
			its, obs, _ := py.inspect(dir, names)
			if g != nil {
				f, o := g.Inspect(dir, names)
				its, obs = append(its, items(f)...), append(obs, o...)
			}
			return its, obs
		}
	}
	return cfg
}

// quarantined reports one sentinel event: a notice and a trail event.
func (r *runner) quarantined(ev sentinel.Event, run string) {
	q := audit.Quarantine{Phase: ev.Phase, Path: ev.Path, Rule: ev.Rule, Reason: ev.Reason,
		Stored: ev.Stored, Left: ev.Left, Run: run, Error: ev.Error}
	var msg string
	switch {
	case ev.ReportOnly:
		q.Action = "reported"
		msg = fmt.Sprintf("%s: %s", ev.Path, ev.Reason)
	case ev.Left != "":
		q.Action = "renamed"
		msg = fmt.Sprintf("%s renamed to %s in place (%s; %s): %s", ev.Path, ev.Left, ev.Error, ev.Rule, ev.Reason)
	case ev.Error != "":
		q.Action = "failed"
		msg = fmt.Sprintf("could not move %s out of the tree (%s): %s; remove it yourself: %s", ev.Path, ev.Rule, ev.Error, ev.Reason)
	case ev.Replaced:
		q.Action = "replaced"
		msg = fmt.Sprintf("%s: %s; the original is in %s", ev.Path, ev.Reason, ev.Stored)
	default:
		q.Action = "moved"
		msg = fmt.Sprintf("moved %s out of the tree to %s (%s): %s", ev.Path, ev.Stored, ev.Rule, ev.Reason)
	}
	if run != "" {
		msg = "left by earlier run " + run + ": " + msg
	}
	r.notef("%s", msg)
	r.recordAfterStart(q)
}

// recordAfterStart records ev; record holds it until the start event is
// written (the trail opens with start; the sentinel runs before init
// reports).
func (r *runner) recordAfterStart(ev audit.Event) { r.record(ev) }

// startSentry watches the writable trees from now until exitSentry: every
// absent protected path, and gitguard's observed directories. It runs
// before the sandbox starts, so nothing the agent does is missed.
func (r *runner) startSentry() {
	pl := r.plan
	absent, globs := absentPaths(pl), globsAtStart(pl)
	var g *gitguard.Guard
	if pl.Git != nil {
		g = pl.Git.Guard
	} else if pl.nameGuard != nil {
		g = pl.nameGuard // names only: git is trusted
	}
	py := newPyJudge(pl.PyDirs)
	if len(absent) == 0 && len(globs) == 0 && g == nil && py == nil {
		return
	}
	if r.degraded && g != nil && pl.Git != nil {
		// No mount namespace: git's read-only files and directories are
		// writable inside (Landlock cannot refuse writes below a writable
		// root). What git runs code from is watched instead: what the agent
		// writes there leaves the tree. Files nothing watches are said.
		if lost := g.Freeze(pl.Git.ReadOnly); len(lost) > 0 {
			n := "degraded: git files writable and not checked in this run (no mounts; a change to them can make your git run code): " + strings.Join(lost, " ")
			r.plan.Notes = append(r.plan.Notes, n)
			r.notef("%s", n)
		}
	}
	se := &sentry{guard: g, py: py}
	base, err := quarantineBase()
	if err != nil {
		r.notef("no quarantine directory (%v): what the agent leaves is renamed in place, and a killed run cannot be checked at the next start", err)
	} else {
		se.dir = filepath.Join(base, r.id)
		if err := se.keepRecord(runRecord{ID: r.id, Started: r.started, Workspace: pl.Workspace, Roots: pl.Writable, Absent: absent, Globs: globs, Guard: g, PyDirs: pl.PyDirs}); err != nil {
			r.notef("quarantine %s: %v: a killed run cannot be checked at the next start", se.dir, err)
		}
	}
	cfg := r.sentinelConfig(se.dir, pl.Writable, absent, g, py, "", se.count)
	cfg.Globs = globs
	se.s = sentinel.New(cfg)
	if err := se.s.Start(); err != nil {
		r.notef("the writable trees are not watched while the sandbox runs (%v): they are checked when it ends", err)
	} else if n, full := se.s.Watches(); full {
		r.notef("the writable trees are watched through %d directories only (the limit): the rest is checked when the sandbox ends", n)
	}
	r.sentry = se
	r.preloadExitCheck(g)
}

// preloadExitCheck has the directory cache read the exit check's records
// (gitguard's PreloadSweep) once the agent runs, off the run's end: the
// file's read, checksum and decoding, not its stats. The sweep still stats
// every directory after the sandbox's last process is gone, and a record
// answers only for a directory that stat finds unchanged (dircache.Preload).
// Then the kept repositories' stores are listed for madePacks (their
// fan-out directories opened and read: a store is outside the sandbox,
// and this run's shared lock keeps every end from pruning it meanwhile,
// gitkeep.ListStore); the end still stats each listed object's file in
// the workspace. It waits for the agent's start so as not to take a core
// from init's.
func (r *runner) preloadExitCheck(g *gitguard.Guard) {
	if r.ctx == nil {
		return
	}
	var work []func()
	if g != nil && r.dirs != nil {
		dirs := r.dirs
		work = append(work, func() { g.PreloadSweep(dirs) })
	}
	for _, k := range r.gitPacks {
		if k.listing != nil {
			work = append(work, func() { k.listing.get(k.store) })
		}
	}
	if len(work) == 0 {
		return
	}
	started, done := r.startedCh, r.ctx.Done()
	go func() {
		select {
		case <-started:
			for _, w := range work {
				w()
			}
		case <-done: // the run ended before the agent started
		}
	}()
}

func (se *sentry) count() {
	se.mu.Lock()
	se.moved++
	se.mu.Unlock()
}

// keepRecord writes run.json and holds an exclusive lock on it while the
// run lasts: a start that can take the lock knows the run is over.
func (se *sentry) keepRecord(rec runRecord) error {
	if err := os.MkdirAll(se.dir, 0o700); err != nil {
		return err
	}
	// Made under another name, locked and written whole, and only then
	// named run.json: another start's killedRuns takes an unlocked
	// run.json for a killed run's. Created as run.json itself, a start
	// opening it before the lock took the lock, read an empty record
	// ("unreadable", told to remove a live run's record), and this run,
	// refused its own lock, went on without one: if killed, it would not
	// be checked (TestRunRecordNeverSeenUnlocked). The rename keeps the
	// open file, and so the lock. A start killed before the rename leaves
	// only the temporary name, which killedRuns never reads.
	p := filepath.Join(se.dir, "run.json")
	tmp := filepath.Join(se.dir, ".run.json.new")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fail(fmt.Errorf("lock %s: %w", tmp, err))
	}
	b, err := marshalRunRecord(&rec)
	if err == nil {
		_, err = f.Write(b)
	}
	if err != nil {
		return fail(fmt.Errorf("write %s: %w", tmp, err))
	}
	if err := os.Rename(tmp, p); err != nil {
		return fail(err)
	}
	se.record, se.recordPath = f, p
	se.beat = heartbeat.Start(p, heartbeatEvery)
	return nil
}

// dropRecord ends the run's record: the checks are done.
func (se *sentry) dropRecord() {
	if se.record == nil {
		return
	}
	se.beat.Stop()
	os.Remove(se.recordPath) // its name now, not the one it was made under
	se.record.Close()
	se.record = nil
}

// exitSentry is the exit check, once every process of the sandbox is gone:
// the absent paths and observed directories judged again, then gitguard's
// walk of every writable tree; what was renamed aside during the run is
// copied into the quarantine and removed from the tree.
func (r *runner) exitSentry() {
	if drop := r.exitSentryChecks(); drop != nil {
		drop()
	}
}

// exitSentryChecks is exitSentry up to the run's record, which it leaves
// to the returned function (nil when there is none): the end removes it
// in the background, before the exit event is written.
func (r *runner) exitSentryChecks() (drop func()) {
	// The sandbox has ended: no mount of it is left to fall.
	r.stopMaskWatch()
	se := r.sentry
	if se == nil {
		return nil
	}
	r.sentry = nil
	se.s.Stop()
	// gitguard's Sweep below judges every git dir and .git at any depth:
	// the observed directories need no second look.
	se.s.CheckAbsent("exit")
	// The python judge's directories are not in gitguard's sweep.
	se.s.Quarantine(se.py.check(), "exit")
	if se.guard != nil {
		// Through the directory cache: a directory unchanged since the
		// start (its ctime, which the agent cannot set back) holds no new
		// .git; the others are read.
		var dirs gitguard.DirReader
		if r.dirs != nil {
			dirs = r.dirs
		}
		found, notes := se.guard.SweepDirs(0, dirs)
		r.saveDirCache("exit check")
		se.s.Quarantine(items(found), "exit")
		for _, n := range notes {
			r.notef("%s", n)
		}
	}
	// The packs the run made, read whole: one whose idx lies leaves the
	// tree before a host gc believes it (madePacks).
	if len(r.gitPacks) > 0 {
		its, notes := madePacks(r.gitPacks, time.Now())
		se.s.Quarantine(its, "exit")
		for _, n := range notes {
			r.notef("%s", n)
		}
		r.tracef("pack check")
	}
	// The inotify descriptor is closed last, off the run's end (closeWatches).
	r.closeLater(se.s.CloseLater())
	se.mu.Lock()
	n := se.moved
	se.mu.Unlock()
	switch {
	case n == 1:
		r.notef("1 entry the agent left in the writable trees was taken out of them; it is in %s (manifest.jsonl says what it was)", se.dir)
	case n > 1:
		r.notef("%d entries the agent left in the writable trees were taken out of them; they are in %s (manifest.jsonl lists each)", n, se.dir)
	}
	return func() {
		se.dropRecord()
		if se.dir != "" {
			os.Remove(se.dir) // only when empty: nothing was quarantined
		}
	}
}

// gcKilledRuns is jail gc's part: the exit checks of killed runs, and what
// runs left in the agent configuration (gcAgentConfig), told on w. It tells
// whether something could still not be put back.
func gcKilledRuns(w io.Writer) (failed bool) {
	r := &runner{pol: &policy.Policy{}, stderr: w}
	r.notes = notice.New(w, notice.Options{}) // its notices go to w, as a run's would
	r.killedRuns()
	failed = r.gcAgentConfig()
	return r.gcCreds() || failed
}

// killedRuns checks the trees of earlier runs whose supervisor was killed
// before its exit check (their run.json is still there and unlocked). It
// tells whether it checked any: what it moved out of their trees (a .git
// that made a directory a work tree, a link) may change what this run's
// paths resolve to.
func (r *runner) killedRuns() (checked bool) {
	base, err := quarantineBase()
	if err != nil {
		return false
	}
	recs, _ := filepath.Glob(filepath.Join(base, "*", "run.json"))
	for _, p := range recs {
		if r.killedRun(p) {
			checked = true
		}
	}
	return checked
}

// killedRun checks one killed run's trees (killedRuns), and tells whether
// it did.
func (r *runner) killedRun(p string) bool {
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return false // that run is still going
	}
	// Still the record at that path: another start may have checked it and
	// removed it while this one waited for the lock.
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	if cur, err := os.Lstat(p); err != nil || !os.SameFile(fi, cur) {
		return false
	}
	var rec runRecord
	if err := json.NewDecoder(io.LimitReader(f, 256<<20)).Decode(&rec); err != nil {
		r.notef("%s: unreadable (%v): remove it; that run's trees were not checked", p, err)
		return false
	}
	dir := filepath.Dir(p)
	// The killed run ended at most two beats after the record's last touch.
	end := fi.ModTime().Add(2 * heartbeatEvery)
	r.notef("earlier run %s (started %s in %s) ended without its exit check (its supervisor was killed): checking its writable trees now",
		rec.ID, rec.Started.Local().Format(time.DateTime), rec.Workspace)
	py := newPyJudge(rec.PyDirs)
	cfg := r.sentinelConfig(dir, rec.Roots, rec.Absent, rec.Guard, py, rec.ID, nil)
	cfg.Before = end
	cfg.Globs = rec.Globs
	sentinel.Resume(cfg)
	s := sentinel.New(cfg)
	s.CheckAbsent("leftover")
	s.Quarantine(py.check(), "leftover")
	if rec.Guard != nil {
		found, notes := rec.Guard.Sweep(0)
		s.Quarantine(items(found), "leftover")
		for _, n := range notes {
			r.notef("%s", n)
		}
	}
	s.Close()
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		r.notef("%s: %v", p, err)
	}
	os.Remove(dir) // only when empty
	return true
}
