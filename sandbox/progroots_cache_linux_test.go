package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/dircache"
)

// TestProgramRootsCacheSeesRetarget is the adversarial test of the program
// roots' cache across runs (the symlinks of each PATH directory, kept in
// jail's state directory by package dircache): the host retargets a
// symlink of a PATH directory between two starts, from one data place
// directory to another, and puts the directory's mtime back. The second
// start must show the new target's directory, not the old one. Before
// that, an unchanged start must be answered from the cache, or the test
// would prove nothing.
func TestProgramRootsCacheSeesRetarget(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	opt, bin := filepath.Join(root, "opt"), filepath.Join(root, "usr/bin")
	for _, d := range []string{"opt/a/bin", "opt/b/bin", "usr/bin", "ws"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"opt/a/bin/tool", "opt/b/bin/tool"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(opt, "a/bin/tool"), filepath.Join(bin, "tool")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ls", filepath.Join(bin, "dir")); err != nil {
		t.Fatal(err)
	}
	// A directory changed less than dircache.Margin ago is not kept.
	time.Sleep(dircache.Margin + 100*time.Millisecond)
	start := func() (string, int) {
		t.Helper()
		c, err := dircache.Open(state)
		if err != nil {
			t.Fatal(err)
		}
		got := programRoots([]string{opt}, nil, nil, bin, nil, filepath.Join(root, "ws"), c)
		if err := c.Save(); err != nil {
			t.Fatal(err)
		}
		hits, _ := c.Stats()
		return strings.Join(got, " "), hits
	}
	if got, _ := start(); got != opt+"/a" {
		t.Fatalf("first start: %q, want %q", got, opt+"/a")
	}
	memo0 := rootsMemoHits.Load()
	if got, hits := start(); got != opt+"/a" || hits == 0 && rootsMemoHits.Load() == memo0 {
		t.Fatalf("unchanged start: %q with %d directories from the cache and none from the memo; want %q from either", got, hits, opt+"/a")
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(opt, "b/bin/tool"), filepath.Join(bin, ".tool.new")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(bin, ".tool.new"), filepath.Join(bin, "tool")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(bin, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got, _ := start(); got != opt+"/b" {
		t.Fatalf("after the host retargeted usr/bin/tool (mtime put back): %q, want %q", got, opt+"/b")
	}
}

// TestBuildPlanCachedRootsEqualFresh: a plan built with the directory
// cache (twice: filled, then answering) has the same mounts as one built
// without it, on this host's own PATH.
func TestBuildPlanCachedRootsEqualFresh(t *testing.T) {
	f := newFixture(t)
	stableHostSockets(t)
	state := t.TempDir()
	env := append([]string{"PATH=" + os.Getenv("PATH"), "XDG_STATE_HOME=" + state}, f.env...)
	p := f.policy(nil)
	mounts := func(dirs *dircache.Cache) string {
		t.Helper()
		var pl *Plan
		var err error
		if dirs == nil {
			pl, err = buildPlan(p, env, nil)
		} else {
			pl, err = buildPlan(p, env, dirs)
		}
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, m := range pl.Mounts {
			b.WriteString(m.Path + " " + m.Why + "\n")
		}
		return b.String()
	}
	fresh := mounts(nil)
	memo0 := rootsMemoHits.Load()
	for i := 0; i < 3; i++ {
		c, err := dircache.Open(filepath.Join(state, "dc"))
		if err != nil {
			t.Fatal(err)
		}
		if got := mounts(c); got != fresh {
			t.Fatalf("start %d with the cache: mounts\n%s\nwithout:\n%s", i, got, fresh)
		}
		c.Save()
		if hits, _ := c.Stats(); i == 1 && hits == 0 && rootsMemoHits.Load() == memo0 {
			t.Fatal("the second start answered nothing from the cache: the comparison proves nothing")
		}
	}
	if rootsMemoHits.Load() == memo0 {
		t.Fatal("no start was answered by the program roots' memo: the comparison proves nothing for it")
	}
}
