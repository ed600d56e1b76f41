package fsrules

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/dircache"
)

// hostMounts reads this process's mount table as the plan does.
func hostMounts(t *testing.T) []Mount {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	return ParseMountinfo(b)
}

// dinoDir returns a fresh directory on a file system of dinoFS: the test's
// own temporary directory, or one in /dev/shm (tmpfs) when that is not one.
func dinoDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(d, &st); err != nil {
		t.Fatal(err)
	}
	switch st.Type {
	case 0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0xF2F52010: // ext2/3/4, xfs, btrfs, tmpfs, f2fs
		return d
	}
	shm, err := os.MkdirTemp("/dev/shm", "jail-fsrules-")
	if err != nil {
		t.Fatalf("no directory on a file system with trusted d_ino: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	return shm
}

// TestOtherNamesStatsOnlyNamedInodes: with the mount table, the walk for a
// pack's other names stats only the entries that name the pack's inode
// (a workspace of 50,000 files took 150 ms a start when each was
// stat'ed), and finds the same names as a walk that stats every file.
func TestOtherNamesStatsOnlyNamedInodes(t *testing.T) {
	base := dinoDir(t)
	ws, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
	for d := range 20 {
		dir := filepath.Join(ws, fmt.Sprintf("d%02d", d))
		must(t, os.MkdirAll(dir, 0o755))
		for f := range 100 {
			must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", f)), nil, 0o644))
		}
	}
	must(t, os.MkdirAll(out, 0o755))
	pack := filepath.Join(ws, "pack")
	must(t, os.WriteFile(pack, []byte("PACK"), 0o444))
	must(t, os.Link(pack, filepath.Join(out, "source")))                                  // a local clone's source: outside
	must(t, os.Link(pack, filepath.Join(ws, "d07", "planted")))                           // another name inside
	must(t, os.Link(filepath.Join(ws, "d03", "f001"), filepath.Join(ws, "d03", "other"))) // linked, not the pack
	var st syscall.Stat_t
	must(t, syscall.Stat(pack, &st))
	files := map[[2]uint64]string{{uint64(st.Dev), st.Ino}: pack}
	want := map[string]string{filepath.Join(ws, "d07", "planted"): pack}
	for _, tc := range []struct {
		name     string
		mounts   []Mount
		maxStats int64
	}{
		{"mount table", hostMounts(t), 10},
		{"no mount table", nil, 1 << 30},
	} {
		before := linkWalkStats.Load()
		got := OtherNames([]string{ws}, files, tc.mounts)
		stats := linkWalkStats.Load() - before
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: other names %v, want %v", tc.name, got, want)
		}
		if stats > tc.maxStats {
			t.Errorf("%s: %d entries stat'ed for one inode's names, want at most %d", tc.name, stats, tc.maxStats)
		}
		if tc.mounts == nil && stats < 2000 {
			t.Errorf("without the mount table %d entries stat'ed, want every file (2,000 and more)", stats)
		}
	}
}

// A file mounted over an entry is another inode than the entry's d_ino:
// the directory holding that mount point has every file stat'ed, so a
// pack mounted over a name in the tree is found there. The test
// re-executes itself in a new user and mount namespace to bind the file.
const envFileMount = "JAIL_FSRULES_TEST_FILEMOUNT"

func fileMountChild(base string) int {
	ws := filepath.Join(base, "ws")
	pack := filepath.Join(base, "pack")
	over := filepath.Join(ws, "sub", "victim")
	if err := syscall.Mount(pack, over, "", syscall.MS_BIND, ""); err != nil {
		fmt.Fprintln(os.Stderr, "bind:", err)
		return 3
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	var st syscall.Stat_t
	if err := syscall.Stat(pack, &st); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	got := OtherNames([]string{ws}, map[[2]uint64]string{{uint64(st.Dev), st.Ino}: pack}, ParseMountinfo(b))
	json.NewEncoder(os.Stdout).Encode(got)
	return 0
}

func TestOtherNamesFileMountedOverEntry(t *testing.T) {
	base := dinoDir(t)
	ws := filepath.Join(base, "ws")
	must(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "sub", "victim"), []byte("mine"), 0o644))
	pack := filepath.Join(base, "pack")
	must(t, os.WriteFile(pack, []byte("PACK"), 0o444))
	must(t, os.Link(pack, filepath.Join(base, "source"))) // two links: a name the walk reports
	out := inUserNS(t, envFileMount, base)
	var got map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if v := filepath.Join(ws, "sub", "victim"); got[v] != pack {
		t.Errorf("ATTACK WORKED: the pack mounted over %s was not found: %v", v, got)
	}
}

// TestOtherNamesKeptEqualsFresh: a start that reads only the directories
// changed since the last walk (othernames_linux.go) finds exactly what a
// whole walk finds, after each way another name of a protected file (a
// local clone's pack) can appear between two starts, every directory's
// mtime put back (utimes(2) sets it, never the ctime): linked into an
// unchanged directory, in a new directory deep in an unchanged tree, in a
// directory moved in from outside (its own subdirectory old), through a
// directory swapped for a symlink, and a file protected only now. The start
// before the change must have read nothing, or the case proves nothing.
func TestOtherNamesKeptEqualsFresh(t *testing.T) {
	type env struct{ base, ws, out, pack, pack2 string }
	cases := []struct {
		name   string
		change func(t *testing.T, e env)
		files  func(e env) []string // protected after the change (nil: the pack)
		want   []string             // other names, relative to base
	}{
		{"nothing changed", func(*testing.T, env) {}, nil, []string{"ws/b/deep/old"}},
		{"linked into an unchanged directory", func(t *testing.T, e env) {
			keepMtime(t, filepath.Join(e.ws, "a"), func() { must(t, os.Link(e.pack, filepath.Join(e.ws, "a/notes.txt"))) })
		}, nil, []string{"ws/a/notes.txt", "ws/b/deep/old"}},
		{"in a new directory deep in an unchanged tree", func(t *testing.T, e env) {
			keepMtime(t, filepath.Join(e.ws, "b/deep"), func() { must(t, os.Mkdir(filepath.Join(e.ws, "b/deep/n"), 0o755)) })
			keepMtime(t, filepath.Join(e.ws, "b/deep/n"), func() { must(t, os.Link(e.pack, filepath.Join(e.ws, "b/deep/n/c"))) })
		}, nil, []string{"ws/b/deep/n/c", "ws/b/deep/old"}},
		{"in a directory moved in, its subdirectory old", func(t *testing.T, e env) {
			keepMtime(t, filepath.Join(e.ws, "c"), func() { must(t, os.Rename(filepath.Join(e.out, "sub"), filepath.Join(e.ws, "c/sub"))) })
		}, nil, []string{"ws/b/deep/old", "ws/c/sub/inner/k"}},
		{"the old name removed", func(t *testing.T, e env) {
			keepMtime(t, filepath.Join(e.ws, "b/deep"), func() { must(t, os.Remove(filepath.Join(e.ws, "b/deep/old"))) })
		}, nil, nil},
		{"a directory swapped for a symlink to it", func(t *testing.T, e env) {
			keepMtime(t, e.ws, func() {
				must(t, os.Rename(filepath.Join(e.ws, "b"), filepath.Join(e.ws, "b2")))
				must(t, os.Symlink("b2", filepath.Join(e.ws, "b")))
			})
		}, nil, []string{"ws/b2/deep/old"}},
		{"a file protected only now", func(t *testing.T, e env) {}, func(e env) []string { return []string{e.pack, e.pack2} },
			[]string{"ws/b/deep/old", "ws/c/d/e/p2"}},
	}
	// Each case twice: alone, and after a walk of the trees through the
	// directory cache in the same pass, as the plan walks them first
	// (whose stats of the directories the check then uses: PassKey).
	envs := make([]env, 2*len(cases))
	for i := range envs {
		base := dinoDir(t)
		e := env{base, filepath.Join(base, "ws"), filepath.Join(base, "out"), filepath.Join(base, "pack"), filepath.Join(base, "pack2")}
		mk(t, e.ws, "a/x.go", "b/deep/y.go", "b/deep/z/w.go", "c/d/e/f.go")
		manyFiles(t, filepath.Join(e.ws, "many"), 200)
		must(t, os.WriteFile(e.pack, []byte("PACK"), 0o444))
		must(t, os.WriteFile(e.pack2, []byte("PACK2"), 0o444))
		must(t, os.Link(e.pack, filepath.Join(e.ws, "b/deep/old")))
		must(t, os.Link(e.pack2, filepath.Join(e.ws, "c/d/e/p2")))
		mk(t, e.out, "sub/inner/x")
		must(t, os.Link(e.pack, filepath.Join(e.out, "sub/inner/k")))
		envs[i] = e
	}
	// No record is made of a directory changed within dircache.Margin.
	time.Sleep(dircache.Margin + 100*time.Millisecond)
	mounts := hostMounts(t)
	for i := range envs {
		c, walked := cases[i%len(cases)], i >= len(cases)
		name := c.name
		if walked {
			name += ", after the plan's walk"
		}
		t.Run(name, func(t *testing.T) {
			e, state := envs[i], tmp(t)
			filesOf := func(paths []string) map[[2]uint64]string {
				m := map[[2]uint64]string{}
				for _, p := range paths {
					var st syscall.Stat_t
					must(t, syscall.Stat(p, &st))
					m[[2]uint64{uint64(st.Dev), st.Ino}] = p
				}
				return m
			}
			run := func(files map[[2]uint64]string) (map[string]string, int64) {
				dc, err := dircache.Open(state)
				must(t, err)
				if walked {
					walkCached(t, dc, e.ws)
				}
				before := otherNamesReads.Load()
				got := OtherNamesKept([]string{e.ws}, files, []byte("mounts"), mounts, dc)
				must(t, dc.Save())
				return got, otherNamesReads.Load() - before
			}
			files := filesOf([]string{e.pack})
			if _, reads := run(files); reads == 0 {
				t.Fatal("the first start read nothing")
			}
			if _, reads := run(files); reads != 0 {
				t.Fatalf("a start with nothing changed read %d directories: the test proves nothing", reads)
			}
			c.change(t, e)
			if c.files != nil {
				files = filesOf(c.files(e))
			}
			got, _ := run(files)
			fresh := OtherNames([]string{e.ws}, files, nil)
			if fmt.Sprint(got) != fmt.Sprint(fresh) {
				t.Errorf("the start after the change found %v, the whole walk %v", got, fresh)
			}
			var rel []string
			for p := range got {
				r, _ := filepath.Rel(e.base, p)
				rel = append(rel, r)
			}
			sort.Strings(rel)
			if fmt.Sprint(rel) != fmt.Sprint(c.want) {
				t.Errorf("ATTACK WORKED? other names %v, want %v", rel, c.want)
			}
			// And once more, unchanged since: the same answer.
			if again, _ := run(files); fmt.Sprint(again) != fmt.Sprint(fresh) {
				t.Errorf("the next start found %v, want %v", again, fresh)
			}
		})
	}
}

// TestOtherNamesKeptMountsChanged: a record of another mount table is not
// used (a mount over a name changes no directory): the start reads.
func TestOtherNamesKeptMountsChanged(t *testing.T) {
	base, state := dinoDir(t), tmp(t)
	ws, pack := filepath.Join(base, "ws"), filepath.Join(base, "pack")
	mk(t, ws, "a/x.go")
	files := linkedPack(t, base, pack)
	mounts := hostMounts(t)
	reads := func(mountinfo string) int64 {
		dc, err := dircache.Open(state)
		must(t, err)
		before := otherNamesReads.Load()
		OtherNamesKept([]string{ws}, files, []byte(mountinfo), mounts, dc)
		must(t, dc.Save())
		return otherNamesReads.Load() - before
	}
	reads("a table")
	if n := reads("a table"); n != 0 {
		t.Fatalf("unchanged: %d directories read", n)
	}
	if n := reads("another table"); n == 0 {
		t.Errorf("another mount table: the record was used")
	}
}

// walkCached reads every directory under root through dc (one view), as
// the plan's walk does before the other-names check.
func walkCached(t *testing.T, dc *dircache.Cache, root string) {
	t.Helper()
	ents, _, _, err := dc.ReadDir("walk", root, func(string, fs.FileMode) bool { return true })
	must(t, err)
	for _, e := range ents {
		if e.IsDir() {
			walkCached(t, dc, filepath.Join(root, e.Name()))
		}
	}
}

// TestOtherNamesKeptUsesPassStats: a start whose plan walked the trees
// through the directory cache stats no recorded directory a second time
// for the other-names check (2,800 lstats a start on the bench's tree): the
// walk's own stats of this pass say which are unchanged. A directory
// changed since is still read, and a stat of an earlier pass never used.
func TestOtherNamesKeptUsesPassStats(t *testing.T) {
	base, state := dinoDir(t), tmp(t)
	ws, pack := filepath.Join(base, "ws"), filepath.Join(base, "pack")
	for d := range 30 {
		mk(t, ws, fmt.Sprintf("d%02d/s/x.go", d))
	}
	files := linkedPack(t, base, pack)
	mounts := hostMounts(t)
	type counts struct{ reads, stats int64 }
	start := func(walk bool, between func(dc *dircache.Cache)) (map[string]string, counts) {
		dc, err := dircache.Open(state)
		must(t, err)
		if walk {
			walkCached(t, dc, ws)
		}
		if between != nil {
			between(dc)
		}
		r0, s0 := otherNamesReads.Load(), otherNamesStats.Load()
		got := OtherNamesKept([]string{ws}, files, []byte("mounts"), mounts, dc)
		c := counts{otherNamesReads.Load() - r0, otherNamesStats.Load() - s0}
		must(t, dc.Save())
		return got, c
	}
	start(true, nil)
	if _, c := start(false, nil); c.reads != 0 || c.stats < 61 {
		t.Fatalf("unchanged, no walk before: %+v, want no read and a stat of each of the 61 directories", c)
	}
	if _, c := start(true, nil); c.reads != 0 || c.stats != 0 {
		t.Errorf("unchanged, after the plan's walk: %+v, want no read and no stat of its own", c)
	}
	// A name made after the walk's stats but before the check is one the
	// walk missed too; made before the walk, the check reads its directory.
	planted := filepath.Join(ws, "d05", "s", "planted")
	keepMtime(t, filepath.Join(ws, "d05", "s"), func() { must(t, os.Link(pack, planted)) })
	if got, c := start(true, nil); got[planted] != pack || c.reads != 1 {
		t.Errorf("ATTACK WORKED? a name linked before the start: found %v, %d directories read; want it found, 1 read", got, c.reads)
	}
	// The stats of a pass that ended (Save) are not the next one's.
	gone := filepath.Join(ws, "d09", "s", "later")
	if got, _ := start(true, func(dc *dircache.Cache) {
		must(t, dc.Save()) // the pass is over: its stats are stale from here
		keepMtime(t, filepath.Join(ws, "d09", "s"), func() { must(t, os.Link(pack, gone)) })
	}); got[gone] != pack {
		t.Errorf("ATTACK WORKED: a name linked after a pass ended, before the check, was not found: %v", got)
	}
}

// linkedPack writes a pack at pack with a second link outside the trees
// (base/source: a local clone's source), waits until the trees' directories
// are older than the cache's margin, and returns the pack as the protected
// files.
func linkedPack(t *testing.T, base, pack string) map[[2]uint64]string {
	t.Helper()
	must(t, os.WriteFile(pack, []byte("PACK"), 0o444))
	must(t, os.Link(pack, filepath.Join(base, "source")))
	time.Sleep(dircache.Margin + 100*time.Millisecond)
	var st syscall.Stat_t
	must(t, syscall.Stat(pack, &st))
	return map[[2]uint64]string{{uint64(st.Dev), st.Ino}: pack}
}
