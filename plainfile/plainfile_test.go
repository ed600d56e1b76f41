package plainfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

var errTest = errors.New("not plain")

// Only jail's own descriptors by name count as a pipe the user handed:
// nothing a path in a tree could spell otherwise.
func TestFDPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/dev/fd/63": true, "/proc/self/fd/3": true, "/dev/stdin": true,
		"/dev/fd/": false, "/dev/fd/x": false, "/dev/fd/-1": false, "/dev/fd/3/../4": false,
		"/proc/1/fd/3": false, "/ws/dev/fd/3": false, "dev/fd/3": false, "/dev/fd/99999999999": false,
	} {
		if got := FDPath(p); got != want {
			t.Errorf("FDPath(%q) = %v, want %v", p, got, want)
		}
	}
}

// Read refuses a final symlink (the project file's rule); ReadNamed
// follows it to a regular file, not to a device; both refuse a directory
// and say a dangling link is no file.
func TestReadLinks(t *testing.T) {
	d := t.TempDir()
	real := filepath.Join(d, "real")
	os.WriteFile(real, []byte("x"), 0o644)
	for name, target := range map[string]string{"link": real, "dev": "/dev/zero", "dangling": filepath.Join(d, "none"), "dir": d} {
		if err := os.Symlink(target, filepath.Join(d, name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Read(filepath.Join(d, "link"), 10, errTest); !errors.Is(err, errTest) {
		t.Errorf("Read link: %v", err)
	}
	if b, err := ReadNamed(filepath.Join(d, "link"), 10, errTest); err != nil || string(b) != "x" {
		t.Errorf("ReadNamed link: %q %v", b, err)
	}
	for _, n := range []string{"dev", "dir"} {
		if _, err := ReadNamed(filepath.Join(d, n), 10, errTest); !errors.Is(err, errTest) {
			t.Errorf("ReadNamed %s: %v", n, err)
		}
	}
	for _, read := range []func(string, int64, error) ([]byte, error){Read, ReadNamed} {
		if _, err := read(filepath.Join(d, "dangling"), 10, errTest); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("dangling: %v", err)
		}
	}
	if _, err := ReadNamed(real, 0, errTest); err == nil {
		t.Error("a file past the bound read")
	}
}
