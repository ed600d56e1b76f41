package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// This file: groups below a sandbox's group, one per jail exec command, so
// that the command's kill reaches all it started (a double-forked setsid'd
// child whose parent exited has no link to the command in /proc; it stays
// in its cgroup, which it cannot leave: v1 directories are root's, and the
// sandbox has no cgroupfs of its own).

// SubMaker is a Group (v1 or v2) that makes groups below its own. The
// sandbox's limits still cover what is in them: v1's sub is made in the
// freezer hierarchy only (the command stays in the sandbox's memory, pids
// and cpu groups), v2's is a child with no controllers of its own, charged
// to the sandbox's group above it.
type SubMaker interface {
	// Sub makes the group name (letters, digits and '-') below the
	// group. The Group's Kill and Delete take its subs with them, and
	// Only counts their processes.
	Sub(name string) (*Sub, error)
}

// Sub is one group below a sandbox's (SubMaker).
type Sub struct {
	dir string
	set *subs
}

// subs is a group's book of its live subs.
type subs struct {
	mu   sync.Mutex
	live map[string]*Sub
}

// Path is the sub's directory.
func (s *Sub) Path() string { return s.dir }

// Add moves a process (all its threads) into the sub. Call it before the
// process can fork (jail exec: while its first exec waits for the
// supervisor's answer): what it forks later is born inside.
func (s *Sub) Add(pid int) error {
	return writeFile(filepath.Join(s.dir, "cgroup.procs"), strconv.Itoa(pid))
}

// Kill SIGKILLs every process in the sub (v2 cgroup.kill, v1
// freeze-kill-thaw) and waits until it is empty.
func (s *Sub) Kill() error {
	if err := killDir(s.dir); err != nil {
		return fmt.Errorf("kill %s: %w", s.dir, err)
	}
	return nil
}

// Remove removes the sub if no process is in it, without waiting; removed
// is false while processes remain (the Group's Kill and Delete take it).
func (s *Sub) Remove() (removed bool, err error) {
	if pids, err := readPids(s.dir); err == nil && len(pids) > 0 {
		return false, nil
	}
	err = rmdirGroup(s.dir)
	if errors.Is(err, unix.EBUSY) {
		return false, nil
	}
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return false, &os.PathError{Op: "remove cgroup", Path: s.dir, Err: err}
	}
	s.set.mu.Lock()
	delete(s.set.live, filepath.Base(s.dir))
	s.set.mu.Unlock()
	return true, nil
}

// subName is a sub's name: no separator, no dot name, nothing the kernel
// takes for one of its files.
func subName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("cgroup sub name %q: empty or too long", name)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("cgroup sub name %q: only a-z, 0-9 and '-'", name)
		}
	}
	return nil
}

func (set *subs) make(parent, name string) (*Sub, error) {
	if err := subName(name); err != nil {
		return nil, err
	}
	dir := filepath.Join(parent, name)
	// mkdir, not MkdirAll: a name already there (planted or stale) is an
	// error, never a group shared with something else.
	if err := mkdirGroup(dir); err != nil {
		return nil, fmt.Errorf("make cgroup: %w", err)
	}
	s := &Sub{dir: dir, set: set}
	set.mu.Lock()
	if set.live == nil {
		set.live = map[string]*Sub{}
	}
	set.live[name] = s
	set.mu.Unlock()
	return s, nil
}

func (set *subs) list() []*Sub {
	set.mu.Lock()
	defer set.mu.Unlock()
	out := make([]*Sub, 0, len(set.live))
	for _, s := range set.live {
		out = append(out, s)
	}
	return out
}

// killAll kills every live sub (before the group's own kill: v1's kill of
// the group reads the group's own cgroup.procs, which lists none of its
// subs' processes).
func (set *subs) killAll() error {
	var errs []error
	for _, s := range set.list() {
		if err := s.Kill(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeAll removes every live sub (before the group itself: a group with
// a sub cannot be removed).
func (set *subs) removeAll() error {
	var errs []error
	for _, s := range set.list() {
		if err := rmdirRetry(s.dir, killTimeout); err != nil {
			errs = append(errs, err)
			continue
		}
		set.mu.Lock()
		delete(set.live, filepath.Base(s.dir))
		set.mu.Unlock()
	}
	return errors.Join(errs...)
}

// empty tells whether no live sub lists a process (false when one cannot
// be read).
func (set *subs) empty() bool {
	for _, s := range set.list() {
		if pids, err := readPids(s.dir); err != nil || len(pids) > 0 {
			return false
		}
	}
	return true
}

// known tells whether name is a live sub's.
func (set *subs) known(name string) bool {
	set.mu.Lock()
	defer set.mu.Unlock()
	return set.live[name] != nil
}

func (g *v1Group) Sub(name string) (*Sub, error) {
	// The freezer hierarchy only: its group is what v1's kill freezes, and
	// the command stays in the sandbox's memory, pids and cpu groups, so
	// the limits hold it as before.
	fz, ok := g.dirs["freezer"]
	if !ok {
		return nil, errors.New("cgroup v1: no freezer group")
	}
	return g.subs.make(fz, name)
}

func (g *v2Group) Sub(name string) (*Sub, error) {
	// No controllers enabled in the sandbox's group (its subtree_control
	// stays empty): its processes and the sub's may both be in it (the
	// no-internal-process rule is about controllers), and the sub is
	// charged to the sandbox's limits above it.
	return g.subs.make(g.dir, name)
}
