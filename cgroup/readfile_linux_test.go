package cgroup

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadFileAsOS: readSmall (package rawread) returns what os.ReadFile does, small and
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
		got, err := readSmall(p)
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
	if _, err := readSmall(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
	var pe *fs.PathError
	if _, err := readSmall(dir); !errors.As(err, &pe) || pe.Path != dir {
		t.Errorf("directory: %v, want a PathError naming it", err)
	}
}

// TestOnlyIn: a group answers for pid alone when its cgroup.procs lists
// nothing else in any of its directories and none has a group below it;
// when it cannot read, it does not answer.
func TestOnlyIn(t *testing.T) {
	mk := func(procs string, sub bool) string {
		d := t.TempDir()
		if procs != "-" {
			if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(procs), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		os.WriteFile(filepath.Join(d, "pids.max"), []byte("max\n"), 0o644)
		if sub {
			os.Mkdir(filepath.Join(d, "child"), 0o755)
		}
		return d
	}
	for _, tc := range []struct {
		name string
		dirs []string
		want bool
	}{
		{"init alone", []string{mk("42\n", false)}, true},
		{"empty (init left)", []string{mk("", false)}, true},
		{"init alone in both hierarchies", []string{mk("42\n", false), mk("42\n", false)}, true},
		{"another process", []string{mk("42\n43\n", false)}, false},
		{"another process in the second hierarchy", []string{mk("42\n", false), mk("7\n", false)}, false},
		{"a group below", []string{mk("42\n", true)}, false},
		{"unreadable", []string{mk("-", false)}, false},
	} {
		if got := onlyIn(tc.dirs, 42, nil); got != tc.want {
			t.Errorf("%s: onlyIn = %v, want %v", tc.name, got, tc.want)
		}
	}
	if (noneGroup{}).Only(42) {
		t.Error("a none group answered for the sandbox")
	}
}

// TestV1Only: a v1 group answers from its first hierarchy's cgroup.procs.
func TestV1Only(t *testing.T) {
	mk := func(procs string) string {
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(procs), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		name  string
		order []string
		want  bool
	}{
		{"init alone", []string{mk("42\n"), mk("42\n")}, true},
		{"empty", []string{mk("")}, true},
		{"another process", []string{mk("42\n43\n"), mk("42\n")}, false},
		{"unreadable", []string{filepath.Join(t.TempDir(), "gone")}, false},
		{"no hierarchy", nil, false},
	} {
		g := &v1Group{order: tc.order}
		if got := g.Only(42); got != tc.want {
			t.Errorf("%s: Only = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestWriteFileErrors: writeFile in plain system calls replaces the file's
// content and fails as os.OpenFile and Write did: an open error names the
// path with "open" (ErrNotExist for a missing file), a refused write names
// the value and the path with the kernel's errno (/dev/full: ENOSPC, as a
// cgroup file refuses a bad value with EINVAL). Seen failing with the
// write's errno dropped (a refused write returned nil).
func TestWriteFileErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pids.max")
	if err := os.WriteFile(p, []byte("a longer old value\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(p, "64"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "64" {
		t.Errorf("content %q, want 64", b)
	}
	var pe *fs.PathError
	if err := writeFile(filepath.Join(dir, "missing"), "1"); !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Op != "open" {
		t.Errorf("missing file: %v, want an open PathError with ErrNotExist", err)
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		return // no /dev/full in this tree: the rest needs it
	}
	err := writeFile("/dev/full", "1")
	if !errors.Is(err, unix.ENOSPC) || !errors.As(err, &pe) || pe.Op != `write "1"` || pe.Path != "/dev/full" {
		t.Errorf("refused write: %v, want write \"1\" /dev/full: ENOSPC", err)
	}
}
