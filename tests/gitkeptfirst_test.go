//go:build linux

package tests

// A repository's first kept run: the start hard-links its packs into the
// store (gitkeep.KeepPacks), which sets their change time; the end must
// not take them for packs the run made.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGitHistoryFirstRunKeptPacksNotTheRuns: a clone whose pack holds a
// blob past what the end's check reads (64 MiB inflated) and a
// multi-pack-index naming it, as the host's git maintenance writes one.
// The first run's start keeps the pack (the link changes its change
// time); the run writes nothing in .git. Before review18e the end took
// the pack for the run's: it said "a pack this run made ... was not
// checked" (telling the user to fsck a clone), recorded it in the store's
// packs-unchecked (so later starts keep no pack of that name, and a later
// end drops kept packs it cannot read) and quarantined the user's
// multi-pack-index as one "naming a pack rewritten in this run". Seen
// failing on main (b5e615a), root and jailtest.
func TestGitHistoryFirstRunKeptPacksNotTheRuns(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	h.repo(t, ws)
	f, err := os.Create(filepath.Join(ws, "big"))
	if err != nil {
		t.Fatal(err)
	}
	// Zeros: past the reader's bound inflated, 64 KiB deflated.
	if err := f.Truncate(65 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	h.mustGit(t, ws, "add", "big")
	h.mustGit(t, ws, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "big")
	h.mustGit(t, ws, "repack", "-q", "-a", "-d")
	h.mustGit(t, ws, "multi-pack-index", "write")
	midx := filepath.Join(ws, ".git", "objects", "pack", "multi-pack-index")
	if _, err := os.Lstat(midx); err != nil {
		t.Fatalf("no multi-pack-index: %v", err)
	}
	// The clone is the host's, before the run: a pack whose change time
	// is within the start's tick is not kept (gitkeep.KeepPacks).
	time.Sleep(2500 * time.Millisecond)
	r := h.run(t, ws, "git log --format=%s", nil)
	if r.code != 0 {
		t.Fatalf("jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	stores, _ := filepath.Glob(filepath.Join(h.state, "jail", "git-kept", "*", "objects", "pack", "pack-*.idx"))
	if len(stores) != 1 {
		t.Fatalf("the start kept %d packs in the store, want the clone's one: %v\nstderr:\n%s", len(stores), stores, r.stderr)
	}
	store := filepath.Dir(filepath.Dir(filepath.Dir(stores[0])))
	if strings.Contains(r.stderr, "not checked") {
		t.Errorf("the end said the clone's pack (kept at the start) was not checked, as if the run made it:\n%s", r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(store, "packs-unchecked")); err == nil {
		t.Errorf("the end recorded the clone's pack as unchecked in the store: %q", b)
	}
	if _, err := os.Lstat(midx); err != nil {
		t.Errorf("the user's multi-pack-index is gone (%v); quarantined: %v\nstderr:\n%s", err, h.quarantined(t), r.stderr)
	}
	// A second run keeps it all as it was.
	h.trail = filepath.Join(t.TempDir(), "trail.jsonl")
	r2 := h.run(t, ws, "true", nil)
	if r2.code != 0 || strings.Contains(r2.stderr, "not checked") {
		t.Errorf("second run: exit %d\nstderr:\n%s", r2.code, r2.stderr)
	}
}
