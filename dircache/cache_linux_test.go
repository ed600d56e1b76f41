package dircache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

func all(string, fs.FileMode) bool { return true }

func names(ents []fs.DirEntry) []string {
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

func mustWrite(t *testing.T, p string) {
	t.Helper()
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// open returns a cache in a fresh state directory whose clock runs ahead by
// ahead, so that directories made by the test count as settled.
func open(t *testing.T, state string, ahead time.Duration) *Cache {
	t.Helper()
	c, err := Open(state)
	if err != nil {
		t.Fatal(err)
	}
	c.now = func() time.Time { return time.Now().Add(ahead) }
	return c
}

// read is one run: open, read dir, save; it returns the names and whether
// the cache answered.
func read(t *testing.T, state, dir string) ([]string, bool) {
	t.Helper()
	c := open(t, state, time.Hour)
	ents, total, _, err := c.ReadDir("v", dir, all)
	if err != nil {
		t.Fatal(err)
	}
	if total != len(ents) {
		t.Fatalf("total %d, %d entries kept of all", total, len(ents))
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	hits, _ := c.Stats()
	return names(ents), hits == 1
}

func TestHitOnUnchanged(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(dir, "a"))
	if _, hit := read(t, state, dir); hit {
		t.Fatal("first run answered from an empty cache")
	}
	got, hit := read(t, state, dir)
	if !hit || len(got) != 1 || got[0] != "a" {
		t.Fatalf("second run: hit %v, %v; want a hit with [a]", hit, got)
	}
}

// TestPlantWithMtimeReset is the agent's attack on a cache keyed by mtime:
// it plants a file and sets its directory's mtime (and atime) back with
// utimes(2), as `touch -d` does. The next run must read the directory and
// see the file: the key is the ctime, which utimes changes too.
func TestPlantWithMtimeReset(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(dir, "a"))
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
	read(t, state, dir)
	mustWrite(t, filepath.Join(dir, ".envrc"))
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); !fi.ModTime().Equal(old) {
		t.Fatalf("the mtime was not set back (the test is broken): %v", fi.ModTime())
	}
	got, hit := read(t, state, dir)
	if hit || len(got) != 2 {
		t.Fatalf("after a planted file and the mtime set back: hit %v, %v; want a read with [.envrc a]", hit, got)
	}
}

// TestHostCreates: a file the host creates between two runs is seen.
func TestHostCreates(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	read(t, state, dir)
	mustWrite(t, filepath.Join(dir, ".env"))
	if got, hit := read(t, state, dir); hit || len(got) != 1 {
		t.Fatalf("hit %v, %v; want a read with [.env]", hit, got)
	}
}

// TestReplacedDir: another directory renamed into the path (same names,
// other contents) is not the recorded one.
func TestReplacedDir(t *testing.T) {
	state, base := t.TempDir(), t.TempDir()
	dir := filepath.Join(base, "d")
	os.Mkdir(dir, 0o755)
	read(t, state, dir)
	other := filepath.Join(base, "o")
	os.Mkdir(other, 0o755)
	mustWrite(t, filepath.Join(other, "id_rsa"))
	os.Remove(dir)
	if err := os.Rename(other, dir); err != nil {
		t.Fatal(err)
	}
	if got, hit := read(t, state, dir); hit || len(got) != 1 {
		t.Fatalf("hit %v, %v; want a read with [id_rsa]", hit, got)
	}
}

// TestRecentNotKept: a directory changed within Margin of the read is not
// remembered (a second change in the same clock tick could keep its ctime).
func TestRecentNotKept(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	for i := 0; i < 2; i++ {
		c := open(t, state, 0)
		c.ReadDir("v", dir, all)
		c.Save()
		if hits, _ := c.Stats(); hits != 0 {
			t.Fatal("a directory changed just now was answered from the cache")
		}
	}
}

// TestKeep: only kept entries come back, from a read and from the cache
// alike, with the total count.
func TestKeep(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	for _, n := range []string{"a", "b", ".env"} {
		mustWrite(t, filepath.Join(dir, n))
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	keep := func(n string, t fs.FileMode) bool { return t.IsDir() || n == ".env" }
	for i := 0; i < 2; i++ {
		c := open(t, state, time.Hour)
		ents, total, _, err := c.ReadDir("v", dir, keep)
		if err != nil || total != 4 || len(ents) != 2 {
			t.Fatalf("run %d: %v total %d err %v", i, names(ents), total, err)
		}
		for _, e := range ents {
			if (e.Name() == "sub") != e.IsDir() {
				t.Errorf("run %d: %s has type %v", i, e.Name(), e.Type())
			}
		}
		c.Save()
	}
}

// TestViews: a record of one view does not answer another.
func TestViews(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(dir, "a"))
	c := open(t, state, time.Hour)
	c.ReadDir("v1", dir, func(string, fs.FileMode) bool { return false })
	c.Save()
	c = open(t, state, time.Hour)
	ents, _, _, _ := c.ReadDir("v2", dir, all)
	if hits, _ := c.Stats(); hits != 0 || len(ents) != 1 {
		t.Fatalf("view v2 answered by v1's record: %v", names(ents))
	}
}

// TestFailClosed: a cache file that is corrupt, truncated, of another view,
// a symlink, writable by others or owned by another user is ignored (the
// directory is read) and rewritten.
func TestFailClosed(t *testing.T) {
	damage := map[string]func(t *testing.T, c *Cache, file string){
		"flipped byte": func(t *testing.T, c *Cache, f string) {
			b, _ := os.ReadFile(f)
			b[len(magic)+3] ^= 1
			os.WriteFile(f, b, 0o600)
		},
		"truncated": func(t *testing.T, c *Cache, f string) {
			b, _ := os.ReadFile(f)
			os.WriteFile(f, b[:len(b)-1], 0o600)
		},
		"empty": func(t *testing.T, c *Cache, f string) { os.WriteFile(f, nil, 0o600) },
		"other view": func(t *testing.T, c *Cache, f string) {
			b, _ := os.ReadFile(c.fileOf("other"))
			os.WriteFile(f, b, 0o600)
		},
		"symlink": func(t *testing.T, c *Cache, f string) {
			os.Rename(f, f+".real")
			os.Symlink(f+".real", f)
		},
		"group-writable": func(t *testing.T, c *Cache, f string) { os.Chmod(f, 0o620) },
		"hard link":      func(t *testing.T, c *Cache, f string) { os.Link(f, f+".2") },
		"foreign owner":  func(t *testing.T, c *Cache, f string) { c.uid++ },
		// Opened without blocking (no writer ever comes), refused by type.
		"fifo": func(t *testing.T, c *Cache, f string) {
			os.Remove(f)
			if err := syscall.Mkfifo(f, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"directory": func(t *testing.T, c *Cache, f string) {
			os.Remove(f)
			os.Mkdir(f, 0o700)
		},
	}
	for name, fn := range damage {
		t.Run(name, func(t *testing.T) {
			state, dir := t.TempDir(), t.TempDir()
			c := open(t, state, time.Hour)
			c.ReadDir("v", dir, all)
			c.ReadDir("other", dir, all)
			c.Save()
			// A record that would hide a planted file, were it trusted.
			mustWrite(t, filepath.Join(dir, ".env"))
			c = open(t, state, time.Hour)
			f := c.fileOf("v")
			b, _ := os.ReadFile(f)
			recs, err := Parse(b, "v")
			if err != nil || len(recs) != 1 {
				t.Fatalf("the cache file did not hold the record (the test is broken): %v", err)
			}
			key, _ := lstatKey(dir)
			recs[dir].Key = key // as if the planted file had not changed dir
			b, _ = Encode("v", recs)
			os.WriteFile(f, b, 0o600)
			if ents, _, _, _ := open(t, state, time.Hour).ReadDir("v", dir, all); len(ents) != 0 {
				t.Fatalf("the forged record was not trusted (the test is broken): %v", names(ents))
			}
			fn(t, c, f)
			ents, _, _, err := c.ReadDir("v", dir, all)
			if err != nil || len(ents) != 1 {
				t.Fatalf("%s cache file trusted: %v %v", name, names(ents), err)
			}
			if hits, _ := c.Stats(); hits != 0 {
				t.Fatalf("%s cache file answered", name)
			}
		})
	}
}

// TestPrivateDir: a cache directory writable by others, or not a
// directory, turns the cache off; reads still work.
func TestPrivateDir(t *testing.T) {
	base, dir := t.TempDir(), t.TempDir()
	state := filepath.Join(base, "dc")
	os.Mkdir(state, 0o777)
	os.Chmod(state, 0o777)
	c, err := Open(state)
	if err == nil {
		t.Fatal("a cache directory writable by all was accepted")
	}
	mustWrite(t, filepath.Join(dir, "a"))
	for i := 0; i < 2; i++ {
		if ents, _, _, err := c.ReadDir("v", dir, all); err != nil || len(ents) != 1 {
			t.Fatalf("read through an off cache: %v %v", names(ents), err)
		}
		c.Save()
	}
	if ents, _ := os.ReadDir(state); len(ents) != 0 {
		t.Fatalf("an off cache wrote %v", ents)
	}
	link := filepath.Join(base, "link")
	os.Symlink(t.TempDir(), link)
	if _, err := Open(link); err == nil {
		t.Fatal("a symlinked cache directory was accepted")
	}
}

// TestErrors: a missing or unreadable directory gives os's errors.
func TestErrors(t *testing.T) {
	c := open(t, t.TempDir(), time.Hour)
	if _, _, _, err := c.ReadDir("v", filepath.Join(t.TempDir(), "nope"), all); !os.IsNotExist(err) {
		t.Fatalf("missing directory: %v", err)
	}
}

// TestSaveDropsUnused: a directory not looked up in a run leaves the file.
func TestSaveDropsUnused(t *testing.T) {
	state, a, b := t.TempDir(), t.TempDir(), t.TempDir()
	c := open(t, state, time.Hour)
	c.ReadDir("v", a, all)
	c.ReadDir("v", b, all)
	c.Save()
	c = open(t, state, time.Hour)
	c.ReadDir("v", a, all)
	c.Save()
	data, _ := os.ReadFile(c.fileOf("v"))
	recs, err := Parse(data, "v")
	if err != nil || len(recs) != 1 || recs[a] == nil {
		t.Fatalf("after a run that read only %s: %v %v", a, recs, err)
	}
}

// TestReadMatchesOS: the getdents reader lists what os.File.ReadDir lists
// (names, types, how many), over many getdents buffers of long names, and
// keeps exactly what keep selects, with names that outlive the buffer.
func TestReadMatchesOS(t *testing.T) {
	d := t.TempDir()
	for i := 0; i < 1500; i++ {
		name := fmt.Sprintf("%03d-%s", i, strings.Repeat("n", i%250))
		mustWrite(t, filepath.Join(d, name))
	}
	if err := os.Mkdir(filepath.Join(d, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(d, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(d, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadDir(d)
	if err != nil {
		t.Fatal(err)
	}
	wantT := map[string]fs.FileMode{}
	for _, e := range want {
		wantT[e.Name()] = e.Type()
	}
	for _, c := range []struct {
		name string
		keep func(string, fs.FileMode) bool
	}{
		{"all", all},
		{"none", func(string, fs.FileMode) bool { return false }},
		{"dirs and long names", func(n string, t fs.FileMode) bool { return t.IsDir() || len(n) > 200 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, total, dev, err := Read(d, c.keep)
			if err != nil {
				t.Fatal(err)
			}
			if total != len(want) {
				t.Errorf("total %d, want %d", total, len(want))
			}
			var st syscall.Stat_t
			if err := syscall.Stat(d, &st); err != nil || dev != uint64(st.Dev) {
				t.Errorf("device %d, want %d (%v)", dev, st.Dev, err)
			}
			n := 0
			for _, e := range want {
				if c.keep(e.Name(), e.Type()) {
					n++
				}
			}
			if len(got) != n {
				t.Errorf("kept %d, want %d", len(got), n)
			}
			for i := 0; i < 3; i++ {
				Read(d, all) // reuses the buffer: a kept name must not change
			}
			for _, e := range got {
				wt, ok := wantT[e.Name()]
				if !ok || wt != e.Type() || e.IsDir() != wt.IsDir() {
					t.Errorf("%q: type %v, want %v (listed by os: %t)", e.Name(), e.Type(), wt, ok)
				}
			}
		})
	}
	if _, _, _, err := Read(filepath.Join(d, "missing"), all); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing directory: %v, want ErrNotExist", err)
	}
	if _, _, _, err := Read(filepath.Join(d, "fifo"), all); err == nil {
		t.Error("a fifo read as a directory")
	}
}

// TestPrefetchIsTheViews: the directories of a big view are stat'ed in
// parallel when a pass first uses it, and those stats serve that view
// only: another view (the exit check's, after the plan's walk and the
// agent's run) stats a directory again, so a file planted after the
// prefetch is found. (Save also drops a pass's stats; that is not seen
// from outside, since Save drops the records the pass did not use.)
func TestPrefetchIsTheViews(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	for i := 0; i < PrefetchMin+10; i++ {
		if err := os.Mkdir(filepath.Join(root, fmt.Sprintf("d%03d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sub := func(i int) string { return filepath.Join(root, fmt.Sprintf("d%03d", i)) }
	walk := func(c *Cache) {
		if _, _, _, err := c.ReadDir("v", root, all); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < PrefetchMin+10; i++ {
			c.ReadDir("v", sub(i), all)
		}
	}
	c := open(t, state, time.Hour)
	walk(c)
	c.ReadDir("w", sub(2), all) // a small view: no prefetch of its own
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c = open(t, state, time.Hour)
	walk(c)
	if hits, reads := c.Stats(); hits != PrefetchMin+11 || reads != 0 {
		t.Fatalf("an unchanged tree: %d hits, %d reads (the test is broken)", hits, reads)
	}
	c = open(t, state, time.Hour)
	c.ReadDir("v", root, all) // the pass's first use of v: its prefetch
	pre := 0
	c.views["v"].wg.Wait() // the walk goes on while they are taken
	for _, x := range c.views["v"].pre {
		if x != preNone {
			pre++
		}
	}
	if pre < PrefetchMin {
		t.Fatalf("no prefetch (the test is broken)")
	}
	mustWrite(t, filepath.Join(sub(2), ".env"))
	if ents, _, _, _ := c.ReadDir("w", sub(2), all); len(ents) != 1 {
		t.Errorf("a file planted after another view's prefetch is not seen: %v", names(ents))
	}
}

// TestReadDirNoFollow: ReadDirNoFollow answers for a directory of its own,
// from the cache when it is unchanged, and never for a symlink at its path,
// even to a directory and even after the directory it replaced was kept:
// its caller (fsrules' home listings) decides from the names what is
// absent, and a link's target's names would answer for another directory.
func TestReadDirNoFollow(t *testing.T) {
	state, base := t.TempDir(), t.TempDir()
	dir, other := filepath.Join(base, "d"), filepath.Join(base, "other")
	for _, d := range []string{dir, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, filepath.Join(dir, "a"))
	mustWrite(t, filepath.Join(other, "b"))
	for i := range 2 {
		c := open(t, state, time.Hour)
		ents, _, _, err := c.ReadDirNoFollow("v", dir, all)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(ents); len(got) != 1 || got[0] != "a" {
			t.Fatalf("run %d: names %q, want [a]", i, got)
		}
		if err := c.Save(); err != nil {
			t.Fatal(err)
		}
		if hits, _ := c.Stats(); (hits == 1) != (i == 1) {
			t.Fatalf("run %d: %d hits", i, hits)
		}
	}
	if err := os.Rename(dir, filepath.Join(base, "old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, dir); err != nil {
		t.Fatal(err)
	}
	c := open(t, state, time.Hour)
	if ents, _, _, err := c.ReadDirNoFollow("v", dir, all); err == nil {
		t.Errorf("a symlink to a directory listed: %q", names(ents))
	}
	if ents, _, _, err := c.ReadDir("v", dir, all); err != nil || len(ents) != 1 || ents[0].Name() != "b" {
		t.Errorf("ReadDir (following the link): %q, %v; want [b]", names(ents), err)
	}
	var nilCache *Cache
	if ents, _, _, err := nilCache.ReadDirNoFollow("v", dir, all); err == nil {
		t.Errorf("no cache: a symlink to a directory listed: %q", names(ents))
	}
}
