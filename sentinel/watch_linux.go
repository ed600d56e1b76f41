package sentinel

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/dirnames"
)

// Sentinel watches the writable trees and quarantines what must not be
// there. Its zero value is not usable: call New.
type Sentinel struct {
	cfg Config
	q   *quarantine

	mu       sync.Mutex
	file     *os.File         // the inotify instance, while watching
	idle     *os.File         // the inotify instance after Stop: no watch left, closed last (Close)
	wds      map[int32]string // watch descriptor -> directory
	byPath   map[string]int32
	absent   []Absent
	anchor   map[string]string // absent path -> directory watched for it
	observed map[string]bool   // directories Inspect judges
	globs    []Glob
	// globAnchor is the directory watched for each glob (its Dir, or the
	// nearest existing ancestor while Dir is missing).
	globAnchor map[int]string
	full       bool // MaxWatches reached
	done       chan struct{}
	look       *look // the look for absent paths under way (rearm, CheckAbsent)
}

// look is one pass over the absent paths: the directories it listed
// (listNames) instead of an lstat per absent path below them. A listing
// answers "absent" only for this pass, and only where nothing can slip
// past it: at start and during the run, for a directory watched before it
// was listed (a name made after the listing is an event of that watch);
// in the exit check (exit), anywhere: the sandbox is gone.
type look struct {
	exit   bool
	names  map[string]map[string]bool // dir -> its names; nil: not listed (lstat)
	needed map[string]int             // dir -> lookups below it so far
}

func newLook(exit bool) *look {
	return &look{exit: exit, names: map[string]map[string]bool{}, needed: map[string]int{}}
}

// listMax: a directory with more entries is not listed (an lstat per
// absent path is cheaper than reading it).
const listMax = 4096

// surelyAbsent reports whether name is surely not in dir, from this look's
// listing of dir. dir is listed the second time a lookup needs it (one
// absent path below a directory is one lstat either way). s.mu is held.
func (s *Sentinel) surelyAbsent(dir, name string) bool {
	lk := s.look
	if lk == nil {
		return false
	}
	names, ok := lk.names[dir]
	if !ok {
		if !lk.exit && (s.file == nil || s.byPath[dir] == 0) {
			// Not watched (yet): a name made after a listing would go
			// unseen. The lstat looks at the moment of the lookup.
			return false
		}
		if lk.needed[dir]++; lk.needed[dir] < 2 {
			return false
		}
		names, _ = dirnames.Names(dir, listMax) // nil: not listed, lstat
		lk.names[dir] = names
		if afterList != nil {
			afterList(dir)
		}
	}
	return names != nil && !names[name]
}

// afterList, when set (tests), runs right after a directory was listed.
var afterList func(dir string)

// New makes a Sentinel. Quarantine and Check work at once; Start watches.
func New(cfg Config) *Sentinel {
	if cfg.MaxWatches <= 0 {
		cfg.MaxWatches = 8192
	}
	s := &Sentinel{cfg: cfg, wds: map[int32]string{}, byPath: map[string]int32{}, anchor: map[string]string{}, observed: map[string]bool{}}
	s.q = newQuarantine(cfg)
	s.absent = append(s.absent, cfg.Absent...)
	s.globs = append(s.globs, cfg.Globs...)
	s.globAnchor = map[int]string{}
	for _, d := range cfg.Observe {
		s.observed[d] = true
	}
	return s
}

// Finish stops watching and completes every move: entries renamed aside
// during the run are copied into the quarantine and removed from the tree.
// Call it once the sandbox is gone (nothing writes them any more). Entries
// that could not be copied stay renamed in place and are reported again.
func (s *Sentinel) Finish() {
	s.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range s.q.finish(false) {
		if s.cfg.Notify != nil {
			s.cfg.Notify(ev)
		}
	}
}

// Close finishes and releases the descriptors it keeps, the inotify one
// last.
func (s *Sentinel) Close() {
	s.CloseLater()()
}

// CloseLater is Close but for the inotify descriptor: it returns that
// close, for the caller to run later, off its critical path (it is safe to
// call more than once, and from any goroutine). Closing an inotify
// descriptor waits for fsnotify's mark reaper (flush_delayed_work: one
// synchronize_srcu), 5-19 ms when another instance was closed just
// before; Stop removed every watch already, so once the reaper has run on
// its own (1 jiffy, then one grace period, in a kworker) the close costs
// ~0.03 ms.
func (s *Sentinel) CloseLater() (closeWatch func()) {
	s.Finish()
	s.mu.Lock()
	s.q.close()
	f := s.idle
	s.idle = nil
	s.mu.Unlock()
	if f == nil {
		return func() {}
	}
	var once sync.Once
	return func() { once.Do(func() { f.Close() }) }
}

const watchMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_ATTRIB |
	unix.IN_MOVE_SELF | unix.IN_DELETE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK

// Start arms the watches, judges what is there already, and watches until
// Stop. An error means no watching (Check at exit still works).
func (s *Sentinel) Start() error {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return fmt.Errorf("inotify_init1: %w", err)
	}
	s.mu.Lock()
	// Non-blocking: the runtime's poller wakes Read, and Close ends it.
	s.file = os.NewFile(uintptr(fd), "inotify")
	s.done = make(chan struct{})
	s.rearm("run")
	// The loop gets its file here, not from s.file: a Stop right after
	// Start (a run interrupted during its setup) clears s.file before the
	// loop could read it, and a loop reading a nil file spun forever.
	f := s.file
	s.mu.Unlock()
	// The read buffer is made here, on the heap: a 64 KiB slice local to
	// the loop would be on its goroutine's stack, zeroed there (16 page
	// faults, and a stack grown and copied to 128 KiB) at every start;
	// fresh heap pages are touched only as far as a read fills them.
	go s.loop(f, make([]byte, inotifyBuf))
	return nil
}

// Stop ends watching and waits for the watcher to finish what it was
// doing. What the watcher had not read by then is not judged by it: the
// exit check (Check, CheckAbsent) looks at the trees themselves.
//
// It removes every watch and wakes the watcher with a read deadline, but
// keeps the descriptor open until Close: the kernel frees the removed
// watches' marks in its reaper (1 jiffy, then an SRCU grace period) while
// the caller runs its exit check, instead of in a close that would wait
// for it (closing with watches left, 5-19 ms when another inotify
// instance was closed just before).
func (s *Sentinel) Stop() {
	s.Unwatch()
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	// A second Stop (the first may run in the background) returns only
	// once the watch loop has ended too.
	if done != nil {
		<-done
	}
}

// Unwatch is Stop without the wait for the watch loop: every watch is
// removed and the loop woken before it returns, and the loop ends on its
// own. The run's end calls it first thing on init's exit message: the
// kernel frees the removed marks in its reaper (an SRCU grace period,
// 2-2.5 ms here) while the end goes on, and the descriptor's close at
// the end waits for that reaper unless it has run (exitwait, endtail
// rows): every microsecond the removals come sooner is one the close
// waits less. Stop, Check and CheckAbsent still wait for the loop. Safe
// to call more than once, and with Stop.
func (s *Sentinel) Unwatch() {
	s.mu.Lock()
	f := s.file
	// From here on the watcher handles nothing it reads (loop), and no
	// watch is added (watch): the IN_IGNORED events of the removals below
	// re-arm nothing.
	s.file = nil
	if f != nil {
		fd := int(f.Fd()) // os.NewFile of a non-blocking descriptor: Fd leaves it so
		for wd := range s.wds {
			// EINVAL for a watch the kernel dropped already (its
			// directory went): nothing to remove.
			_, _ = unix.InotifyRmWatch(fd, uint32(wd))
		}
		clear(s.wds)
		clear(s.byPath)
		s.idle = f
	}
	s.mu.Unlock()
	if f != nil {
		// Wakes a Read waiting in the poller, without closing.
		if err := f.SetReadDeadline(time.Unix(1, 0)); err != nil {
			// Not in the poller: only a close ends that Read.
			s.mu.Lock()
			s.idle = nil
			s.mu.Unlock()
			f.Close()
		}
	}
}

// Watches reports how many directories are watched, and whether some were
// left out (MaxWatches).
func (s *Sentinel) Watches() (n int, full bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.wds), s.full
}

// CheckAbsent moves every absent path that exists now (the exit check,
// when the caller's own sweep of the trees covers what Inspect judges).
func (s *Sentinel) CheckAbsent(phase string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The caller's check: nothing of the sandbox runs any more.
	s.look = newLook(true)
	defer func() { s.look = nil }()
	for _, a := range s.absent {
		s.checkAbsent(a, phase)
	}
	for i := range s.globs {
		s.checkGlob(i, nil, phase)
	}
}

// Check judges everything now: every absent path, every observed
// directory. It is the exit check's first half (the caller adds its own
// sweep of the trees).
func (s *Sentinel) Check(phase string) {
	s.CheckAbsent(phase)
	s.mu.Lock()
	defer s.mu.Unlock()
	dirs := make([]string, 0, len(s.observed))
	for d := range s.observed {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		s.inspect(d, nil, phase)
	}
}

// Quarantine moves items out of the tree now.
func (s *Sentinel) Quarantine(items []Item, phase string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range items {
		s.move(it, phase)
	}
}

func (s *Sentinel) move(it Item, phase string) {
	if it.Before.IsZero() {
		it.Before = s.cfg.Before
	}
	if ev, ok := s.q.move(it, phase); ok && s.cfg.Notify != nil {
		s.cfg.Notify(ev)
	}
	if len(s.q.pending) > 4096 {
		// Bounded memory: the oldest are surely written by now.
		for _, ev := range s.q.finish(false) {
			if s.cfg.Notify != nil {
				s.cfg.Notify(ev)
			}
		}
	}
}

// Resume completes the moves a supervisor that died had started (its
// pending.jsonl in cfg.Dir), with cfg.Roots as that run's roots. Each gets
// an event (phase "leftover"): the dead run could not say where it ended.
func Resume(cfg Config) {
	s := New(cfg)
	defer s.Close()
	defer func() {
		s.mu.Lock()
		evs := s.q.finish(true)
		s.mu.Unlock()
		for _, ev := range evs {
			if cfg.Notify != nil {
				cfg.Notify(ev)
			}
		}
	}()
	b, err := os.ReadFile(filepath.Join(cfg.Dir, "pending.jsonl"))
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		var p pending
		if json.Unmarshal([]byte(line), &p) == nil && p.Tmp != "" && s.q.rootOf(p.Tmp) != "" {
			p.Ev.Phase = "leftover"
			s.q.pending = append(s.q.pending, p)
			if p.Dest != "" {
				s.q.seq++
			}
		}
	}
}

// inotifyBuf is the size of the watcher's read buffer.
const inotifyBuf = 64 << 10

func (s *Sentinel) loop(f *os.File, buf []byte) {
	defer close(s.done)
	for {
		n, err := f.Read(buf)
		if err != nil && n <= 0 {
			// Stopped (its read deadline, or a close), or an error the
			// poller does not retry (EINTR and EAGAIN never reach here):
			// the exit check is the backstop for what this watcher no
			// longer sees.
			return
		}
		s.mu.Lock()
		if s.file == nil {
			s.mu.Unlock()
			return
		}
		s.events(buf[:n])
		s.mu.Unlock()
	}
}

// events handles one read's worth of inotify events as one batch: each
// touched directory is judged once, with the names that changed.
func (s *Sentinel) events(b []byte) {
	touched := map[string][]string{}
	var order []string
	var newDirs []string
	rearm := false
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		size := unix.SizeofInotifyEvent + int(ev.Len)
		if size > len(b) {
			break
		}
		name := ""
		if ev.Len > 0 {
			name = strings.TrimRight(string(b[unix.SizeofInotifyEvent:size]), "\x00")
		}
		b = b[size:]
		if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
			rearm = true
			continue
		}
		dir, ok := s.wds[ev.Wd]
		if ev.Mask&unix.IN_IGNORED != 0 {
			if ok {
				delete(s.wds, ev.Wd)
				if s.byPath[dir] == ev.Wd {
					delete(s.byPath, dir)
				}
			}
			rearm = true
			continue
		}
		if !ok || strings.HasPrefix(name, AsidePrefix) {
			continue // our own rename aside is no change to judge
		}
		if ev.Mask&(unix.IN_MOVE_SELF|unix.IN_DELETE_SELF) != 0 {
			// The directory moved or went away: paths are stale. Drop the
			// watch and re-arm from the paths as they are now.
			unix.InotifyRmWatch(s.fd(), uint32(ev.Wd))
			delete(s.wds, ev.Wd)
			delete(s.byPath, dir)
			rearm = true
			continue
		}
		if _, seen := touched[dir]; !seen {
			order = append(order, dir)
		}
		touched[dir] = append(touched[dir], name)
		if ev.Mask&unix.IN_ISDIR != 0 && ev.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
			newDirs = append(newDirs, filepath.Join(dir, name))
		}
	}
	if rearm {
		s.rearm("run")
		return
	}
	for _, d := range newDirs {
		if s.observed[d] {
			s.watch(d)
			s.inspect(d, nil, "run")
		}
	}
	for _, dir := range order {
		for _, a := range s.absent {
			if s.anchor[a.Path] == dir {
				s.checkAbsent(a, "run")
			}
		}
		for i := range s.globs {
			switch s.globAnchor[i] {
			case s.globs[i].Dir:
				if s.globs[i].Dir == dir {
					s.checkGlob(i, touched[dir], "run")
				}
			case dir:
				s.checkGlob(i, nil, "run") // on the way to a missing Dir
			}
		}
		if s.observed[dir] {
			s.inspect(dir, touched[dir], "run")
		}
	}
}

func (s *Sentinel) fd() int {
	if s.file == nil {
		return -1
	}
	return int(s.file.Fd())
}

// watch adds an inotify watch on dir (a directory, not followed if a
// symlink). It reports whether dir is watched.
func (s *Sentinel) watch(dir string) bool {
	if s.file == nil {
		return false
	}
	if _, ok := s.byPath[dir]; ok {
		return true
	}
	if len(s.wds) >= s.cfg.MaxWatches {
		s.full = true
		return false
	}
	wd, err := unix.InotifyAddWatch(s.fd(), dir, watchMask)
	if err != nil {
		return false
	}
	s.wds[int32(wd)] = dir
	s.byPath[dir] = int32(wd)
	return true
}

// rearm recomputes every watch from the paths as they are now and judges
// everything (after a start, an overflow, or a watched directory that
// moved).
func (s *Sentinel) rearm(phase string) {
	for _, d := range sortedKeys(s.observed) {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			s.watch(d)
		}
	}
	s.look = newLook(false)
	for _, a := range s.absent {
		s.checkAbsent(a, phase)
	}
	for i := range s.globs {
		s.checkGlob(i, nil, phase)
	}
	s.look = nil
	for _, d := range sortedKeys(s.observed) {
		s.inspect(d, nil, phase)
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkAbsent quarantines a.Path if it exists (or a symlink on the way to
// it), and otherwise watches its nearest existing ancestor.
func (s *Sentinel) checkAbsent(a Absent, phase string) {
	for i := 0; i < 64; i++ { // each round goes one component deeper at most
		anchor, hit, link := s.locate(a.Path)
		switch {
		case hit != "":
			why := a.Why
			if why == "" {
				why = "a protected path that did not exist at start"
			}
			if link {
				why = "a symlink on the way to a protected path (" + a.Path + ")"
			}
			s.move(Item{Path: hit, Rule: a.Rule, Reason: why}, phase)
			if exists(hit) {
				return // could not move it; reported
			}
			continue
		case anchor == "":
			return
		}
		if s.anchor[a.Path] == anchor && s.byPath[anchor] != 0 {
			return
		}
		// Watched before locate looked (watches change only here, under
		// s.mu): anything made since it looked is an event of that watch.
		watched := s.byPath[anchor] != 0
		if afterLocate != nil {
			afterLocate(a.Path)
		}
		if !s.watch(anchor) {
			return
		}
		s.anchor[a.Path] = anchor
		if watched {
			return // the workspace root of most absent paths: one lstat chain each, not two
		}
		// Something may have appeared between locate and the watch.
		if a2, h2, _ := s.locate(a.Path); h2 == "" && a2 == anchor {
			return
		}
	}
}

// afterLocate, when set (tests), runs between checkAbsent's look for a
// path and the watch of its anchor: the window a creation can fall in.
var afterLocate func(path string)

// locate walks from p's root towards p without following symlinks: anchor
// is the deepest existing directory; hit is p itself when it exists, or the
// first symlink on the way (link true).
func (s *Sentinel) locate(p string) (anchor, hit string, link bool) {
	root := s.q.rootOf(p)
	if root == "" || root == p {
		return "", "", false
	}
	anchor = root
	rel := trimDir(p, root)
	cur := root
	parts := strings.Split(rel, "/")
	for i, part := range parts {
		if s.surelyAbsent(cur, part) {
			return anchor, "", false // cur is the anchor: a directory, no symlink
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return anchor, "", false
		}
		if i == len(parts)-1 {
			return anchor, cur, false
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return anchor, cur, true
		}
		if !fi.IsDir() {
			return anchor, "", false // a file where a directory would be: p cannot exist
		}
		anchor = cur
	}
	return anchor, "", false
}

// inspect asks the judge about dir, moves what it names, and observes (and
// judges once) the directories it adds.
func (s *Sentinel) inspect(dir string, names []string, phase string) {
	if s.cfg.Inspect == nil {
		return
	}
	queue := []struct {
		dir   string
		names []string
	}{{dir, names}}
	for n := 0; len(queue) > 0 && n < 10000; n++ {
		cur := queue[0]
		queue = queue[1:]
		items, obs := s.cfg.Inspect(cur.dir, cur.names)
		for _, it := range items {
			s.move(it, phase)
		}
		for _, d := range obs {
			s.observed[d] = true
			s.watch(d)
			queue = append(queue, struct {
				dir   string
				names []string
			}{d, nil})
		}
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
