package cgroup

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestReadFileAsOS: readFile returns what os.ReadFile does, small and
// large files, pseudo files included, and the same kind of error.
func TestReadFileAsOS(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("12345 67890\n"), 1000) // past the first buffer
	for name, data := range map[string][]byte{"empty": nil, "small": []byte("max 3\n"), "big": big} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	paths := []string{filepath.Join(dir, "empty"), filepath.Join(dir, "small"), filepath.Join(dir, "big"), "/proc/self/cgroup", "/proc/self/mountinfo"}
	if m, _ := filepath.Glob("/sys/fs/cgroup/*/cgroup.procs"); len(m) > 0 {
		paths = append(paths, m[0])
	}
	for _, p := range paths {
		want, werr := os.ReadFile(p)
		got, err := readFile(p)
		if (werr == nil) != (err == nil) {
			t.Fatalf("%s: error %v, os.ReadFile's %v", p, err, werr)
		}
		if p == "/proc/self/cgroup" || filepath.Dir(p) == dir {
			if !bytes.Equal(got, want) {
				t.Errorf("%s: read %d bytes %q, os.ReadFile %d", p, len(got), got, len(want))
			}
		} else if len(got) == 0 && len(want) > 0 {
			t.Errorf("%s: read nothing, os.ReadFile %d bytes", p, len(want))
		}
	}
	if _, err := readFile(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
	var pe *fs.PathError
	if _, err := readFile(dir); !errors.As(err, &pe) || pe.Path != dir {
		t.Errorf("directory: %v, want a PathError naming it", err)
	}
}
