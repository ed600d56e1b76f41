package cgroup

import (
	"os"
	"path/filepath"
	"testing"
)

// Killing a group that is already empty (every run's end: the sandbox has
// exited) freezes nothing: no freeze, no thaw, no wait for FROZEN.
func TestKillEmptyGroupDoesNotFreeze(t *testing.T) {
	ft := newFakeTree(t, scope)
	g, _, err := Open("", Limits{}, ft.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Delete()
	os.Remove(filepath.Join(g.Path(), "cgroup.kill")) // the freezer path (kernel < 5.14, and v1)
	freeze := filepath.Join(g.Path(), "cgroup.freeze")
	if err := os.WriteFile(freeze, []byte("untouched"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(g.Path(), "cgroup.procs"), nil, 0o644)
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	if got := ft.read(freeze); got != "untouched" {
		t.Errorf("empty group: cgroup.freeze = %q, want it untouched", got)
	}
}

// A stale group another jail gc removed first is no error: two gc runs at
// once failed one of them ("cleanup stale cgroup: open ...: no such file",
// seen in the e2e tests' TestGitKilledRunLeftovers/jail_gc).
func TestRemoveTreeGoneMeanwhile(t *testing.T) {
	if err := removeTree(filepath.Join(t.TempDir(), "gone")); err != nil {
		t.Fatalf("a group removed meanwhile: %v", err)
	}
}
