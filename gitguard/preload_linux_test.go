package gitguard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/dircache"
)

// TestPreloadSweep: the exit check's records read ahead (PreloadSweep,
// while the agent runs) find what the agent plants after that read, in a
// tree wide enough for the cache's parallel lstats, exactly as a sweep
// that reads every directory; and the preload was used (the sweep's
// unchanged directories answered, not read). Seen failing with
// PreloadSweep starting the sweep's pass (a ReadDir of each root: the
// stats then predate the plants).
func TestPreloadSweep(t *testing.T) {
	ws, state := tmp(t), t.TempDir()
	repo(t, ws)
	for i := range dircache.PrefetchMin + 44 {
		os.MkdirAll(filepath.Join(ws, fmt.Sprintf("d%02d", i%30), fmt.Sprintf("s%03d", i)), 0o755)
	}
	g := scan(t, ws).Guard
	// A record is kept only for a directory unchanged for dircache.Margin.
	time.Sleep(dircache.Margin + 100*time.Millisecond)
	c, err := dircache.Open(state)
	if err != nil {
		t.Fatal(err)
	}
	if f, notes := g.SweepDirs(0, c); len(f)+len(notes) != 0 {
		t.Fatalf("untouched tree: %+v %v", f, notes)
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c, _ = dircache.Open(state)
	g.PreloadSweep(c)
	time.Sleep(200 * time.Millisecond) // for stats a preload would (wrongly) take
	write(t, ws+"/d03/s033/.git", "gitdir: ../../.git\n", 0o644)
	os.MkdirAll(ws+"/d29/s029/bare/objects", 0o755)
	os.MkdirAll(ws+"/d29/s029/bare/refs", 0o755)
	write(t, ws+"/d29/s029/bare/HEAD", "ref: refs/heads/main\n", 0o644)
	write(t, ws+"/d29/s029/bare/config", "[core]\n\tpager = evil\n", 0o644)
	got, _ := g.SweepDirs(0, c)
	want, _ := g.Sweep(0)
	var gp, wp []string
	for _, f := range got {
		gp = append(gp, strings.TrimPrefix(f.Path, ws+"/"))
	}
	for _, f := range want {
		wp = append(wp, strings.TrimPrefix(f.Path, ws+"/"))
	}
	if strings.Join(gp, " ") != strings.Join(wp, " ") {
		t.Errorf("through the preloaded cache: %v; read whole: %v", gp, wp)
	}
	if m := has(gp, "d03/s033/.git", "d29/s029/bare/config"); len(m) > 0 {
		t.Errorf("the sweep through the preloaded cache missed %v (found %v)", m, gp)
	}
	if hits, reads := c.Stats(); hits < dircache.PrefetchMin || reads > 6 {
		t.Errorf("%d directories answered, %d read: the unchanged ones should be answered", hits, reads)
	}
}

// TestJoinName: joinName is filepath.Join for a clean absolute directory
// and one element. Seen failing with joinName not minding the root.
func TestJoinName(t *testing.T) {
	for _, c := range [][2]string{{"/", "a"}, {"/w", "a"}, {"/w/x y", ".git"}, {"/w/x", "HEAD"}, {"/", ".hidden"}, {"/a/b/c", "..x"}} {
		if got, want := joinName(c[0], c[1]), filepath.Join(c[0], c[1]); got != want {
			t.Errorf("joinName(%q, %q) = %q, want %q", c[0], c[1], got, want)
		}
	}
}
