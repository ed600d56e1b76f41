// Package plainfile reads a small file that may lie in a tree the agent
// writes (a project file, a settings file, a tool's .npmrc in the
// workspace) without letting the agent hang or exhaust jail: os.ReadFile
// blocked for ever on a FIFO the agent put there (every later start hung)
// and read a link to /dev/zero or a huge sparse file into memory until
// jail died. Only a regular file is read, opened without blocking and
// never through a final symlink the agent could retarget, and at most a
// bound of bytes.
package plainfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Read reads the regular file at path, whose last component must not be a
// symlink, refusing anything else with notPlain and more than max bytes.
// Nothing but a regular file is opened (openRegular: on Linux the kind is
// read from an O_PATH descriptor first, so no FIFO or device is opened,
// whose open may itself act, even through a directory on the way swapped
// for a link); elsewhere the open neither blocks (O_NONBLOCK) nor follows a
// final symlink. The descriptor must be a regular file of at most max
// bytes, and no more is read. A dangling symlink is no file: fs.ErrNotExist.
func Read(path string, max int64, notPlain error) ([]byte, error) {
	return read(path, path, max, notPlain)
}

// read reads the regular file at open (its last component no symlink),
// naming it path in errors.
func read(path, open string, max int64, notPlain error) ([]byte, error) {
	f, err := openRegular(open)
	if errors.Is(err, errNotRegular) {
		return nil, &os.PathError{Op: "open", Path: path, Err: notPlain}
	}
	if errors.Is(err, syscall.ELOOP) {
		if _, serr := os.Stat(open); serr != nil {
			return nil, serr // dangling: no such file
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: notPlain}
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "open", Path: path, Err: notPlain}
	}
	if fi.Size() > max {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("%d bytes, more than such a file holds (at most %d)", fi.Size(), max)}
	}
	return readBounded(path, f, max)
}

// errNotRegular: openRegular found another kind of file than a regular one.
var errNotRegular = errors.New("not a regular file")

// openPlain opens path for reading without blocking (a FIFO) and without
// following a final symlink. O_NOCTTY: should a directory on the way be a
// link to /dev, a terminal opened here does not become jail's controlling
// terminal. The caller checks the descriptor is a regular file.
func openPlain(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_NOCTTY, 0)
}

// readBounded reads at most max bytes from r and refuses more.
func readBounded(path string, r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(data)) > max {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("more than %d bytes, more than such a file holds", max)}
	}
	return data, nil
}

// ReadNamed reads a file a user names (a settings file, --config, a tool's
// configuration): unlike Read, a symlink is followed (a dotfiles manager
// links ~/.claude/settings.json), but only to a regular file, looked at
// (Lstat) before it is opened so that no device is opened, then read as
// Read reads. A pipe is read only when the path names one of jail's own
// descriptors (/dev/fd/N, /proc/self/fd/N, /dev/stdin: what a shell's
// `--settings <(cmd)` passes): a pipe the user made, never a FIFO found
// on disk.
func ReadNamed(path string, max int64, notPlain error) ([]byte, error) {
	if FDPath(path) {
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOCTTY, 0)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return nil, err
		}
		// A regular file or a pipe: a terminal would wait for the user's
		// typing, a device could be read for ever.
		if m := fi.Mode(); !m.IsRegular() && m&os.ModeNamedPipe == 0 {
			return nil, &os.PathError{Op: "open", Path: path, Err: errors.New("neither a regular file nor a pipe: jail reads it only from one of these")}
		}
		return readBounded(path, f, max)
	}
	if path == "" { // as os.ReadFile("") says
		return nil, &os.PathError{Op: "open", Path: path, Err: syscall.ENOENT}
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Lstat(real)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "open", Path: path, Err: notPlain}
	}
	// Swapped since the Lstat (a FIFO or a link the agent put there)? The
	// open neither blocks nor follows it, and the descriptor is checked.
	return read(path, real, max, notPlain)
}

// FDPath reports whether path names one of jail's own open descriptors.
func FDPath(path string) bool {
	if path == "/dev/stdin" {
		return true
	}
	for _, pre := range []string{"/dev/fd/", "/proc/self/fd/"} {
		if n, ok := strings.CutPrefix(path, pre); ok {
			if _, err := strconv.ParseUint(n, 10, 31); err == nil {
				return true
			}
		}
	}
	return false
}
