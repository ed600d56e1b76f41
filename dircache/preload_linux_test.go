package dircache

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestPreloadStatsAtFirstUse is Preload's claim (the exit check's file
// read and decoded while the agent runs): a directory the host (or an
// agent) changes after Preload but before the pass is read again, wherever
// it lies in the file's order, however long after Preload the pass
// starts; every unchanged one, including records Preload decoded ahead,
// is answered with exactly what a read gives. Seen failing with Preload
// starting the pass's parallel lstats (the stats then predate the plants).
func TestPreloadStatsAtFirstUse(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	dirs := wideTree(t, root, PrefetchMin+40)
	mustWrite(t, filepath.Join(dirs[5], "a"))
	mustWrite(t, filepath.Join(dirs[17], "b"))
	c := open(t, state, time.Hour)
	pass(t, c, "v", dirs)
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c = open(t, state, time.Hour)
	c.Preload("v")
	if len(c.views["v"].dec) == 0 {
		t.Fatal("Preload decoded no record (the test is broken)")
	}
	// Time for stats that Preload would (wrongly) start to be taken.
	time.Sleep(200 * time.Millisecond)
	sorted := slices.Sorted(slices.Values(dirs))
	changed := []string{sorted[0], sorted[len(sorted)-1], sorted[len(sorted)/2], dirs[5]}
	for _, d := range changed {
		mustWrite(t, filepath.Join(d, ".git"))
	}
	got, hits := pass(t, c, "v", dirs)
	for _, d := range dirs {
		es, _ := os.ReadDir(d)
		var w []string
		for _, e := range es {
			w = append(w, e.Name())
		}
		if !slices.Equal(got[d], w) {
			t.Errorf("%s answered %v, it holds %v", d, got[d], w)
		}
	}
	if hits != len(dirs)-len(changed) {
		t.Errorf("%d answered from the cache, want %d (every directory but the %d changed)", hits, len(dirs)-len(changed), len(changed))
	}
	if c.views["v"].pre == nil {
		t.Error("no parallel lstat at the pass's first use")
	}
}

// TestPreloadUnusedKept: a view Preload read but no pass used is left as
// it is by Save (not rewritten without the records nobody looked up), and
// the next run's pass of it answers every directory. Seen failing with
// Save writing every loaded view.
func TestPreloadUnusedKept(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	dirs := wideTree(t, root, 20)
	c := open(t, state, time.Hour)
	pass(t, c, "v", dirs)
	pass(t, c, "w", dirs)
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c = open(t, state, time.Hour)
	c.Preload("w") // never used in this run
	pass(t, c, "v", dirs)
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c = open(t, state, time.Hour)
	if _, hits := pass(t, c, "w", dirs); hits != len(dirs) {
		t.Fatalf("a preloaded, unused view: %d of %d answered in the next run", hits, len(dirs))
	}
}
