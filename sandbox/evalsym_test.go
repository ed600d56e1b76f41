package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSymResolverSameAsEval: one resolver, asked about many paths that
// share prefixes (as programRoots asks), answers each as
// filepath.EvalSymlinks does, result and error: relative and absolute
// links, chains, a link's ".." (its target's parent, not the lexical one),
// dangling links, a loop, a file in the middle of a path, ".", "..", "//",
// a trailing slash, relative paths.
func TestSymResolverSameAsEval(t *testing.T) {
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r // macOS: /var -> /private/var
	}
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := func(p string) {
		if err := os.WriteFile(filepath.Join(root, p), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(p, to string) {
		if err := os.Symlink(to, filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("a/b/c")
	mk("usr/bin")
	file("a/f")
	file("f")
	file("usr/bin/true")
	link("bin", "usr/bin")
	link("l1", "a")
	link("l2", "a/b")
	link("up", "a/b/..")
	link("out", "../"+filepath.Base(root)+"/a")
	link("abs", filepath.Join(root, "a/b"))
	link("chain", "l1/b")
	link("loop1", "loop2")
	link("loop2", "loop1")
	link("dangle", "nowhere")
	link("dotdot", "l2/../f") // a/f: EvalSymlinks resolves l2 before ".."
	link("a/b/back", "../../l1")
	link("a/b/c/top", "/")
	link("usr/bin/python3", "python3.12")
	link("usr/bin/python3.12", "../../a/f")
	link("self", ".")
	names := []string{"", "a", "a/b", "a/b/c", "a/f", "f", "bin", "l1", "l2", "up", "out", "abs", "chain",
		"loop1", "dangle", "dotdot", "a/b/back", "a/b/c/top", "usr/bin/python3", "self", "self/self/l1", "missing", "bin/true"}
	suffixes := []string{"", "/", "/.", "/..", "/../..", "/b", "/f", "/f/x", "//b", "/./b", "/../a", "/b/../b/c", "/true"}
	var paths []string
	for _, n := range names {
		for _, s := range suffixes {
			paths = append(paths, filepath.Join(root, n)+s, root+"/"+n+s)
			if n != "" {
				paths = append(paths, n+s, "./"+n+s) // relative to the working directory
			}
		}
	}
	paths = append(paths, "/", "//", "/.", "/..", ".", "..", "", "usr//bin/", root+"/usr/../usr/bin/python3")
	t.Chdir(root)
	r := newSymResolver()
	check := func(p string) {
		want, werr := filepath.EvalSymlinks(p)
		got, gerr := r.eval(p)
		if got != want || (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Errorf("eval(%q) = %q, %v; EvalSymlinks: %q, %v", p, got, gerr, want, werr)
		}
	}
	for _, p := range paths {
		check(p)
	}
	// Again in reverse order, everything now from the resolver's memory.
	for i := len(paths) - 1; i >= 0; i-- {
		check(paths[i])
	}
	if len(r.lstats) == 0 {
		t.Fatal("the resolver remembered nothing")
	}
}

// BenchmarkPathEval: this process's PATH entries resolved the way
// programRoots did (filepath.EvalSymlinks each) and the way it does (one
// resolver for all); with /bin/true after them, as a command.
func BenchmarkPathEval(b *testing.B) {
	entries := append(filepath.SplitList(os.Getenv("PATH")), "/bin/true", "/bin")
	b.Run("EvalSymlinks", func(b *testing.B) {
		for b.Loop() {
			for _, e := range entries {
				filepath.EvalSymlinks(e)
			}
		}
	})
	b.Run("resolver", func(b *testing.B) {
		for b.Loop() {
			r := newSymResolver()
			for _, e := range entries {
				r.eval(e)
			}
		}
	})
}
