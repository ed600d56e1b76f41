package gitguard

import (
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/dircache"
)

// ctimeDirs is a DirReader that answers from what it kept of a directory
// while the directory's (device, inode, ctime) is unchanged, the way
// package dircache does between runs.
type ctimeDirs struct {
	kept  map[string]keptDir
	hits  int
	reads int
}

type keptDir struct {
	key   [3]int64
	ents  []fs.DirEntry
	total int
}

func dirKey(dir string) ([3]int64, bool) {
	var st syscall.Stat_t
	if syscall.Lstat(dir, &st) != nil {
		return [3]int64{}, false
	}
	return [3]int64{int64(st.Dev), int64(st.Ino), ctime(&st)}, true
}

func (c *ctimeDirs) ReadDir(view, dir string, keep func(string, fs.FileMode) bool) ([]fs.DirEntry, int, uint64, error) {
	k := view + "\x00" + dir
	key, ok := dirKey(dir)
	if kd, hit := c.kept[k]; ok && hit && kd.key == key {
		c.hits++
		return kd.ents, kd.total, uint64(key[0]), nil
	}
	c.reads++
	ents, total, dev, err := dircache.Uncached{}.ReadDir(view, dir, keep)
	if err == nil && ok {
		c.kept[k] = keptDir{key, ents, total}
	}
	return ents, total, dev, err
}

// TestSweepDirs: the exit check through a cache of the start's listing
// finds the same deep plants as one that reads everything, even with each
// planted directory's mtime set back (touch -d), and reads again only the
// directories that changed.
func TestSweepDirs(t *testing.T) {
	ws := tmp(t)
	repo(t, ws)
	for _, d := range []string{"a/b", "x/y", "x/g", "quiet/one", "quiet/two"} {
		os.MkdirAll(ws+"/"+d, 0o755)
	}
	g := scan(t, ws).Guard
	c := &ctimeDirs{kept: map[string]keptDir{}}
	if f, notes := g.SweepDirs(0, c); len(f)+len(notes) != 0 {
		t.Fatalf("untouched tree: %+v %v", f, notes)
	}
	c.hits, c.reads = 0, 0
	if f, _ := g.SweepDirs(0, c); len(f) != 0 || c.reads != 0 {
		t.Fatalf("untouched tree, again: %+v, %d directories read", f, c.reads)
	}
	// The agent notes each directory's times and puts them back after
	// planting (touch -r, or touch -d with the old time).
	dirs := []string{"a/b", "a", "x/y", "x/g", "x"}
	mtimes := map[string]time.Time{}
	for _, d := range dirs {
		fi, err := os.Stat(ws + "/" + d)
		if err != nil {
			t.Fatal(err)
		}
		mtimes[d] = fi.ModTime()
	}
	plant := func(p, content string) {
		write(t, ws+"/"+p, content, 0o644)
	}
	plant("a/b/.git", "gitdir: ../../.git\n")
	os.MkdirAll(ws+"/x/y/bare/objects", 0o755)
	os.MkdirAll(ws+"/x/y/bare/refs", 0o755)
	plant("x/y/bare/HEAD", "ref: refs/heads/main\n")
	plant("x/y/bare/config", "[core]\n\tpager = evil\n")
	plant("x/g/HEAD", "ref: refs/heads/main\n")
	plant("x/g/commondir", "../y/bare\n")
	for _, d := range dirs {
		if err := os.Chtimes(ws+"/"+d, mtimes[d], mtimes[d]); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(ws + "/" + d); !fi.ModTime().Equal(mtimes[d]) {
			t.Fatalf("%s: mtime not set back (the test is broken)", d)
		}
	}
	want, _ := g.Sweep(0)
	c.hits, c.reads = 0, 0
	got, _ := g.SweepDirs(0, c)
	var gp, wp []string
	for _, f := range got {
		gp = append(gp, strings.TrimPrefix(f.Path, ws+"/"))
	}
	for _, f := range want {
		wp = append(wp, strings.TrimPrefix(f.Path, ws+"/"))
	}
	if strings.Join(gp, " ") != strings.Join(wp, " ") {
		t.Errorf("through the cache: %v; read whole: %v", gp, wp)
	}
	if m := has(gp, "a/b/.git", "x/y/bare/config", "x/g/commondir"); len(m) > 0 {
		t.Errorf("the sweep through the cache missed %v (found %v)", m, gp)
	}
	if c.hits == 0 || c.reads > 8 {
		t.Errorf("%d directories answered, %d read: the unchanged ones should not be read", c.hits, c.reads)
	}
}
