package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// maxProjectFile bounds a project file's size: a few lines of TOML; the
// bound keeps a huge file the agent wrote from being read into memory.
const maxProjectFile = 1 << 20

// errNotPlain is a project file that is no regular file.
var errNotPlain = errors.New("not a regular file (a symlink, a FIFO, a device?): jail reads a project file only as a plain file")

// readProjectFile reads a project file (.jail.toml), which lies in a
// workspace the agent writes. Why not os.ReadFile: the agent can make it a
// FIFO (the open blocks until a writer comes: every later start in the
// project, jail trust and jail config show hung), a link to /dev/zero
// (read forever into memory) or a huge sparse file (read whole into
// memory: jail died out of memory). The open neither blocks (O_NONBLOCK)
// nor follows a final symlink (O_NOFOLLOW: no device is opened, whose
// open may itself act); the descriptor must be a regular file of at most
// maxProjectFile bytes, and no more is read. A dangling symlink is no
// file, as it was: the caller's fs.ErrNotExist (CheckAbsent still applies).
func readProjectFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, syscall.ELOOP) {
		if _, serr := os.Stat(path); serr != nil {
			return nil, serr // dangling: no such file
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: errNotPlain}
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
		return nil, &os.PathError{Op: "open", Path: path, Err: errNotPlain}
	}
	if fi.Size() > maxProjectFile {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("%d bytes, more than a project file holds (at most %d)", fi.Size(), maxProjectFile)}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxProjectFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxProjectFile {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("grew past %d bytes while read", maxProjectFile)}
	}
	return data, nil
}
