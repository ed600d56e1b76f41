package agentcfg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// This file: the inotify watcher. Small and self-contained on purpose (the
// git sentinel has one too; they are to be folded into one).
//
// A guarded file's directory is watched (the file itself when it is a bind
// mount in the sandbox). When that directory does not exist yet, its
// nearest existing ancestor under the writable root is watched, and the
// watch moves down as the directories appear.

const (
	dirEvents = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_DELETE |
		unix.IN_CLOSE_WRITE | unix.IN_MODIFY | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
		unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW
	fileEvents = unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_DONT_FOLLOW
)

type watchEntry struct {
	path    string
	targets []*gtarget
}

type watcher struct {
	g    *Guard
	f    *os.File
	fd   int
	mu   sync.Mutex // wds, stopped
	wds  map[int]*watchEntry
	done chan struct{}
	// stopped: stop removed every watch; nothing read is handled and no
	// watch is added from then on.
	stopped bool
}

func newWatcher(g *Guard) (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	// Non-blocking: the runtime poller waits for it, and Close wakes the
	// reader.
	w := &watcher{g: g, f: os.NewFile(uintptr(fd), "inotify"), fd: fd, wds: map[int]*watchEntry{}, done: make(chan struct{})}
	for _, t := range g.targets {
		w.arm(t)
	}
	// The read buffer is made here, on the heap: a 64 KiB slice local to
	// the loop would be on its goroutine's stack, zeroed there (16 page
	// faults, and a stack grown and copied to 128 KiB) at every start;
	// fresh heap pages are touched only as far as a read fills them.
	go w.loop(make([]byte, inotifyBuf))
	return w, nil
}

// stop removes every watch and ends the loop, and waits for it. The
// descriptor stays open until release: the kernel frees the removed
// watches' marks in its reaper (1 jiffy, then an SRCU grace period) while
// the caller goes on, instead of in a close that would wait for it
// (closing an instance with watches left, 5-19 ms when another one was
// closed just before).
func (w *watcher) stop() {
	w.unwatch()
	<-w.done
}

// unwatch is stop without the wait for the loop (Guard.Unwatch): every
// watch removed and the loop woken; safe to call more than once.
func (w *watcher) unwatch() {
	w.mu.Lock()
	if !w.stopped {
		w.stopped = true
		for wd := range w.wds {
			// EINVAL for a watch the kernel dropped already.
			_, _ = unix.InotifyRmWatch(w.fd, uint32(wd))
		}
		for _, e := range w.wds {
			for _, t := range e.targets {
				t.wd = -1
			}
		}
		clear(w.wds)
	}
	w.mu.Unlock()
	// Wakes a Read waiting in the poller, without closing; a file the
	// poller does not hold is woken only by its close.
	if err := w.f.SetReadDeadline(time.Unix(1, 0)); err != nil {
		w.release()
	}
}

// release closes the descriptor (after stop: it holds no watch).
func (w *watcher) release() {
	w.f.Close()
}

// arm (re)places t's watch on its directory, or on the nearest ancestor
// that exists. A directory on the way made between the look and the watch
// (mkdir -p new/.claude: .claude appears after new was seen, before new's
// watch) would send no event to any watch: after an ancestor's watch is in
// place, arm looks again and goes deeper while the way goes on (a
// TestGuardWatch flake under load: the file in new/.claude never checked).
func (w *watcher) arm(t *gtarget) {
	for range 64 {
		if !w.armOnce(t) {
			return
		}
	}
}

// armOnce places t's watch once and reports whether it is on an ancestor
// whose next directory toward t now exists (arm again, deeper).
func (w *watcher) armOnce(t *gtarget) (deeper bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return false // checked at exit regardless
	}
	path, mask := filepath.Dir(t.Path), uint32(dirEvents)
	if t.InPlace {
		path, mask = t.Path, fileEvents
	} else {
		for path != t.Root && len(path) > len(t.Root) {
			if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
				break
			}
			path = filepath.Dir(path)
		}
	}
	wd, err := unix.InotifyAddWatch(w.fd, path, mask)
	if err != nil {
		return false // checked at exit regardless
	}
	if t.wd != wd {
		w.dropLocked(t)
		e := w.wds[wd]
		if e == nil {
			e = &watchEntry{path: path}
			w.wds[wd] = e
		}
		e.targets = append(e.targets, t)
		t.wd = wd
	}
	if t.InPlace || path == filepath.Dir(t.Path) {
		return false
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(t.Path, path+"/"), "/")
	fi, err := os.Lstat(filepath.Join(path, first))
	return err == nil && fi.IsDir() && filepath.Join(path, first) != t.Path
}

// dropLocked removes t from its current watch.
func (w *watcher) dropLocked(t *gtarget) {
	e := w.wds[t.wd]
	if e == nil {
		return
	}
	for i, x := range e.targets {
		if x == t {
			e.targets = append(e.targets[:i], e.targets[i+1:]...)
			break
		}
	}
	if len(e.targets) == 0 {
		unix.InotifyRmWatch(w.fd, uint32(t.wd))
		delete(w.wds, t.wd)
	}
	t.wd = -1
}

// inotifyBuf is the size of the watcher's read buffer.
const inotifyBuf = 64 << 10

func (w *watcher) loop(buf []byte) {
	defer close(w.done)
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrClosed) || n == 0 {
				return
			}
			continue
		}
		w.mu.Lock()
		stopped := w.stopped
		w.mu.Unlock()
		if stopped {
			return // the IN_IGNORED of stop's removals, or what came before: Close's checks look
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := ""
			if ev.Len > 0 {
				end := off + unix.SizeofInotifyEvent + int(ev.Len)
				if end > n {
					break
				}
				name = strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:end]), "\x00")
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
			w.handle(int(ev.Wd), ev.Mask, name)
		}
	}
}

func (w *watcher) handle(wd int, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		// Events were lost: look at everything.
		for _, t := range w.g.targets {
			w.arm(t)
			w.g.check(t)
		}
		return
	}
	w.mu.Lock()
	e := w.wds[wd]
	var ts []*gtarget
	if e != nil {
		ts = append(ts, e.targets...)
	}
	if mask&unix.IN_IGNORED != 0 {
		delete(w.wds, wd)
		for _, t := range ts {
			t.wd = -1
		}
	}
	w.mu.Unlock()
	for _, t := range ts {
		gone := mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0
		switch {
		case t.InPlace:
			w.fileEvent(t, mask)
		case gone:
			// The watched directory went away: watch higher, look now.
			w.arm(t)
			w.g.check(t)
		case e.path == filepath.Dir(t.Path):
			if name == filepath.Base(t.Path) {
				w.fileEvent(t, mask)
			}
		default:
			// An ancestor: a directory on the way appeared or went.
			rel := strings.TrimPrefix(t.Path, e.path+"/")
			if first, _, _ := strings.Cut(rel, "/"); name == first {
				w.arm(t)
				w.g.check(t)
			}
		}
	}
}

// fileEvent checks t: at once after a close or a rename (the writer is
// done), a little later after a write (the writer may still be writing; a
// writer that never closes is checked Late after its first write).
func (w *watcher) fileEvent(t *gtarget, mask uint32) {
	if mask&(unix.IN_MODIFY|unix.IN_CREATE) == 0 || mask&unix.IN_CLOSE_WRITE != 0 {
		w.g.mu.Lock()
		if t.timer != nil {
			t.timer.Stop()
			t.timer = nil
		}
		w.g.mu.Unlock()
		w.g.check(t)
		return
	}
	w.g.mu.Lock()
	defer w.g.mu.Unlock()
	now := time.Now()
	if t.timer == nil {
		t.first = now
		t.timer = time.AfterFunc(Quiet, func() { w.early(t) })
		return
	}
	d := Quiet
	if late := t.first.Add(Late).Sub(now); late < d {
		d = late
	}
	if d < 0 {
		d = 0
	}
	t.timer.Reset(d)
}

func (w *watcher) early(t *gtarget) {
	w.g.mu.Lock()
	t.timer = nil
	w.g.mu.Unlock()
	w.g.check(t)
}
