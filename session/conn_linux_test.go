package session

import (
	"net"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func pair(t testing.TB) (*Conn, *Conn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(fd int) *Conn {
		f := os.NewFile(uintptr(fd), "sock")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		return NewConn(c.(*net.UnixConn))
	}
	a, b := mk(fds[0]), mk(fds[1])
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// A line and its fds arrive together; the next line comes without them.
func TestConnLinesAndFDs(t *testing.T) {
	a, b := pair(t)
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	if err := a.Send(Request{Op: OpExec, Argv: [][]byte{[]byte("ls"), {0xff, 0}}}, r, w); err != nil {
		t.Fatal(err)
	}
	a.Send(Request{Op: OpSignal, Signal: 2})
	var q Request
	fds, err := b.Recv(&q)
	if err != nil || q.Op != OpExec || len(fds) != 2 || string(q.Argv[1]) != "\xff\x00" {
		t.Fatalf("first: %+v %d fds %v", q, len(fds), err)
	}
	for _, f := range fds {
		if fl, _ := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0); fl&unix.FD_CLOEXEC == 0 {
			t.Error("a received fd is not close-on-exec")
		}
		f.Close()
	}
	fds, err = b.Recv(&q)
	if err != nil || q.Op != OpSignal || q.Signal != 2 || len(fds) != 0 {
		t.Fatalf("second: %+v %d fds %v", q, len(fds), err)
	}
	a.Close()
	if _, err := b.Recv(&q); err == nil {
		t.Fatal("Recv after the peer closed: no error")
	}
}

// More fds than a request may carry are refused, not half taken.
func TestConnTooManyFDs(t *testing.T) {
	a, b := pair(t)
	var files []*os.File
	for i := 0; i < maxFDs+2; i++ {
		f, _ := os.Open(os.DevNull)
		defer f.Close()
		files = append(files, f)
	}
	a.Send(Request{Op: OpExec}, files...)
	var q Request
	if _, err := b.Recv(&q); err == nil || !strings.Contains(err.Error(), "file descriptors") {
		t.Fatalf("%d fds: %v", len(files), err)
	}
}

// FuzzRecv: whatever a peer writes, Recv returns or fails; it never
// panics and never holds more than one line's bound.
func FuzzRecv(f *testing.F) {
	f.Add([]byte("{\"op\":\"exec\"}\n"))
	f.Add([]byte("{\"op\":\"exec\",\"argv\":[\"AA==\"]}\n{\"op\":\"signal\"}\n"))
	f.Add([]byte("\n\n{"))
	f.Add([]byte("{\"argv\":[1,2]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, b := pair(t)
		// The writer is done before pair's cleanup closes a again: two
		// Closes at once were a data race of the test's own (-race).
		done := make(chan struct{})
		defer func() { <-done }()
		go func() {
			defer close(done)
			a.c.Write(data)
			a.Close()
		}()
		for i := 0; i < 100; i++ {
			var q Request
			fds, err := b.Recv(&q)
			for _, f := range fds {
				f.Close()
			}
			if err != nil {
				return
			}
		}
	})
}
