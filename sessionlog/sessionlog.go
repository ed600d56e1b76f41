package sessionlog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// DefaultLimit is what a log keeps when no limit is given: 4 MiB, in two
// files of at most 2 MiB.
const DefaultLimit = 4 << 20

// minLimit keeps a rotation from happening at every write.
const minLimit = 4 << 10

// Older is the name of the rotated half of the log at path.
func Older(path string) string { return path + ".1" }

// Writer appends to the log at path, rotating to keep at most limit bytes.
type Writer struct {
	mu    sync.Mutex
	path  string
	limit int64
	f     *os.File
	size  int64
}

// Create starts the log at path afresh (0600, never through a symlink),
// removing an earlier rotated half.
func Create(path string) (*os.File, error) {
	if err := os.Remove(Older(path)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove the old log %s: %w", Older(path), err)
	}
	// The user's only (it holds the command's output), and never a
	// symlink planted in its place.
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
}

// NewWriter writes to f, the log at path (from Create), keeping at most
// limit bytes (DefaultLimit when 0).
func NewWriter(f *os.File, path string, limit int64) *Writer {
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = max(limit, minLimit)
	w := &Writer{path: path, limit: limit, f: f}
	if fi, err := f.Stat(); err == nil {
		w.size = fi.Size()
	}
	return w
}

// Write appends p, rotating whenever the current half is full: what is
// kept is always the newest bytes, in order.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	half := w.limit / 2
	if int64(len(p)) > w.limit {
		p = p[int64(len(p))-w.limit:] // the rest would be rotated away
	}
	for len(p) > 0 {
		room := half - w.size
		if room <= 0 {
			if err := w.rotate(); err != nil {
				return 0, err
			}
			room = half
		}
		chunk := p[:min(room, int64(len(p)))]
		m, err := w.f.Write(chunk)
		w.size += int64(m)
		if err != nil {
			return 0, err
		}
		p = p[m:]
	}
	return n, nil
}

// rotate makes the current half the older one and starts a new current
// half. PATH exists throughout (readers never miss it): the current file
// is linked to PATH.1 first, then a new file is renamed over PATH.
func (w *Writer) rotate() error {
	tmpOld, tmpNew := w.path+".1.tmp", w.path+".tmp"
	os.Remove(tmpOld)
	os.Remove(tmpNew)
	if err := os.Link(w.path, tmpOld); err != nil {
		return fmt.Errorf("rotate the log %s: %w", w.path, err)
	}
	if err := os.Rename(tmpOld, Older(w.path)); err != nil {
		return fmt.Errorf("rotate the log %s: %w", w.path, err)
	}
	f, err := os.OpenFile(tmpNew, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("rotate the log %s: %w", w.path, err)
	}
	if err := os.Rename(tmpNew, w.path); err != nil {
		f.Close()
		return fmt.Errorf("rotate the log %s: %w", w.path, err)
	}
	w.f.Close()
	w.f, w.size = f, 0
	return nil
}

// Close closes the current file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f.Close()
}

// Remove removes the log at path and its rotated half (and what a
// rotation cut short left).
func Remove(path string) {
	for _, p := range []string{Older(path), path, path + ".1.tmp", path + ".tmp"} {
		os.Remove(p)
	}
}

// Copy writes the whole log at path (the rotated half first) to dst.
func Copy(dst io.Writer, path string) error {
	_, err := follow(dst, path, nil, 0)
	return err
}

// Follow writes the log at path to dst, then what is added to it, across
// rotations, until alive says the writer is gone (then what came last).
// Two rotations within one poll are caught up from the rotated half;
// more lose the middle.
func Follow(dst io.Writer, path string, alive func() bool) error {
	_, err := follow(dst, path, alive, 100*time.Millisecond)
	return err
}

func follow(dst io.Writer, path string, alive func() bool, poll time.Duration) (int64, error) {
	var total int64
	cp := func(f *os.File) error {
		n, err := io.Copy(dst, f)
		total += n
		return err
	}
	open := func(p string) *os.File {
		f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return nil
		}
		return f
	}
	// The current half first, then the older, then the current is checked
	// to be current still: the older is then the one just before it. A
	// rotation in between is tried again; failing that, the current
	// half alone is read (never two halves out of order).
	var f, old *os.File
	for try := 0; ; try++ {
		f = open(path)
		if f == nil {
			return total, fmt.Errorf("open the log %s: %w", path, os.ErrNotExist)
		}
		old = open(Older(path))
		if old == nil || sameFile(f, path) && !sameInode(old, f) {
			break
		}
		old.Close()
		old = nil
		if try == 20 {
			break
		}
		f.Close()
		time.Sleep(time.Millisecond) // mid-rotation
	}
	if old != nil {
		err := cp(old)
		old.Close()
		if err != nil {
			f.Close()
			return total, err
		}
	}
	defer func() { f.Close() }()
	for {
		if err := cp(f); err != nil {
			return total, err
		}
		if alive == nil {
			return total, nil
		}
		if !sameFile(f, path) {
			// Rotated: what was written to f since is read to its end;
			// a half rotated in between (f is gone) is read whole.
			if err := cp(f); err != nil {
				return total, err
			}
			if old := open(Older(path)); old != nil {
				if !sameInode(old, f) {
					err := cp(old)
					old.Close()
					if err != nil {
						return total, err
					}
				} else {
					old.Close()
				}
			}
			if nf := open(path); nf != nil {
				f.Close()
				f = nf
				continue
			}
		}
		if !alive() {
			return total, cp(f)
		}
		time.Sleep(poll)
	}
}

// sameFile tells whether f is still the file at path.
func sameFile(f *os.File, path string) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	fs, err := f.Stat()
	return err == nil && os.SameFile(fi, fs)
}

func sameInode(a, b *os.File) bool {
	x, err1 := a.Stat()
	y, err2 := b.Stat()
	return err1 == nil && err2 == nil && os.SameFile(x, y)
}
