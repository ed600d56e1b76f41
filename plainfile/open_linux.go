package plainfile

import (
	"errors"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// openRegular opens the file at path for reading when it is a regular
// file, without opening anything else: errNotRegular for another kind,
// ELOOP for a final symlink. Why O_PATH first: a plain open resolves the
// path again, and a directory on the way that the agent swapped for a
// link (between a caller's look and this open, or before it) makes it
// open whatever lies at the same name there: a FIFO, whose blocked writer
// is then released, or a device, whose driver's open runs (jail may run
// as root). An O_PATH descriptor opens nothing (no driver's open, no
// FIFO reader); the kind is read from it, and only a regular file is
// opened for reading, through the descriptor itself (/proc/self/fd/N
// reopens the same inode, with the permission check of a real open).
func openRegular(path string) (*os.File, error) {
	pfd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFLNK: // O_NOFOLLOW with O_PATH opens the link itself
		return nil, &os.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
	default:
		return nil, &os.PathError{Op: "open", Path: path, Err: errNotRegular}
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(pfd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		// No /proc (a chroot without it): the plain open, whose
		// descriptor the caller checks again; it cannot block.
		return openPlain(path)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
