package dircache

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// wideTree makes n directories under root (names of varying length, so
// that sorted order and creation order differ, with nested ones), and
// returns them with root first.
func wideTree(t *testing.T, root string, n int) []string {
	t.Helper()
	dirs := []string{root}
	for i := 0; len(dirs) < n; i++ {
		d := filepath.Join(root, fmt.Sprintf("d%d", i))
		if i%7 == 3 {
			d = filepath.Join(dirs[len(dirs)-1], fmt.Sprintf("n%d", i)) // nested
		}
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// pass reads every directory of dirs through c (a walk of a tree) and
// returns the names it got of each and how many were answered from the
// cache.
func pass(t *testing.T, c *Cache, v string, dirs []string) (map[string][]string, int) {
	t.Helper()
	got := map[string][]string{}
	h0, _ := c.Stats()
	for _, d := range dirs {
		ents, _, _, err := c.ReadDir(v, d, all)
		if err != nil {
			t.Fatal(err)
		}
		got[d] = names(ents)
	}
	h1, _ := c.Stats()
	return got, h1 - h0
}

// TestTableAnswersWhatWasRead is the claim of the undecoded table (a
// record decoded from the file only when a lookup uses it, a directory's
// record found by binary search, the parallel lstats of a wide view kept
// as "the record's key or not" by the record's index): over a tree wide
// enough for the parallel lstat, a run answers every unchanged directory
// with exactly what a read gives, and reads every directory the host
// changed since the last run, wherever it lies in the file's order (the
// first record, the last, nested ones, one whose entry was renamed). Seen
// failing with the prefetch taking any directory for unchanged (a stat
// not compared with its record's key) and with find answering the
// neighbouring record.
func TestTableAnswersWhatWasRead(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	dirs := wideTree(t, root, PrefetchMin+40)
	mustWrite(t, filepath.Join(dirs[5], "a"))
	mustWrite(t, filepath.Join(dirs[17], "b"))
	c := open(t, state, time.Hour)
	want, _ := pass(t, c, "v", dirs)
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c = open(t, state, time.Hour)
	got, hits := pass(t, c, "v", dirs)
	if hits != len(dirs) {
		t.Fatalf("unchanged tree: %d of %d answered (the test is broken)", hits, len(dirs))
	}
	for _, d := range dirs {
		if !slices.Equal(got[d], want[d]) {
			t.Fatalf("%s answered %v, a read gives %v", d, got[d], want[d])
		}
	}
	if c.views["v"].pre == nil {
		t.Fatal("no parallel lstat (the test is broken)")
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	// The host plants files in the first and last records (in the file's
	// sorted order) and in a nested one, and renames an entry elsewhere.
	sorted := slices.Sorted(slices.Values(dirs))
	changed := []string{sorted[0], sorted[len(sorted)-1], sorted[len(sorted)/2], dirs[10]}
	for _, d := range changed[:3] {
		mustWrite(t, filepath.Join(d, ".env"))
	}
	if err := os.Rename(filepath.Join(dirs[5], "a"), filepath.Join(dirs[5], "id_rsa")); err != nil {
		t.Fatal(err)
	}
	changed[3] = dirs[5]
	c = open(t, state, time.Hour)
	got, hits = pass(t, c, "v", dirs)
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
	// The next run (after this one's Save) answers all again, the changed
	// directories from the records this run kept.
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c = open(t, state, time.Hour)
	if _, hits = pass(t, c, "v", dirs); hits != len(dirs) {
		t.Errorf("after the changes were kept: %d of %d answered", hits, len(dirs))
	}
}

// TestTableRunRecordWins: in one run, a directory read again after its
// record was replaced (a second walk of the same view in the pass) is
// answered by this run's record, not the file's older one; and after Save
// the view is what was written. Seen failing with get answering from the
// file's table before this run's records.
func TestTableRunRecordWins(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	dirs := wideTree(t, root, 8)
	c := open(t, state, time.Hour)
	pass(t, c, "v", dirs)
	c.Save()
	mustWrite(t, filepath.Join(dirs[3], ".env"))
	c = open(t, state, time.Hour)
	got, _ := pass(t, c, "v", dirs) // reads dirs[3], keeps its new record
	if !slices.Contains(got[dirs[3]], ".env") {
		t.Fatalf("planted file not seen: %v", got[dirs[3]])
	}
	got, hits := pass(t, c, "v", dirs) // the same pass: every directory answered
	if hits != len(dirs) || !slices.Contains(got[dirs[3]], ".env") {
		t.Fatalf("second walk of the pass: %d answered, %s: %v; want all, with .env", hits, dirs[3], got[dirs[3]])
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	if got, hits = pass(t, c, "v", dirs); hits != len(dirs) || !slices.Contains(got[dirs[3]], ".env") {
		t.Fatalf("after Save: %d answered, %s: %v; want all, with .env", hits, dirs[3], got[dirs[3]])
	}
}

// TestPassKeyIsThisPassOnly: PassKey gives a directory's key only when
// this pass's own lstat of it found its record's key, in a view wide
// enough for the parallel stats and in one that is not; never for a
// directory the pass has not looked at, one changed since its record, or
// after the pass ended (Save): a caller that skips its own stat for it
// must not be handed a key older than the walk's.
func TestPassKeyIsThisPassOnly(t *testing.T) {
	for _, n := range []int{8, PrefetchMin + 40} {
		t.Run(fmt.Sprint(n, " directories"), func(t *testing.T) {
			root, state := t.TempDir(), t.TempDir()
			dirs := wideTree(t, root, n)
			c := open(t, state, time.Hour)
			pass(t, c, "v", dirs)
			if err := c.Save(); err != nil {
				t.Fatal(err)
			}
			changed := dirs[len(dirs)/2]
			c = open(t, state, time.Hour)
			if _, ok := c.PassKey(dirs[1]); ok {
				t.Fatal("a key before the pass looked at the directory")
			}
			mustWrite(t, filepath.Join(changed, "new"))
			pass(t, c, "v", dirs[:len(dirs)-1]) // the last not looked at
			for _, d := range dirs {
				k, ok := c.PassKey(d)
				want, _ := lstatKey(d)
				switch {
				case d == changed || d == dirs[len(dirs)-1]:
					if ok {
						t.Errorf("%s: a key (%v) for a directory changed since its record or not looked at", d, k)
					}
				case !ok || k != want:
					t.Errorf("%s: PassKey %v %v, its lstat %v", d, k, ok, want)
				}
			}
			if err := c.Save(); err != nil {
				t.Fatal(err)
			}
			for _, d := range dirs {
				if k, ok := c.PassKey(d); ok {
					t.Fatalf("%s: a key (%v) after the pass ended", d, k)
				}
			}
		})
	}
}
