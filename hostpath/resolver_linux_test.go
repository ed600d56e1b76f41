//go:build linux

package hostpath

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// stepsOf is what Walk showed of p, and what it returned, as text: each
// step's path, its kind and identity (device, inode), a link's target and
// an error.
func stepsOf(walk func(string, func(Step) error) (string, error), p string) string {
	var b strings.Builder
	final, err := walk(p, func(s Step) error {
		fmt.Fprintf(&b, "%s", s.Path)
		if s.Info != nil {
			st := s.Info.Sys().(*syscall.Stat_t)
			fmt.Fprintf(&b, " %v %d:%d %s", s.Info.Mode(), st.Dev, st.Ino, s.Info.Name())
		}
		if s.Target != "" {
			fmt.Fprintf(&b, " -> %s", s.Target)
		}
		if s.Err != nil {
			fmt.Fprintf(&b, " err %v", s.Err)
		}
		b.WriteString("\n")
		return nil
	})
	fmt.Fprintf(&b, "= %q, %v", final, err)
	return b.String()
}

// resolvedOf is ResolveAsNamed's and Resolve's answers for p, as text.
func resolvedOf(asNamed, strict func(string) (string, []Link, error), p string) string {
	r1, l1, e1 := asNamed(p)
	r2, l2, e2 := strict(p)
	return fmt.Sprintf("%q %v %v | %q %v %v", r1, l1, e1, r2, l2, e2)
}

// agreeAll resolves paths in one Resolver, in order, and fails on any
// answer that differs from Walk's and ResolveAsNamed's afresh.
func agreeAll(t testing.TB, paths []string) {
	t.Helper()
	r := NewResolver()
	defer r.Close()
	for _, p := range paths {
		if got, want := stepsOf(r.Walk, p), stepsOf(Walk, p); got != want {
			t.Fatalf("Resolver.Walk(%s):\n%s\nWalk:\n%s", p, got, want)
		}
		if got, want := resolvedOf(r.ResolveAsNamed, r.Resolve, p), resolvedOf(ResolveAsNamed, Resolve, p); got != want {
			t.Fatalf("Resolver on %s: %s\nafresh: %s", p, got, want)
		}
	}
}

// A Resolver answers every path as Walk, Resolve and ResolveAsNamed do
// afresh, whatever the paths it resolved before: links relative and
// absolute, "..", after a link too, a file on the way, missing parts,
// dangling links and a loop, in several orders. Checked to fail when the
// cache keys a step by the name alone (not its directory's path) or keeps
// a ".." under the path it left.
func TestResolverAgrees(t *testing.T) {
	root := walkTree(t)
	var paths []string
	for _, a := range walkNames {
		paths = append(paths, root+"/"+a)
		for _, b := range walkNames {
			paths = append(paths, root+"/"+a+"/"+b)
			for _, c := range []string{"a", "b", "f", "rel", "up", "..", "x", "chain"} {
				paths = append(paths, root+"/"+a+"/"+b+"/"+c)
			}
		}
	}
	paths = append(paths, "/", "/..", root+"/a/b/abs/a/b/abs/a/f", root+"/lf/..", root+"/rel/../../a")
	agreeAll(t, paths)
	rev := make([]string, len(paths))
	for i, p := range paths {
		rev[len(paths)-1-i] = p
	}
	agreeAll(t, rev)
	rnd := rand.New(rand.NewSource(20))
	rnd.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	agreeAll(t, paths)
}

// Paths resolved in one Resolver agree with each resolved afresh: data is
// split at 0xff into paths spelled as FuzzResolveAsKernel's.
func FuzzResolverAgrees(f *testing.F) {
	root := walkTree(f)
	for _, seed := range []string{"\x00\x01\xff\x00\x04\x0a", "\x03\x0a\x00\xff\x03\x0a\x01", "\x05\x05\xff\x00\x01\x05\x03\xff\x0a\x0a", "\x09\xff\x08\xff\x07\x0a"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 256 {
			return
		}
		var paths []string
		for _, part := range strings.Split(string(data), "\xff") {
			paths = append(paths, walkPath(root, []byte(part)))
		}
		agreeAll(t, paths)
	})
}

// The cost: 256 files under one directory 8 deep (a full policy-named
// record of one project tree), each two names below it, are resolved with
// the shared directories looked up once: about 5 lookups a file, where
// each walked afresh costs 3 a directory (25 a file). Checked to fail
// with the cache off (every lookup counted).
func TestResolverSharesLookups(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(root, "h/projects/team")
	var paths []string
	for i := range 256 {
		d := filepath.Join(base, fmt.Sprint("repo", i), ".jail")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, d+"/srt.json")
	}
	r := NewResolver()
	defer r.Close()
	for _, p := range paths {
		if _, _, err := r.ResolveAsNamed(p); err != nil {
			t.Fatal(err)
		}
	}
	depth := strings.Count(base, "/")
	if max := 3*depth + 6*len(paths); r.c.calls > max {
		t.Errorf("%d lookups for %d paths %d deep, want at most %d: the shared directories are looked up again", r.c.calls, len(paths), depth+3, max)
	}
	t.Logf("%d lookups", r.c.calls)
}

// fds counts this process's open descriptors.
func fds(t testing.TB) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// Past its bound of open directories and of path text kept, and past
// PATH_MAX of path text through relative links, a Resolver still agrees with Walk (each walk
// then opens and closes its own), and Close leaves no descriptor open.
func TestResolverBounds(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i := range maxCachedDirs + 100 {
		d := filepath.Join(root, fmt.Sprint("d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, d+"/x", d+"/../d0")
	}
	// And past the bound of path text (4 MiB: lowered here).
	defer func(b int) { maxCachedBytes = b }(maxCachedBytes)
	maxCachedBytes = 64 << 10
	deep := deepLinks(t, root, 60)
	paths = append(paths, deep, deep+"d1/..", deep+"d3/../d600", deep+"L0")
	before := fds(t)
	agreeAll(t, paths)
	r := NewResolver()
	for _, p := range paths {
		_, _, _ = r.ResolveAsNamed(p)
	}
	if len(r.c.dirs) > maxCachedDirs || r.c.bytes > maxCachedBytes {
		t.Errorf("%d directories held open, bound %d; %d bytes kept, bound %d", len(r.c.dirs), maxCachedDirs, r.c.bytes, maxCachedBytes)
	}
	r.Close()
	if after := fds(t); after != before {
		t.Errorf("%d descriptors open before, %d after Close", before, after)
	}
}
