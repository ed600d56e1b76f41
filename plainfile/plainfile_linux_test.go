package plainfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A directory on the way to the file swapped for a link to one holding a
// FIFO (or a device) of the same name: the open used to follow the link
// and open what was there (O_NONBLOCK kept it from hanging, the descriptor
// check refused it), but an open may itself act (a FIFO's writer is
// released, a device's driver runs its open). Nothing but a regular file
// is opened for reading: the FIFO's blocked writer is never released.
func TestReadOpensNoFIFO(t *testing.T) {
	d := t.TempDir()
	other := filepath.Join(d, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(other, "settings.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(d, "sub")); err != nil {
		t.Fatal(err)
	}
	opened := make(chan struct{})
	go func() { // a writer waits until a reader opens the FIFO
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		close(opened)
	}()
	time.Sleep(50 * time.Millisecond) // the writer is in its open
	for name, read := range map[string]func(string, int64, error) ([]byte, error){"Read": Read, "ReadNamed": ReadNamed} {
		if _, err := read(filepath.Join(d, "sub", "settings.json"), 10, errTest); !errors.Is(err, errTest) {
			t.Errorf("%s of a FIFO through a linked directory: %v, want the not-plain error", name, err)
		}
	}
	select {
	case <-opened:
		t.Errorf("the FIFO was opened for reading (its writer was released): a device there would have been opened too")
	case <-time.After(500 * time.Millisecond):
		// Release the writer.
		if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			<-opened
			f.Close()
		}
	}
}
