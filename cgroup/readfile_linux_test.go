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
		if got := onlyIn(tc.dirs, 42); got != tc.want {
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
