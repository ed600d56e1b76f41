// Package rawread reads a small kernel file (/proc, cgroupfs) whole in plain
// system calls: open, read until EOF, close. os.ReadFile offers every
// descriptor to Go's poller, which /proc refuses (EPERM) and cgroupfs files
// accept (they support poll), and pays two fcntl pairs, an epoll_ctl (and its
// removal) and an fstat on top: 30-80 us a file on this VM, on the way to
// init's start for the supervisor's own stat, its cgroup files and
// mountinfo. Errors are *fs.PathError with the operation and the path, as
// os.ReadFile's.
package rawread

import (
	"io/fs"
	"syscall"
)

// File reads path to its end. size is the first buffer's size: enough for
// the usual file saves the buffer's growth (the kernel answers each read of
// a seq file with at most a page; the loop asks again until a read of 0).
func File(path string, size int) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	b := make([]byte, 0, max(size, 64))
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // more room
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n <= 0 {
			return b, nil // end of file
		}
		b = b[:len(b)+n]
	}
}
