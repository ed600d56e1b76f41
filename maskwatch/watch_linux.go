package maskwatch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Watch watches the parent directories of the covered paths. Its zero
// value is not usable: call Start.
type Watch struct {
	cfg Config

	mu    sync.Mutex
	falls []Fall   // found under mu, reported after it (report)
	file  *os.File // the inotify instance, while watching
	idle  *os.File // after Unwatch: no watch left, closed by CloseLater's func
	dirs  map[int32]string
	names map[string]map[string]*entry // dir -> name -> entry
	done  chan struct{}
	// unwatched: the paths whose directory could not be watched (Start).
	unwatched []Unwatched
}

// Unwatched returns the paths Start could not watch.
func (w *Watch) Unwatched() []Unwatched {
	if w == nil {
		return nil
	}
	return w.unwatched
}

// entry is one watched path.
type entry struct {
	p    Path
	id   ident // at start (overflow check)
	fell bool
	gone bool // Hides: the path was deleted or renamed away, nothing new is there yet
}

// watchMask: the events that take a mount off a name in the directory.
// IN_CREATE is there for a deletion whose event was not seen; the
// directory's own move is not watched: its parent's watch sees its name
// (every directory between a writable root and a covered path is pinned,
// and so watched itself).
const watchMask = unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_CREATE |
	unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// addWatch is inotify_add_watch (a test makes it fail for one directory).
var addWatch = unix.InotifyAddWatch

// Before is what the covered paths were before init mounted over them.
type Before struct {
	ids map[string]ident
}

// Identify takes the identity of each of paths, for Config.Before. Call
// it before init has its spec: from then on init mounts over the paths,
// and a file the host puts at one of them after its mount is not covered
// (the kernel took the mask off); compared with these identities, such a
// file is a fall. (One the host puts there before init's mount is covered,
// but is reported too: the watch cannot tell the two apart; a false
// alarm, in a window of milliseconds, rather than a fall missed.)
func Identify(paths []Path) *Before {
	b := &Before{ids: make(map[string]ident, len(paths))}
	for _, p := range paths {
		if !filepath.IsAbs(p.Path) {
			continue
		}
		if id, err := identify(p.Path); err == nil {
			b.ids[p.Path] = id
		}
	}
	return b
}

// Start arms a watch on each covered path's parent directory and watches
// until Unwatch. Paths that do not exist are left out (no mount covers a
// host path that is not there). An error means nothing is watched.
func Start(cfg Config) (*Watch, error) {
	w := &Watch{cfg: cfg, dirs: map[int32]string{}, names: map[string]map[string]*entry{}}
	for _, p := range cfg.Paths {
		if !filepath.IsAbs(p.Path) {
			continue
		}
		var id ident
		if cfg.Before != nil {
			// Compared with what the path was before init mounted, not
			// with what is there now: the host may have put a new file
			// there since init's mount took the mask off (the recheck
			// below, once the directories are watched, then reports it).
			var ok bool
			if id, ok = cfg.Before.ids[p.Path]; !ok {
				continue
			}
		} else {
			var err error
			if id, err = identify(p.Path); err != nil {
				continue
			}
		}
		dir, name := filepath.Dir(p.Path), filepath.Base(p.Path)
		if dir == p.Path {
			continue // "/": nothing holds it
		}
		if w.names[dir] == nil {
			w.names[dir] = map[string]*entry{}
		}
		w.names[dir][name] = &entry{p: p, id: id}
	}
	if len(w.names) == 0 {
		return w, nil
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify_init1: %w", err)
	}
	dirs := make([]string, 0, len(w.names))
	for d := range w.names {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		wd, err := addWatch(fd, d, watchMask)
		if err != nil {
			// One directory that cannot be watched (a host socket's in a
			// directory the user may search but not read, the watches'
			// limit) leaves its paths out, not the others: the caller
			// says which (Unwatched).
			err = fmt.Errorf("inotify_add_watch %s: %w", d, err)
			for _, e := range w.names[d] {
				w.unwatched = append(w.unwatched, Unwatched{Path: e.p, Err: err})
			}
			delete(w.names, d)
			continue
		}
		w.dirs[int32(wd)] = d
	}
	sort.Slice(w.unwatched, func(i, j int) bool { return w.unwatched[i].Path.Path < w.unwatched[j].Path.Path })
	// The names were looked at before their directories were watched: a
	// change in between is found by comparing again now.
	w.file = os.NewFile(uintptr(fd), "inotify")
	w.done = make(chan struct{})
	w.mu.Lock()
	w.recheck(time.Now())
	w.mu.Unlock()
	w.report()
	go w.loop(w.file)
	return w, nil
}

// Watches reports how many directories are watched.
func (w *Watch) Watches() int {
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.dirs)
}

// fall notes e's fall once, for report. w.mu is held.
func (w *Watch) fall(e *entry, how string, at time.Time) {
	if e.fell {
		return
	}
	e.fell = true
	w.falls = append(w.falls, Fall{Time: at, Path: e.p, How: how})
}

// report calls Fell for the falls noted so far, without w.mu: Fell may
// take the caller's locks, which a caller of Unwatch may hold.
func (w *Watch) report() {
	w.mu.Lock()
	fs := w.falls
	w.falls = nil
	w.mu.Unlock()
	if w.cfg.Fell == nil {
		return
	}
	for _, f := range fs {
		w.cfg.Fell(f)
	}
}

// recheck compares every path not reported yet with what it was at
// start. w.mu is held.
func (w *Watch) recheck(at time.Time) {
	for _, names := range w.names {
		for _, e := range names {
			if e.fell {
				continue
			}
			id, err := identify(e.p.Path)
			switch {
			case errors.Is(err, unix.ENOENT) && e.p.Hides:
				e.gone = true // nothing there to read
			case err != nil || !id.same(e.id):
				// Another file, or one that cannot be looked at: the
				// agent owns the directories of its workspace and can
				// make one unsearchable by the supervisor (the same
				// uid) while this recheck runs, after an overflow it
				// caused; taking that for "gone" would hide a real
				// replacement, so it is reported.
				w.fall(e, "replaced", at)
			}
		}
	}
}

// ident is what tells a file from another at the same path: the device
// and inode number, and the birth time where the filesystem keeps one (a
// file deleted and made again often gets the freed inode number back:
// ext4 takes the first free one).
type ident struct {
	dev, ino uint64
	btime    unix.StatxTimestamp
	hasBtime bool
}

// identify looks at path without following a final symlink.
func identify(path string) (ident, error) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_DONT_SYNC,
		unix.STATX_INO|unix.STATX_BTIME, &st); err != nil {
		return ident{}, fmt.Errorf("statx %s: %w", path, err)
	}
	return ident{
		dev:      unix.Mkdev(st.Dev_major, st.Dev_minor),
		ino:      st.Ino,
		btime:    st.Btime,
		hasBtime: st.Mask&unix.STATX_BTIME != 0,
	}, nil
}

// same: a and b are one file (as far as they tell).
func (a ident) same(b ident) bool {
	if a.dev != b.dev || a.ino != b.ino {
		return false
	}
	return !a.hasBtime || !b.hasBtime || a.btime == b.btime
}

func (w *Watch) loop(f *os.File) {
	defer close(w.done)
	buf := make([]byte, 16<<10)
	for {
		n, err := f.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, os.ErrClosed) {
				return
			}
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
				continue
			}
			return
		}
		w.events(buf[:n])
		w.report()
	}
}

// events handles one read's worth of inotify events.
func (w *Watch) events(b []byte) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.file == nil {
		return // unwatched: the run has ended
	}
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		size := unix.SizeofInotifyEvent + int(ev.Len)
		if size > len(b) {
			return
		}
		var name string
		if ev.Len > 0 {
			raw := b[unix.SizeofInotifyEvent:size]
			for i, c := range raw {
				if c == 0 {
					raw = raw[:i]
					break
				}
			}
			name = string(raw)
		}
		b = b[size:]
		if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
			w.recheck(now)
			continue
		}
		e := w.names[w.dirs[ev.Wd]][name]
		if e == nil {
			continue
		}
		switch {
		case ev.Mask&(unix.IN_DELETE|unix.IN_MOVED_FROM) != 0 && e.p.Hides:
			// The mask is gone, but so is what it hid: only a file put
			// there next shows anything (a host socket of a run that
			// ended is not worth a word).
			e.gone = true
		case ev.Mask&unix.IN_DELETE != 0:
			w.fall(e, "deleted", now)
		case ev.Mask&unix.IN_MOVED_FROM != 0:
			w.fall(e, "renamed away", now)
		case ev.Mask&unix.IN_MOVED_TO != 0 && e.gone:
			w.fall(e, "renamed in after its removal", now)
		case ev.Mask&unix.IN_MOVED_TO != 0:
			w.fall(e, "renamed over", now)
		case ev.Mask&unix.IN_CREATE != 0:
			w.fall(e, "created after its removal", now)
		}
	}
}

// Unwatch removes every watch and ends the loop without waiting for it;
// the descriptor stays open until CloseLater's func (closing an inotify
// descriptor with watches left, or right after their removal, waits for
// fsnotify's mark reaper). Safe to call more than once.
func (w *Watch) Unwatch() {
	if w == nil {
		return
	}
	w.mu.Lock()
	f := w.file
	w.file = nil
	if f != nil {
		fd := int(f.Fd())
		for wd := range w.dirs {
			_, _ = unix.InotifyRmWatch(fd, uint32(wd))
		}
		clear(w.dirs)
		w.idle = f
	}
	w.mu.Unlock()
	if f != nil {
		if err := f.SetReadDeadline(time.Unix(1, 0)); err != nil {
			w.mu.Lock()
			w.idle = nil
			w.mu.Unlock()
			f.Close()
		}
	}
}

// Stop is Unwatch and waits for the loop to end.
func (w *Watch) Stop() {
	if w == nil {
		return
	}
	w.Unwatch()
	if w.done != nil {
		<-w.done
	}
}

// CloseLater stops the watch and returns the descriptor's close, for the
// caller to run off its critical path (safe to call more than once).
func (w *Watch) CloseLater() func() {
	if w == nil {
		return func() {}
	}
	w.Stop()
	w.mu.Lock()
	f := w.idle
	w.idle = nil
	w.mu.Unlock()
	if f == nil {
		return func() {}
	}
	var once sync.Once
	return func() { once.Do(func() { f.Close() }) }
}
