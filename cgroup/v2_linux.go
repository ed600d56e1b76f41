package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// mkdirGroup creates a group directory; on cgroupfs the kernel fills it
// with interface files. Tests replace it to emulate that on a fake tree.
var mkdirGroup = func(path string) error { return os.Mkdir(path, 0o755) }

// v2Mount finds the cgroup2 hierarchy under root: root itself (unified
// host) or root/unified (hybrid host).
func v2Mount(root string) (string, bool) {
	for _, d := range []string{root, filepath.Join(root, "unified")} {
		if _, err := os.Stat(filepath.Join(d, "cgroup.controllers")); err == nil {
			return d, true
		}
	}
	return "", false
}

// v2Needed lists the controllers the limits need.
func v2Needed(lim Limits) []string {
	var c []string
	if lim.CPUs > 0 {
		c = append(c, "cpu")
	}
	if lim.MemoryBytes > 0 {
		c = append(c, "memory")
	}
	if lim.pidsLimit() > 0 {
		c = append(c, "pids")
	}
	return c
}

func readList(path string) ([]string, error) {
	s, err := readTrim(path)
	if err != nil {
		return nil, err
	}
	return strings.Fields(s), nil
}

func missing(have, need []string) []string {
	var m []string
	for _, n := range need {
		if !slices.Contains(have, n) {
			m = append(m, n)
		}
	}
	return m
}

// enableControllers makes sure dir's children get the needed controllers.
func enableControllers(dir string, need []string) error {
	have, err := readList(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return err
	}
	add := missing(have, need)
	if len(add) == 0 {
		return nil
	}
	for i := range add {
		add[i] = "+" + add[i]
	}
	// EBUSY here is the "no internal processes" rule (cgroup-v2.rst): a
	// non-root cgroup that holds processes cannot hand domain controllers
	// to its children.
	return writeFile(filepath.Join(dir, "cgroup.subtree_control"), strings.Join(add, " "))
}

// delegated reports whether we may create and populate children of dir and
// migrate processes through it: write access to the directory, to its
// cgroup.procs (the delegation containment rule checks the common
// ancestor's cgroup.procs on every migration, CLONE_INTO_CGROUP included)
// and to cgroup.subtree_control.
func delegated(dir string) bool {
	return canWrite(dir) && canWrite(filepath.Join(dir, "cgroup.procs")) &&
		canWrite(filepath.Join(dir, "cgroup.subtree_control"))
}

// openV2 tries the v2 strategies in order; scopeErr receives why
// opts.Scope (when asked) gave no usable subtree.
// unified and selfErr are this process's cgroup2 path and why it could
// not be read (Open reads /proc/self/cgroup once for both hierarchies).
func openV2(opts Options, gname string, lim Limits, unified string, selfErr error, scopeErr *error) (Group, Report, error) {
	root := opts.root()
	v2root, ok := v2Mount(root)
	if !ok {
		return nil, Report{}, fmt.Errorf("no cgroup2 hierarchy under %s", root)
	}
	if selfErr != nil {
		return nil, Report{}, fmt.Errorf("read own cgroup from %s: %w", opts.selfCgroup(), selfErr)
	}
	need := v2Needed(lim)
	cur := filepath.Join(v2root, filepath.Clean("/"+unified))
	self := os.Getpid()
	supLeaf := fmt.Sprintf("jail-%d-supervisor", self)
	var why []string

	// 0. The hierarchy's root offers every controller a group below it can
	// have (a group's cgroup.controllers is its parent's subtree_control,
	// which only names the parent's own controllers). When it lacks one the
	// limits need (a hybrid host binds memory, pids and cpu to v1), no
	// group the leaf, sibling or root strategy could use has it: they are
	// skipped, each of which read the same answer through its own
	// directory. The scope is still asked for (below): its answer is what
	// the user is told about the user manager.
	if rootErr := rootFit(v2root, need, lim, !opts.Require); rootErr != nil && rootFitSkips {
		why = append(why, rootErr.Error())
		if opts.Scope != nil {
			g, err := tryScope(opts, v2root, supLeaf, gname, lim, need, self)
			if err == nil {
				return g, v2Report(g, "scope", lim), nil
			}
			*scopeErr = err
			why = append(why, "systemd user scope: "+err.Error())
		}
		return nil, Report{}, errors.New(strings.Join(why, "; "))
	}

	// 1. leaf: our own cgroup, when it is delegated and holds only us. A
	// cgroup holding processes cannot enable controllers for children, so
	// the supervisor first moves itself into a leaf child.
	if filepath.Base(cur) == supLeaf {
		// A previous Open in this process already did the move.
		g, err := createFit(filepath.Dir(cur), gname, lim, need, !opts.Require)
		if err == nil {
			return g, v2Report(g, "leaf", lim), nil
		}
		why = append(why, "leaf: "+err.Error())
	} else if g, err := tryLeaf(cur, supLeaf, gname, lim, need, self, !opts.Require); err == nil {
		return g, v2Report(g, "leaf", lim), nil
	} else {
		why = append(why, "leaf: "+err.Error())
	}

	// 2. scope: ask for a delegated cgroup of our own (a transient systemd
	// user scope) and use it as in 1. Before "sibling": on a systemd host our
	// parent is a slice systemd manages, which is writable by the user but
	// not delegated to us.
	if opts.Scope != nil {
		g, err := tryScope(opts, v2root, supLeaf, gname, lim, need, self)
		if err == nil {
			return g, v2Report(g, "scope", lim), nil
		}
		*scopeErr = err
		why = append(why, "systemd user scope: "+err.Error())
	}

	// 3. sibling: a new child of our parent, when the parent is delegated and
	// its children get the controllers.
	if cur != v2root {
		parent := filepath.Dir(cur)
		if g, err := tryAt(parent, gname, lim, need, !opts.Require); err == nil {
			return g, v2Report(g, "sibling", lim), nil
		} else {
			why = append(why, "sibling: "+err.Error())
		}
	}

	// 4. root-owned hierarchy, when started by root.
	if geteuid() == 0 {
		if g, err := tryAt(v2root, gname, lim, need, !opts.Require); err == nil {
			return g, v2Report(g, "root", lim), nil
		} else {
			why = append(why, "root: "+err.Error())
		}
	} else {
		why = append(why, "root: not root")
	}
	return nil, Report{}, errors.New(strings.Join(why, "; "))
}

// rootFitSkips lets rootFit's answer skip the strategies; tests turn it
// off to check that skipping never changes what Open decides.
var rootFitSkips = true

// rootFit is fit at the hierarchy's root v2root: nil when its controllers
// could cover need (with partial, as fit lets a missing cpu go), else why
// no group below it can.
func rootFit(v2root string, need []string, lim Limits, partial bool) error {
	if len(need) == 0 {
		return nil
	}
	have, err := readList(filepath.Join(v2root, "cgroup.controllers"))
	if err != nil {
		// No answer is no reason to skip: the strategies decide, as
		// before, each from its own directory.
		return nil
	}
	if _, _, _, err := fit(v2root, have, need, lim, partial); err != nil {
		return fmt.Errorf("%w, so no group below it has them", err)
	}
	return nil
}

// tryScope asks opts.Scope for a delegated cgroup holding this process and
// makes the sandbox's group in it, as tryLeaf does in our own cgroup.
func tryScope(opts Options, v2root, supLeaf, gname string, lim Limits, need []string, self int) (*v2Group, error) {
	path, err := opts.Scope()
	if err != nil {
		return nil, err
	}
	// The kernel's word, not the manager's: the process must now be in
	// the cgroup it was told about (a manager of another user, a fake, or a
	// move that failed would leave it elsewhere).
	_, now, err := readSelf(opts.selfCgroup())
	if err != nil {
		return nil, fmt.Errorf("read own cgroup from %s: %w", opts.selfCgroup(), err)
	}
	if filepath.Clean("/"+now) != filepath.Clean("/"+path) {
		return nil, fmt.Errorf("the manager reported %s, but this process is in %s", path, filepath.Clean("/"+now))
	}
	return tryLeaf(filepath.Join(v2root, filepath.Clean("/"+path)), supLeaf, gname, lim, need, self, !opts.Require)
}

// fit checks that dir's controllers cover need. With partial, a missing
// cpu controller alone is let go (need and lim without cpu, cpuDropped):
// systemd before 252 delegates only memory and pids to user sessions, and
// real memory and pids limits beat none; the report says --cpus is not
// enforced, and --require-limits (no partial) still refuses.
func fit(dir string, have, need []string, lim Limits, partial bool) ([]string, Limits, bool, error) {
	m := missing(have, need)
	if len(m) == 0 {
		return need, lim, false, nil
	}
	if partial && len(m) == 1 && m[0] == "cpu" {
		lim.CPUs = 0
		return v2Needed(lim), lim, true, nil
	}
	return nil, lim, false, fmt.Errorf("%s lacks controllers %v", dir, m)
}

// createFit is createV2 in a parent known to work (our own supervisor
// leaf's parent), after fit.
func createFit(parent, gname string, lim Limits, need []string, partial bool) (*v2Group, error) {
	need, lim, dropped, err := fitIn(parent, need, lim, partial)
	if err != nil {
		return nil, err
	}
	return createNoting(parent, gname, lim, need, dropped)
}

func tryLeaf(cur, supLeaf, gname string, lim Limits, need []string, self int, partial bool) (*v2Group, error) {
	need, lim, dropped, err := fitDelegated(cur, need, lim, partial)
	if err != nil {
		return nil, err
	}
	pids, err := readPids(cur)
	if err != nil {
		return nil, err
	}
	if len(pids) != 1 || pids[0] != self {
		return nil, fmt.Errorf("%s holds %d other processes", cur, len(pids)-1)
	}
	leaf := filepath.Join(cur, supLeaf)
	if err := mkdirGroup(leaf); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("make supervisor leaf: %w", err)
	}
	// Moving the thread group leader's pid moves every thread (cgroup v2
	// cgroup.procs semantics), so the whole multithreaded Go process moves.
	if err := writeFile(filepath.Join(leaf, "cgroup.procs"), strconv.Itoa(self)); err != nil {
		_ = rmdirGroup(leaf)
		return nil, fmt.Errorf("move supervisor to leaf: %w", err)
	}
	if err := enableControllers(cur, need); err != nil {
		// Undo: back to where we were, so nothing changed.
		_ = writeFile(filepath.Join(cur, "cgroup.procs"), strconv.Itoa(self))
		_ = rmdirGroup(leaf)
		return nil, err
	}
	return createNoting(cur, gname, lim, need, dropped)
}

func tryAt(parent, gname string, lim Limits, need []string, partial bool) (*v2Group, error) {
	need, lim, dropped, err := fitDelegated(parent, need, lim, partial)
	if err != nil {
		return nil, err
	}
	if err := enableControllers(parent, need); err != nil {
		return nil, err
	}
	return createNoting(parent, gname, lim, need, dropped)
}

// fitDelegated is fitIn for a group this uid must be able to write.
func fitDelegated(dir string, need []string, lim Limits, partial bool) ([]string, Limits, bool, error) {
	if !delegated(dir) {
		return nil, lim, false, fmt.Errorf("%s is not writable by uid %d (not delegated)", dir, geteuid())
	}
	return fitIn(dir, need, lim, partial)
}

// fitIn is fit against the controllers dir has.
func fitIn(dir string, need []string, lim Limits, partial bool) ([]string, Limits, bool, error) {
	have, err := readList(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return nil, lim, false, err
	}
	return fit(dir, have, need, lim, partial)
}

// createNoting is createV2, noting whether fit dropped the cpu limit.
func createNoting(parent, gname string, lim Limits, need []string, dropped bool) (*v2Group, error) {
	g, err := createV2(parent, gname, lim, need)
	if g != nil {
		g.cpuDropped = dropped
	}
	return g, err
}

func createV2(parent, gname string, lim Limits, need []string) (_ *v2Group, err error) {
	dir := filepath.Join(parent, gname)
	if err := mkdirGroup(dir); err != nil {
		return nil, fmt.Errorf("make cgroup: %w", err)
	}
	defer func() {
		if err != nil {
			_ = rmdirGroup(dir)
		}
	}()
	have, err := readList(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return nil, err
	}
	if m := missing(have, need); len(m) > 0 {
		return nil, fmt.Errorf("%s did not get controllers %v", dir, m)
	}
	g := &v2Group{dir: dir, fd: -1}
	if lim.MemoryBytes > 0 {
		if err := writeFile(filepath.Join(dir, "memory.max"), strconv.FormatInt(lim.MemoryBytes, 10)); err != nil {
			return nil, err
		}
		// No swap beyond the limit: otherwise a memory bomb spills into
		// swap and the limit only slows it down.
		if err := writeFile(filepath.Join(dir, "memory.swap.max"), "0"); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			g.noSwapFile = true // kernel without swap accounting: nothing to swap to via this group
		}
	}
	if p := lim.pidsLimit(); p > 0 {
		// The pids controller is what contains a fork bomb.
		if err := writeFile(filepath.Join(dir, "pids.max"), strconv.FormatInt(p, 10)); err != nil {
			return nil, err
		}
	}
	if lim.CPUs > 0 {
		q := int64(lim.CPUs * cpuPeriodUs)
		if err := writeFile(filepath.Join(dir, "cpu.max"), fmt.Sprintf("%d %d", q, cpuPeriodUs)); err != nil {
			return nil, err
		}
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open cgroup for CLONE_INTO_CGROUP", Path: dir, Err: err}
	}
	g.fd = fd
	return g, nil
}

func v2Report(g *v2Group, strategy string, lim Limits) Report {
	cpus := lim.CPUs
	if g.cpuDropped {
		lim.CPUs = 0
	}
	r := Report{Mode: "v2", Strategy: strategy, Path: g.dir, Enforced: cgroupEnforced(lim, "cgroup-v2")}
	if g.cpuDropped {
		r.Warnings = append(r.Warnings, fmt.Sprintf("cpus: `cpus` %v is not enforced: the delegated cgroup %s has no cpu controller (systemd before 252 delegates only memory and pids to user sessions; `require-limits` refuses this)", cpus, filepath.Dir(g.dir)))
	}
	if g.noSwapFile {
		r.Warnings = append(r.Warnings, "swap: this kernel has no memory.swap.max (no swap accounting); swap use is not limited separately")
	}
	return r
}

type v2Group struct {
	dir        string
	fd         int
	noSwapFile bool
	cpuDropped bool // --cpus asked, but the parent had no cpu controller (see fit)
	subs       subs // jail exec commands' groups below this one
}

func (g *v2Group) Mode() string { return "v2" }
func (g *v2Group) Path() string { return g.dir }
func (g *v2Group) FD() (int, bool) {
	return g.fd, g.fd >= 0
}

func (g *v2Group) Add(pid int) error {
	return writeFile(filepath.Join(g.dir, "cgroup.procs"), strconv.Itoa(pid))
}

// Kill: cgroup.kill takes the subs with the group; where it is missing
// (freeze and kill what cgroup.procs lists) they are killed first.
func (g *v2Group) Kill() error {
	if err := g.subs.killAll(); err != nil {
		return err
	}
	return killV2(g.dir)
}

// killV2 uses cgroup.kill (5.14+: the kernel SIGKILLs the whole subtree
// and new forks into it fail), else freeze+kill via cgroup.freeze (5.2+).
func killV2(dir string) error {
	err := writeFile(filepath.Join(dir, "cgroup.kill"), "1")
	if errors.Is(err, fs.ErrNotExist) {
		return freezeKill(dir, filepath.Join(dir, "cgroup.freeze"), "1", "0")
	}
	if err != nil {
		return fmt.Errorf("kill cgroup: %w", err)
	}
	return waitEmpty(dir, killTimeout)
}

func (g *v2Group) Events() (Events, error) {
	mem, err := readKV(filepath.Join(g.dir, "memory.events"))
	if err != nil {
		return Events{}, fmt.Errorf("cgroup events: %w", err)
	}
	pids, err := readKV(filepath.Join(g.dir, "pids.events"))
	if err != nil {
		return Events{}, fmt.Errorf("cgroup events: %w", err)
	}
	return Events{OOMKills: mem["oom_kill"], MemoryMaxHits: mem["max"], PidsMaxHits: pids["max"]}, nil
}

func (g *v2Group) Stats() (Stats, error) {
	var s Stats
	cpu, err := readKV(filepath.Join(g.dir, "cpu.stat"))
	if err != nil {
		return s, fmt.Errorf("cgroup stats: %w", err)
	}
	s.CPU = time.Duration(cpu["usage_usec"]) * time.Microsecond
	for _, f := range []struct {
		name string
		dst  *uint64
	}{{"memory.peak", &s.MemoryPeak}, {"pids.current", &s.PidsCurrent}, {"pids.peak", &s.PidsPeak}} {
		if *f.dst, err = readUintOpt(filepath.Join(g.dir, f.name)); err != nil {
			return s, fmt.Errorf("cgroup stats: %w", err)
		}
	}
	return s, nil
}

// Only: a group below it other than a live sub (none is made but subs)
// says no, as does a process in a sub.
func (g *v2Group) Only(pid int) bool {
	return onlyIn([]string{g.dir}, pid, g.subs.known) && g.subs.empty()
}

func (g *v2Group) Delete() error {
	if g.fd >= 0 {
		_ = unix.Close(g.fd)
		g.fd = -1
	}
	if err := g.subs.removeAll(); err != nil {
		return err
	}
	return rmdirRetry(g.dir, killTimeout)
}
