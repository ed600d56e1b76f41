//go:build unix

package blockio

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

// NewWriter returns the Writer for f. f's descriptor is taken once, here
// (Fd on a file Go made non-blocking itself would make it blocking again;
// os's standard files are never such).
func NewWriter(f *os.File) *Writer { return &Writer{f: f, fd: int(f.Fd())} }

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
		if werr := wait(w.fd, unix.POLLOUT); werr != nil {
			return n, err
		}
	}
}

// WriteString is Write of s.
func (w *Writer) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// Reader reads its file as a blocking read would (doc.go).
type Reader struct {
	f  *os.File
	fd int
}

// NewReader returns the Reader for f (its descriptor taken once, as
// NewWriter does).
func NewReader(f *os.File) *Reader { return &Reader{f: f, fd: int(f.Fd())} }

// Read reads into p as the file's Read does, but where that fails with
// EAGAIN it waits for input and reads again.
func (r *Reader) Read(p []byte) (int, error) {
	for {
		n, err := r.f.Read(p)
		if n > 0 || err == nil || !errors.Is(err, unix.EAGAIN) {
			return n, err
		}
		if werr := wait(r.fd, unix.POLLIN); werr != nil {
			return n, err
		}
	}
}

// wait waits until fd is ready for events (or is hung up, closed or
// failing: the next call says how).
func wait(fd int, events int16) error {
	fds := []unix.PollFd{{Fd: int32(fd), Events: events}}
	for {
		_, err := unix.Poll(fds, -1)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
