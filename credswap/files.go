package credswap

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"
	"time"
)

// maxSize bounds what is read of a credential file (they are a few KiB).
const maxSize = 1 << 20

// Snap is a file as the run's start found it.
type Snap struct {
	File
	Data   []byte // nil: absent
	Mode   fs.FileMode
	UID    int
	GID    int
	Odd    bool // not a regular file (a symlink, a directory): not checked
	Target string
}

// Take reads the credential files under home before the sandbox runs.
func Take(home string) []Snap {
	root, err := os.OpenRoot(home)
	if err != nil {
		return nil
	}
	defer root.Close()
	var out []Snap
	for _, f := range Files {
		s := Snap{File: f, Target: path.Join(home, f.Path)}
		fi, err := root.Lstat(f.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// Absent: a file created in the run is looked at.
			if _, derr := root.Lstat(path.Dir(f.Path)); derr != nil {
				continue // no such agent here
			}
		case err != nil || !fi.Mode().IsRegular() || fi.Size() > maxSize:
			continue // the user's own arrangement (a symlink): left alone
		default:
			data, err := readRoot(root, f.Path)
			if err != nil {
				continue
			}
			s.Data, s.Mode = data, fi.Mode().Perm()
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				s.UID, s.GID = int(st.Uid), int(st.Gid)
			}
		}
		out = append(out, s)
	}
	return out
}

func readRoot(root *os.Root, name string) ([]byte, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: not a regular file", name)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSize+1))
	if err == nil && len(b) > maxSize {
		err = fmt.Errorf("read %s: over %d bytes", name, maxSize)
	}
	if err == nil && b == nil {
		b = []byte{}
	}
	return b, err
}

// Change is what the end found and did for one file.
type Change struct {
	Snap
	Decision
	Err error // the start's version could not be put back
}

// Settle looks at each snapshotted file after the sandbox has ended and puts
// back what changed without a due refresh. It returns the files that changed.
func Settle(home string, snaps []Snap, endAt time.Time) []Change {
	return settle(home, snaps, endAt, true)
}

// settle is Settle; write false only looks (what changed, nothing put back).
func settle(home string, snaps []Snap, endAt time.Time, write bool) []Change {
	root, err := os.OpenRoot(home)
	if err != nil {
		var out []Change
		for _, s := range snaps {
			out = append(out, Change{Snap: s, Err: fmt.Errorf("open %s: %w", home, err)})
		}
		return out
	}
	defer root.Close()
	var out []Change
	for _, s := range snaps {
		var end []byte
		fi, lerr := root.Lstat(s.Path)
		switch {
		case errors.Is(lerr, fs.ErrNotExist):
		case lerr != nil:
			out = append(out, Change{Snap: s, Err: lerr})
			continue
		case !fi.Mode().IsRegular() || fi.Size() > maxSize:
			// Why: a symlink or a FIFO in its place is read by the host's
			// CLI as the agent chose: the start's bytes come back whole.
			end = []byte("\x00odd")
		default:
			if end, err = readRoot(root, s.Path); err != nil {
				end = []byte("\x00odd")
			}
		}
		d := Decide(s.Kind, s.Data, end, endAt)
		if d.Kept == nil && d.Undone == nil {
			continue
		}
		c := Change{Snap: s, Decision: d}
		switch {
		case d.Restore != nil && write:
			c.Err = writeBack(root, s, d.Restore)
		}
		out = append(out, c)
	}
	return out
}

// writeBack replaces the file by a new one (same mode and owner) renamed
// into place: the host's CLI never reads a half-written file, and a symlink
// the agent put there is replaced, not followed.
func writeBack(root *os.Root, s Snap, data []byte) error {
	tmp := path.Join(path.Dir(s.Path), fmt.Sprintf(".%s.jail-%d", path.Base(s.Path), os.Getpid()))
	_ = root.Remove(tmp)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, s.Mode)
	if err != nil {
		return fmt.Errorf("put back %s: %w", s.Target, err)
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Chmod(s.Mode) // the umask took bits off
	}
	if werr == nil && os.Geteuid() == 0 {
		werr = f.Chown(s.UID, s.GID)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Rename(tmp, s.Path)
	}
	if werr != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("put back %s: %w", s.Target, werr)
	}
	return nil
}
