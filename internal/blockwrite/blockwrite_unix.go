//go:build unix

package blockwrite

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// Writer writes to its file as a blocking write would (doc.go).
type Writer struct {
	f  *os.File
	fd int
}

// New returns the Writer for f. f's descriptor is taken once, here (Fd on
// a file Go made non-blocking itself would make it blocking again; os's
// standard files are never such).
func New(f *os.File) *Writer { return &Writer{f: f, fd: int(f.Fd())} }

// File is the file the Writer writes to.
func (w *Writer) File() *os.File { return w.f }

// Write writes p whole, or fails as the file's Write does for any reason
// but EAGAIN, on which it waits until the file can take more.
func (w *Writer) Write(p []byte) (int, error) {
	n := 0
	for {
		m, err := w.f.Write(p[n:])
		n += m
		if err == nil || !errors.Is(err, unix.EAGAIN) {
			return n, err
		}
		if werr := waitWritable(w.fd); werr != nil {
			return n, err
		}
	}
}

// WriteString is Write of s.
func (w *Writer) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// waitWritable waits until fd can take a write (or is hung up, closed or
// failing: the next write says how).
func waitWritable(fd int) error {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
	for {
		_, err := unix.Poll(fds, -1)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
