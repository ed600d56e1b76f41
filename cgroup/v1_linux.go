package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// v1Controllers are the legacy hierarchies we use. freezer is always
// required: without it Kill could race a fork loop.
var v1Controllers = []struct{ name string }{
	{"memory"}, {"pids"}, {"cpu"}, {"cpuacct"}, {"freezer"},
}

type v1Group struct {
	dirs  map[string]string // controller -> group directory
	order []string          // distinct directories, creation order
	ctrls []string          // a controller of each order entry (its hierarchy)
	path  string
	memsw bool
	// joined is held while a supervisor thread is inside the group
	// (JoinThread until its leave): Kill and Delete wait for it, so that
	// neither ever freezes, signals or counts a thread of jail's own.
	joined sync.Mutex
	subs   subs // jail exec commands' groups, in the freezer hierarchy
}

func v1Needed(lim Limits) []string {
	n := []string{"freezer"}
	if lim.MemoryBytes > 0 {
		n = append(n, "memory")
	}
	if lim.pidsLimit() > 0 {
		n = append(n, "pids")
	}
	if lim.CPUs > 0 {
		n = append(n, "cpu", "cpuacct") // cpuacct: the usage the quota is judged by
	}
	return n
}

// self and selfErr are this process's v1 paths by controller and why they
// could not be read (Open reads /proc/self/cgroup once).
func openV1(opts Options, gname string, lim Limits, self map[string]string, selfErr error) (_ Group, _ Report, err error) {
	if geteuid() != 0 {
		// v1 hierarchies are never delegated to users safely (no
		// containment rule like v2's), so only root uses them.
		return nil, Report{}, errors.New("needs root")
	}
	root := opts.root()
	if selfErr != nil {
		return nil, Report{}, fmt.Errorf("read own cgroup from %s: %w", opts.selfCgroup(), selfErr)
	}
	need := v1Needed(lim)
	g := &v1Group{dirs: map[string]string{}}
	defer func() {
		if err != nil {
			for i := len(g.order) - 1; i >= 0; i-- {
				_ = rmdirGroup(g.order[i])
			}
		}
	}()
	seen := map[string]string{}
	for _, c := range v1Controllers {
		if !slices.Contains(need, c.name) {
			// Every v1 hierarchy costs one migration at start (each waits
			// for the global threadgroup rwsem and an RCU grace period,
			// about a millisecond): join only those a limit needs. Usage
			// figures then come from the reaper's rusage.
			continue
		}
		base := filepath.Join(root, c.name)
		if _, err := os.Stat(filepath.Join(base, "cgroup.procs")); err != nil {
			if slices.Contains(need, c.name) {
				return nil, Report{}, fmt.Errorf("controller %s not mounted at %s", c.name, base)
			}
			continue
		}
		// Nest under our own group so an outer limit (a CI runner's)
		// still applies to the sandbox.
		parent := filepath.Join(base, filepath.Clean("/"+self[c.name]))
		real, err := v1Real(base, parent)
		if err != nil {
			return nil, Report{}, fmt.Errorf("controller %s: %w", c.name, err)
		}
		dir := filepath.Join(real, gname)
		if prev, ok := seen[real]; ok { // co-mounted (cpu,cpuacct)
			g.dirs[c.name] = prev
			continue
		}
		if err := mkdirGroup(dir); err != nil {
			return nil, Report{}, fmt.Errorf("make cgroup: %w", err)
		}
		seen[real] = dir
		g.dirs[c.name] = dir
		g.order = append(g.order, dir)
		g.ctrls = append(g.ctrls, c.name)
	}
	if d, ok := g.dirs["memory"]; ok && lim.MemoryBytes > 0 {
		v := strconv.FormatInt(lim.MemoryBytes, 10)
		if err := writeFile(filepath.Join(d, "memory.limit_in_bytes"), v); err != nil {
			return nil, Report{}, err
		}
		// memsw = memory+swap; equal to the limit means no swap beyond it.
		// Written after limit_in_bytes: the kernel keeps memsw >= limit.
		if err := writeFile(filepath.Join(d, "memory.memsw.limit_in_bytes"), v); err == nil {
			g.memsw = true
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, Report{}, err
		}
	}
	if d, ok := g.dirs["pids"]; ok {
		if p := lim.pidsLimit(); p > 0 {
			if err := writeFile(filepath.Join(d, "pids.max"), strconv.FormatInt(p, 10)); err != nil {
				return nil, Report{}, err
			}
		}
	}
	if d, ok := g.dirs["cpu"]; ok && lim.CPUs > 0 {
		if err := writeFile(filepath.Join(d, "cpu.cfs_period_us"), strconv.Itoa(cpuPeriodUs)); err != nil {
			return nil, Report{}, err
		}
		if err := writeFile(filepath.Join(d, "cpu.cfs_quota_us"), strconv.FormatInt(int64(lim.CPUs*cpuPeriodUs), 10)); err != nil {
			return nil, Report{}, err
		}
	}
	g.path = g.dirs["memory"]
	if g.path == "" {
		g.path = g.dirs["freezer"]
	}
	rep := Report{Mode: "v1", Strategy: "v1", Path: g.path, Enforced: cgroupEnforced(lim, "cgroup-v1")}
	if lim.MemoryBytes > 0 && !g.memsw {
		rep.Warnings = append(rep.Warnings, "swap: no memory.memsw (kernel without swap accounting); swap use is not limited separately")
	}
	return g, rep, nil
}

// v1Real is the directory parent (a group below the hierarchy mounted at
// base) names, with a symlinked base resolved: co-mounted controllers
// (cpu and cpuacct -> cpu,cpuacct) are one hierarchy, and openV1 makes one
// group in it. Below base is cgroupfs, which has no symlinks, so only
// base is looked at (one lstat; filepath.EvalSymlinks of the whole path
// took one per component for every controller, /sys and /sys/fs each
// time). A base that is not a symlink keeps the path as the host names it.
func v1Real(base, parent string) (string, error) {
	fi, err := os.Lstat(base)
	if err != nil {
		return "", err
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return parent, nil
	}
	return filepath.EvalSymlinks(parent)
}

func (g *v1Group) Mode() string    { return "v1" }
func (g *v1Group) Path() string    { return g.path }
func (g *v1Group) FD() (int, bool) { return -1, false }

// Add writes pid to every controller's cgroup.procs (v1 hierarchies are
// independent: each must be joined separately).
func (g *v1Group) Add(pid int) error {
	// One write per hierarchy, in parallel: each v1 migration waits for an
	// RCU grace period, which dominates jail's startup when done in a row.
	errs := make([]error, len(g.order))
	var wg sync.WaitGroup
	for i, d := range g.order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = writeFile(filepath.Join(d, "cgroup.procs"), strconv.Itoa(pid))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("add pid %d: %w", pid, err)
		}
	}
	return nil
}

// JoinThread moves the calling thread, which its caller has locked to its
// goroutine (runtime.LockOSThread), into the group in every hierarchy,
// and returns leave, which moves it back to the supervisor's own group
// (the group's parent in each hierarchy, where Open found the process):
// what the thread clones in between (init) is born inside, with no moment
// outside its limits. A thread that moves itself (writing "0" into a v1 tasks file)
// skips the kernel's global threadgroup lock, whose taking waits for an
// RCU grace period (cgroup_procs_write_start: 12-16 ms here for Add's
// write of another process's pid; 0.15 ms for this). Both sets of tasks
// files are opened before the first move, so that leave only writes.
// (The thread's own /proc/thread-self/cgroup is not read: 0.16 ms, more
// than the moves, and Go's threads are where the process is, unless
// someone moved one alone; leave then puts it with the others.)
// Kill and Delete wait until leave has run. On an error from either, the
// thread may be left inside: the caller must end it (a locked goroutine
// that returns ends its thread), never run anything else on it.
func (g *v1Group) JoinThread() (leave func() error, err error) {
	in := make([]int, 0, len(g.order))
	back := make([]int, 0, len(g.order))
	closeAll := func() {
		for _, fd := range append(in, back...) {
			unix.Close(fd)
		}
	}
	open := func(path string) (int, error) {
		fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, fmt.Errorf("open %s: %w", path, err)
		}
		return fd, nil
	}
	for _, d := range g.order {
		fd, err := open(filepath.Join(d, "tasks"))
		if err != nil {
			closeAll()
			return nil, err
		}
		in = append(in, fd)
		// Back to the group's parent: the supervisor's own group.
		fd, err = open(filepath.Join(filepath.Dir(d), "tasks"))
		if err != nil {
			closeAll()
			return nil, err
		}
		back = append(back, fd)
	}
	g.joined.Lock()
	move := func(fds []int, where string) error {
		var errs []error
		for i, fd := range fds {
			if _, err := unix.Write(fd, []byte("0")); err != nil {
				errs = append(errs, fmt.Errorf("move thread %d %s %s's %s group: %w", unix.Gettid(), where, g.ctrls[i], g.order[i], err))
			}
		}
		return errors.Join(errs...)
	}
	if err := move(in, "into"); err != nil {
		closeAll()
		g.joined.Unlock()
		return nil, err
	}
	return func() error {
		err := move(back, "out of")
		closeAll()
		g.joined.Unlock()
		return err
	}, nil
}

// Kill freezes the group (nothing can fork while we read cgroup.procs),
// SIGKILLs every pid, thaws so the kills land, until empty; then checks
// the other hierarchies too.
func (g *v1Group) Kill() error {
	g.joined.Lock()
	defer g.joined.Unlock()
	// The subs first: the group's own cgroup.procs lists none of their
	// processes (freezing it freezes them, but signals only what it lists).
	if err := g.subs.killAll(); err != nil {
		return err
	}
	fz := g.dirs["freezer"]
	if err := freezeKill(fz, filepath.Join(fz, "freezer.state"), "FROZEN", "THAWED"); err != nil {
		return err
	}
	for _, d := range g.order {
		if d == fz {
			continue
		}
		if err := signalAllUntilEmpty(d, nil, nil); err != nil {
			return err
		}
	}
	return nil
}

func (g *v1Group) Events() (Events, error) {
	var e Events
	if d, ok := g.dirs["memory"]; ok {
		oc, err := readKV(filepath.Join(d, "memory.oom_control"))
		if err != nil {
			return e, fmt.Errorf("cgroup events: %w", err)
		}
		e.OOMKills = oc["oom_kill"] // kernel >= 4.13
		if e.MemoryMaxHits, err = readUintOpt(filepath.Join(d, "memory.failcnt")); err != nil {
			return e, fmt.Errorf("cgroup events: %w", err)
		}
	}
	if d, ok := g.dirs["pids"]; ok {
		pe, err := readKV(filepath.Join(d, "pids.events"))
		if err != nil {
			return e, fmt.Errorf("cgroup events: %w", err)
		}
		e.PidsMaxHits = pe["max"]
	}
	return e, nil
}

func (g *v1Group) Stats() (Stats, error) {
	var s Stats
	var err error
	if d, ok := g.dirs["cpuacct"]; ok {
		var ns uint64
		if ns, err = readUintOpt(filepath.Join(d, "cpuacct.usage")); err != nil {
			return s, fmt.Errorf("cgroup stats: %w", err)
		}
		s.CPU = time.Duration(ns)
	}
	if d, ok := g.dirs["memory"]; ok {
		if s.MemoryPeak, err = readUintOpt(filepath.Join(d, "memory.max_usage_in_bytes")); err != nil {
			return s, fmt.Errorf("cgroup stats: %w", err)
		}
	}
	if d, ok := g.dirs["pids"]; ok {
		if s.PidsCurrent, err = readUintOpt(filepath.Join(d, "pids.current")); err != nil {
			return s, fmt.Errorf("cgroup stats: %w", err)
		}
		// v1 has no pids.peak.
	}
	return s, nil
}

// Only reads one hierarchy: a process is in every hierarchy's group (init
// joined them all; children inherit each), and only root, whose
// directories these are, could move one into another group of one
// hierarchy or make a group below. Each v1 cgroup.procs read builds and
// sorts a pid list (0.1-0.15 ms here).
func (g *v1Group) Only(pid int) bool {
	return len(g.order) > 0 && onlyPid(g.order[0], pid) && g.subs.empty()
}

func (g *v1Group) Delete() error {
	g.joined.Lock()
	defer g.joined.Unlock()
	var errs []error
	if err := g.subs.removeAll(); err != nil {
		errs = append(errs, err)
	}
	for i := len(g.order) - 1; i >= 0; i-- {
		if err := rmdirRetry(g.order[i], killTimeout); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
