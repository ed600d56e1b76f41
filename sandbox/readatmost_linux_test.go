package sandbox

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// readAtMost reads an agent configuration file an earlier run could have
// replaced: a FIFO or a link to a device is refused at once (a FIFO hung
// the start), a link to a regular file (dotfiles) is followed, a file over
// the bound is refused. Seen failing with os.ReadFile in its place: the
// FIFO case did not return within 5 s.
func TestReadAtMostNotPlain(t *testing.T) {
	d := t.TempDir()
	fifo := filepath.Join(d, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(d, "real.json"), []byte(`{"a":1}`), 0o644)
	os.Symlink("real.json", filepath.Join(d, "link.json"))
	os.Symlink("/dev/zero", filepath.Join(d, "zero.json"))
	os.WriteFile(filepath.Join(d, "big.json"), make([]byte, 65), 0o644)
	for name, ok := range map[string]bool{"fifo.json": false, "zero.json": false, "big.json": false, "link.json": true, "real.json": true} {
		done := make(chan error, 1)
		go func() { _, err := readAtMost(filepath.Join(d, name), 64); done <- err }()
		select {
		case err := <-done:
			if (err == nil) != ok {
				t.Errorf("%s: err %v, want ok %v", name, err, ok)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: readAtMost still reading after 5 s", name)
		}
	}
}
