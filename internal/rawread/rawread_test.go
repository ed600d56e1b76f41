package rawread

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// File reads what os.ReadFile reads: a /proc file longer than its first
// buffer, an empty file, a file of exactly the buffer's size; and fails as
// it does, with the operation and the path.
func TestFileSameAsReadFile(t *testing.T) {
	dir := t.TempDir()
	exact := filepath.Join(dir, "exact")
	os.WriteFile(exact, bytes.Repeat([]byte("x"), 64), 0o644)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	for _, c := range []struct {
		path string
		size int
	}{{"/proc/self/mountinfo", 1}, {"/proc/self/status", 64}, {"/proc/self/stat", 512}, {exact, 64}, {empty, 8}} {
		got, err := File(c.path, c.size)
		want, werr := os.ReadFile(c.path)
		if err != nil || werr != nil {
			t.Fatalf("%s: %v / os.ReadFile %v", c.path, err, werr)
		}
		// /proc/self is each reader's own: compare what does not change.
		if c.path == "/proc/self/stat" || c.path == "/proc/self/status" {
			if len(got) == 0 || bytes.IndexByte(got, '\n') < 0 {
				t.Errorf("%s: %q", c.path, got)
			}
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s (first buffer %d): %d bytes, os.ReadFile %d", c.path, c.size, len(got), len(want))
		}
	}
	_, err := File(filepath.Join(dir, "missing"), 8)
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Op != "open" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want an open *fs.PathError for ErrNotExist", err)
	}
	_, err = File(dir, 8)
	if !errors.As(err, &pe) || pe.Op != "read" || !errors.Is(err, syscall.EISDIR) {
		t.Errorf("a directory: %v, want a read *fs.PathError for EISDIR", err)
	}
}
