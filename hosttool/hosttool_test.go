package hosttool

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// under is a Writable for the trees roots.
func under(roots ...string) Writable {
	return func(p string) bool {
		p = filepath.Clean(p)
		for _, r := range roots {
			if p == r || strings.HasPrefix(p, r+"/") {
				return true
			}
		}
		return false
	}
}

func TestEnv(t *testing.T) {
	w := under("/ws", "/data/tools")
	for _, c := range []struct {
		name string
		in   []string
		want []string
	}{
		{"a venv of the workspace first on PATH",
			[]string{"HOME=/home/u", "PATH=/ws/.venv/bin:/usr/local/bin:/usr/bin"},
			[]string{"HOME=/home/u", "PATH=/usr/local/bin:/usr/bin"}},
		{"relative and empty entries",
			[]string{"PATH=.:node_modules/.bin::/usr/bin:"},
			[]string{"PATH=/usr/bin"}},
		{"a write path, by another spelling",
			[]string{"PATH=/data/tools//bin/:/data/./tools:/data/toolsx/bin"},
			[]string{"PATH=/data/toolsx/bin"}},
		{"the loader's list",
			[]string{"LD_LIBRARY_PATH=/ws/build/lib:/opt/lib:lib"},
			[]string{"LD_LIBRARY_PATH=/opt/lib"}},
		{"git's own commands",
			[]string{"GIT_EXEC_PATH=/ws/libexec", "A=b"},
			[]string{"A=b"}},
		{"nothing left of PATH: unset, not empty (the current directory)",
			[]string{"PATH=/ws/bin:.", "A=b"},
			[]string{"A=b"}},
		{"what names code to load",
			[]string{"LD_PRELOAD=/ws/x.so", "LD_AUDIT=/ws/a.so", "BASH_ENV=/ws/rc", "ENV=/ws/rc", "NODE_OPTIONS=--require /ws/x.js", "PYTHONPATH=/ws", "PYTHONSTARTUP=/ws/s.py", "PERL5OPT=-Mx", "PERL5LIB=/ws", "RUBYOPT=-rx", "TERM=xterm"},
			[]string{"TERM=xterm"}},
		{"nothing writable: unchanged",
			[]string{"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "LANG=C.UTF-8"},
			[]string{"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "LANG=C.UTF-8"}},
		{"a line without =", []string{"junk", "A=b"}, []string{"A=b"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Env(c.in, w); !reflect.DeepEqual(got, c.want) {
				t.Errorf("Env(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// TestLookPath: the first git on PATH is the workspace's (as with an
// activated venv there); the one found is the first the sandbox cannot
// write, and a link in a read-only directory to a writable file does not
// count.
func TestLookPath(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	mk := func(p string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	mk(filepath.Join(ws, ".venv", "bin", "git"), 0o755)
	mk(filepath.Join(ws, "tool"), 0o755)
	linked := filepath.Join(root, "linked")
	if err := os.MkdirAll(linked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, "tool"), filepath.Join(linked, "git")); err != nil {
		t.Fatal(err)
	}
	mk(filepath.Join(root, "noexec", "git"), 0o644)
	mk(filepath.Join(root, "usr", "bin", "git"), 0o755)
	w := under(ws)
	path := "PATH=" + strings.Join([]string{".", filepath.Join(ws, ".venv", "bin"), linked, filepath.Join(root, "noexec"), filepath.Join(root, "usr", "bin")}, ":")
	got, err := LookPath("git", []string{"PATH=/nowhere", path}, w)
	if want := filepath.Join(root, "usr", "bin", "git"); err != nil || got != want {
		t.Errorf("LookPath = %q, %v; want %q", got, err, want)
	}
	// Only writable ones: none.
	_, err = LookPath("git", []string{"PATH=" + filepath.Join(ws, ".venv", "bin") + ":" + linked}, w)
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("only writable gits: %v, want ErrNotFound", err)
	}
	for _, n := range []string{"", "bin/git", "/usr/bin/git"} {
		if _, err := LookPath(n, []string{path}, w); err == nil {
			t.Errorf("LookPath(%q): no error", n)
		}
	}
}

// FuzzDirs: whatever the list, each directory kept is absolute and not
// writable.
func FuzzDirs(f *testing.F) {
	f.Add("/ws/bin:/usr/bin:.::rel")
	f.Add("/ws/../usr/bin:/ws")
	w := under("/ws")
	f.Fuzz(func(t *testing.T, list string) {
		for _, d := range Dirs(list, w) {
			if !filepath.IsAbs(d) || w(d) {
				t.Fatalf("Dirs(%q) kept %q", list, d)
			}
		}
	})
}
