package fsrules

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// manyFiles makes n empty files f00000, f00001... in dir.
func manyFiles(t testing.TB, dir string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHomeLinksManyFiles: the hard-link check of the home's protected
// directories is complete, however many files they hold. A home whose
// ~/.ssh/ (or browser profile, or ~/.local/bin/) holds more than 10,000
// files, with the last one the walk reaches hard-linked into the
// workspace: that link is protected like the file (the check used to stop
// after 10,000 entries per home and say nothing). The same inside a hidden
// directory of the workspace itself.
func TestHomeLinksManyFiles(t *testing.T) {
	base := tmp(t)
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	const n = 10_001
	manyFiles(t, filepath.Join(home, ".ssh/many"), n)
	manyFiles(t, filepath.Join(home, ".local/bin"), 50)
	manyFiles(t, filepath.Join(ws, ".aws/cache"), n)
	mk(t, ws, "plain")
	last := fmt.Sprintf("f%05d", n-1)
	for _, l := range [][2]string{
		{filepath.Join(home, ".ssh/many", last), "k.txt"},         // hidden: past the old budget
		{filepath.Join(home, ".local/bin", "f00049"), "deep/t"},   // read-only, after .ssh's files
		{filepath.Join(ws, ".aws/cache", last), "sub/creds.json"}, // hidden directory of the workspace
	} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, l[1])), 0o755))
		must(t, os.Link(l[0], filepath.Join(ws, l[1])))
	}
	plan, err := Expand(Input{Workspace: ws, Home: home, Writable: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "masks", summary(ws, plan.Masks), []string{"hide .aws/", "read-only deep/t", "hide k.txt", "hide sub/creds.json"})
}

// TestWalkLinksMatchesWalkDir: walkLinks finds exactly the multiply
// linked regular files filepath.WalkDir and lstat(2) find: not through
// symlinks, not fifos, at every depth, and none in a skipped directory.
func TestWalkLinksMatchesWalkDir(t *testing.T) {
	base := tmp(t)
	root, out := filepath.Join(base, "root"), filepath.Join(base, "out")
	mk(t, root, "a/one", "a/b/c/two", "a/b/three", "d/four", "skip/five", "plain")
	mk(t, out, "x", "y")
	for _, l := range [][2]string{{"a/one", "d/one2"}, {"a/b/c/two", "../out/two"}, {"skip/five", "../out/five"}} {
		must(t, os.Link(filepath.Join(root, l[0]), filepath.Join(root, l[1])))
	}
	must(t, os.Link(filepath.Join(out, "x"), filepath.Join(out, "x2")))
	must(t, os.Symlink(out, filepath.Join(root, "a/to-out")))               // not followed
	must(t, os.Symlink(filepath.Join(out, "x"), filepath.Join(root, "lx"))) // a symlink is no link
	must(t, syscall.Mkfifo(filepath.Join(root, "a/fifo"), 0o644))
	skip := func(p string) bool { return p == filepath.Join(root, "skip") }
	var got []string
	walkLinks(root, skip, nil, func(p string, _, _ uint64) { got = append(got, p) })
	sort.Strings(got)
	var want []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if d.IsDir() && skip(p) {
			return filepath.SkipDir
		}
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Sys().(*syscall.Stat_t).Nlink >= 2 {
			want = append(want, p)
		}
		return nil
	})
	eq(t, "linked files", got, want)
	if len(want) != 3 {
		t.Fatalf("the reference found %v: the tree is not what the test means", want)
	}
}

// TestHomeLinksRuleNamesFirst: an inode with two names in ~/.ssh/ and one
// in the workspace: the mask's rule names the first protected name
// filepath.WalkDir reaches, whatever order getdents lists them in.
func TestHomeLinksRuleNamesFirst(t *testing.T) {
	base := tmp(t)
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	mk(t, home, ".ssh/a.b/key")
	mk(t, ws, "plain")
	for i := range 40 {
		must(t, os.Link(filepath.Join(home, ".ssh/a.b/key"), filepath.Join(home, fmt.Sprintf(".ssh/k%02d", i))))
	}
	must(t, os.Mkdir(filepath.Join(home, ".ssh/a"), 0o755))
	must(t, os.Link(filepath.Join(home, ".ssh/a.b/key"), filepath.Join(home, ".ssh/a/z")))
	must(t, os.Link(filepath.Join(home, ".ssh/a.b/key"), filepath.Join(ws, "k.txt")))
	plan, err := Expand(Input{Workspace: ws, Home: home, Writable: []string{ws}})
	must(t, err)
	want := "hard link of " + filepath.Join(home, ".ssh/a/z") + ")"
	if len(plan.Masks) != 1 || !strings.HasSuffix(plan.Masks[0].Rule, want) {
		t.Fatalf("masks %+v, want k.txt with a rule ending %q", plan.Masks, want)
	}
}

// TestHomeLinksUnreadableNoted: a directory inside a protected home
// directory that cannot be listed, or listed but not searched, is named in
// a note (its files' links cannot be found), not passed over in silence.
// Root reads every directory: as root there is nothing to see.
func TestHomeLinksUnreadableNoted(t *testing.T) {
	base := tmp(t)
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	mk(t, home, ".ssh/noread/k", ".ssh/nosearch/k", ".ssh/ok/k")
	mk(t, ws, "plain")
	for d, m := range map[string]os.FileMode{"noread": 0o311, "nosearch": 0o644} {
		p := filepath.Join(home, ".ssh", d)
		must(t, os.Chmod(p, m))
		t.Cleanup(func() { os.Chmod(p, 0o755) })
	}
	plan, err := Expand(Input{Workspace: ws, Home: home, Writable: []string{ws}})
	must(t, err)
	notes := strings.Join(plan.Notes, "\n")
	for _, d := range []string{"noread", "nosearch", "ok"} {
		p := filepath.Join(home, ".ssh", d)
		want := os.Geteuid() != 0 && d != "ok"
		if got := strings.Contains(notes, p+": unreadable inside protected"); got != want {
			t.Errorf("%s named in a note: %t, want %t\n%s", d, got, want, notes)
		}
	}
}
