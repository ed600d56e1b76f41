package blockio

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A pipe made blocking, set O_NONBLOCK by another holder of its description
// while a write is under way and the reader is slow: everything arrives, in
// order, and the write reports no error. (A bare *os.File fails with EAGAIN
// at the first full pipe: the second row.)
func TestWriteWaitsOutNonBlocking(t *testing.T) {
	for _, tc := range []struct {
		name    string
		wrap    bool
		wantErr bool
	}{
		{"Writer", true, false},
		{"os.File", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p [2]int
			if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
				t.Fatal(err)
			}
			r := os.NewFile(uintptr(p[0]), "r")
			wf := os.NewFile(uintptr(p[1]), "w") // blocking when made: Go will not poll it
			defer r.Close()
			// Another process's copy of the same description sets the flag.
			if err := unix.SetNonblock(p[1], true); err != nil {
				t.Fatal(err)
			}
			var w io.Writer = wf
			if tc.wrap {
				w = NewWriter(wf)
			}
			data := bytes.Repeat([]byte("0123456789abcdef"), 1<<14) // 256 KiB, 4 pipes' worth
			errc := make(chan error, 1)
			go func() {
				n, err := w.Write(data)
				if err == nil && n != len(data) {
					err = io.ErrShortWrite
				}
				wf.Close()
				errc <- err
			}()
			time.Sleep(100 * time.Millisecond) // the pipe fills meanwhile
			got, _ := io.ReadAll(r)
			err := <-errc
			if tc.wantErr {
				if err == nil {
					t.Fatal("the bare file's write did not fail: the test no longer shows the EAGAIN it guards against")
				}
				return
			}
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("write: %v; %d of %d bytes arrived intact: %v", err, len(got), len(data), bytes.Equal(got, data[:len(got)]))
			}
		})
	}
}

// A pipe made blocking and set O_NONBLOCK by another holder of its
// description before anything is written: a read waits for the input as
// a blocking read would. (A bare *os.File fails with EAGAIN: the second
// row.)
func TestReadWaitsOutNonBlocking(t *testing.T) {
	for _, tc := range []struct {
		name    string
		wrap    bool
		wantErr bool
	}{
		{"Reader", true, false},
		{"os.File", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p [2]int
			if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
				t.Fatal(err)
			}
			rf := os.NewFile(uintptr(p[0]), "r") // blocking when made
			w := os.NewFile(uintptr(p[1]), "w")
			defer rf.Close()
			defer w.Close()
			if err := unix.SetNonblock(p[0], true); err != nil {
				t.Fatal(err)
			}
			var r io.Reader = rf
			if tc.wrap {
				r = NewReader(rf)
			}
			go func() {
				time.Sleep(100 * time.Millisecond)
				w.Write([]byte("typed"))
			}()
			buf := make([]byte, 16)
			n, err := r.Read(buf)
			if tc.wantErr {
				if err == nil {
					t.Fatal("the bare file's read did not fail: the test no longer shows the EAGAIN it guards against")
				}
				return
			}
			if err != nil || string(buf[:n]) != "typed" {
				t.Fatalf("read %q, %v", buf[:n], err)
			}
		})
	}
}
