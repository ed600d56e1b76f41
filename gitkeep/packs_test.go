//go:build linux

package gitkeep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// packsOf returns the base names (pack-X) of dir's packs.
func packsOf(t *testing.T, dir string) []string {
	t.Helper()
	ps, _ := filepath.Glob(filepath.Join(dir, "pack-*.idx"))
	var out []string
	for _, p := range ps {
		out = append(out, strings.TrimSuffix(filepath.Base(p), ".idx"))
	}
	return out
}

// TestKeepPacksPruneCounts: a start's pack hard-linked into the store
// still counts for the prune (its second name is the store's, no
// sandbox's): after the host's gc the copies it holds are freed. Seen
// failing with a link count of 1 as the only rule (openPack): nothing
// freed (Packed 0).
func TestKeepPacksPruneCounts(t *testing.T) {
	ws, git := gitRepo(t)
	g := filepath.Join(ws, ".git")
	st := Store(t.TempDir(), g)
	lock, res := start(t, st, g)
	n, _ := copies(t, st)
	end(t, lock, st, g, res, time.Now())
	git("gc", "-q")
	lock, res = start(t, st, g)
	kept, cross, err := KeepPacks(st, g, 256, time.Now().Add(time.Hour))
	if err != nil || cross || kept != 1 {
		t.Fatalf("KeepPacks: %d kept, crossFS %v, %v", kept, cross, err)
	}
	for _, b := range packsOf(t, filepath.Join(g, "objects", "pack")) {
		for _, ext := range []string{".idx", ".pack"} {
			a, _ := os.Lstat(filepath.Join(g, "objects", "pack", b+ext))
			k, err := os.Lstat(filepath.Join(st, "objects", "pack", b+ext))
			if err != nil || !os.SameFile(a, k) {
				t.Fatalf("%s%s not linked in the store: %v", b, ext, err)
			}
		}
	}
	if p := end(t, lock, st, g, res, time.Now()); p.Packed != n || p.NoPacks != nil {
		t.Fatalf("after the gc, with the pack kept: %+v, want %d packed", p, n)
	}
	// A second start links nothing new.
	if kept, _, err := KeepPacks(st, g, 256, time.Now().Add(time.Hour)); err != nil || kept != 0 {
		t.Fatalf("second KeepPacks: %d, %v", kept, err)
	}
}

// TestKeepPacksRefused: a pack with another name in the workspace (the
// agent may write it through that name), one an end named unchecked (it
// may lie), one past the read-only cap, and a name the store keeps with
// other bytes (never replaced) are not kept.
func TestKeepPacksRefused(t *testing.T) {
	ws, git := gitRepo(t)
	g := filepath.Join(ws, ".git")
	git("gc", "-q")
	pd := filepath.Join(g, "objects", "pack")
	b := packsOf(t, pd)[0]

	st := Store(t.TempDir(), g)
	os.MkdirAll(filepath.Join(st, "objects"), 0o700)
	if kept, _, _ := KeepPacks(st, g, 0, time.Now().Add(time.Hour)); kept != 0 {
		t.Errorf("past the cap: %d kept", kept)
	}
	if err := MarkUnchecked(st, []string{filepath.Join(pd, b)}); err != nil {
		t.Fatal(err)
	}
	if kept, _, _ := KeepPacks(st, g, 256, time.Now().Add(time.Hour)); kept != 0 {
		t.Errorf("an unchecked pack: %d kept", kept)
	}

	st2 := Store(t.TempDir(), g)
	os.MkdirAll(filepath.Join(st2, "objects", "pack"), 0o700)
	os.WriteFile(filepath.Join(st2, "objects", "pack", b+".idx"), []byte("older"), 0o600)
	if kept, _, _ := KeepPacks(st2, g, 256, time.Now().Add(time.Hour)); kept != 0 {
		t.Errorf("a name the store has: %d kept", kept)
	}
	st4 := Store(t.TempDir(), g)
	if kept, _, _ := KeepPacks(st4, g, 256, time.Now().Add(-time.Hour)); kept != 0 {
		t.Errorf("a pack changed after since: %d kept", kept)
	}
	// Another run holds the store: not alone.
	l, err := Lock(st4)
	if err != nil {
		t.Fatal(err)
	}
	if Alone(st4) {
		t.Errorf("Alone with another run's lock held")
	}
	l.Close()
	if !Alone(st4) || !Alone(filepath.Join(t.TempDir(), "none")) {
		t.Errorf("not Alone with no lock held")
	}
	if got, _ := os.ReadFile(filepath.Join(st2, "objects", "pack", b+".idx")); string(got) != "older" {
		t.Errorf("the store's file was replaced")
	}

	other := filepath.Join(ws, "other.pack")
	if err := os.Link(filepath.Join(pd, b+".pack"), other); err != nil {
		t.Fatal(err)
	}
	st3 := Store(t.TempDir(), g)
	if kept, _, _ := KeepPacks(st3, g, 256, time.Now().Add(time.Hour)); kept != 0 {
		t.Errorf("a pack with another name: %d kept", kept)
	}
	os.Remove(other)
	if kept, _, _ := KeepPacks(st3, g, 256, time.Now().Add(time.Hour)); kept != 1 {
		t.Errorf("the same pack alone: %d kept, want 1", kept)
	}
}

// TestPrunePacks: a kept pack the workspace still has stays whatever its
// age; one the host's gc deleted goes Age after (its ctime), or past the
// byte bound.
func TestPrunePacks(t *testing.T) {
	ws, git := gitRepo(t)
	g := filepath.Join(ws, ".git")
	git("gc", "-q")
	st := Store(t.TempDir(), g)
	if kept, _, err := KeepPacks(st, g, 256, time.Now().Add(time.Hour)); kept != 1 || err != nil {
		t.Fatalf("KeepPacks: %d, %v", kept, err)
	}
	sp := filepath.Join(st, "objects", "pack")
	later := time.Now().Add(Age + time.Hour)
	if a, o, err := prunePacks(st, later, 0); a+o != 0 || err != nil {
		t.Fatalf("a pack the workspace has: %d aged, %d over, %v", a, o, err)
	}
	os.WriteFile(filepath.Join(ws, "n"), []byte("n\n"), 0o644)
	git("add", "n")
	git("commit", "-q", "-m", "n")
	git("gc", "-q") // a new pack; the kept one gone from the workspace
	if a, o, err := prunePacks(st, time.Now(), MaxKeptPackBytes); a+o != 0 || err != nil || len(packsOf(t, sp)) != 1 {
		t.Fatalf("a pack gone a moment ago: %d aged, %d over, %v", a, o, err)
	}
	if a, o, err := prunePacks(st, time.Now(), 1); o != 1 || a != 0 || err != nil || len(packsOf(t, sp)) != 0 {
		t.Fatalf("past the bytes: %d aged, %d over, %v; left %v", a, o, err, packsOf(t, sp))
	}
	if _, err := os.Lstat(filepath.Join(sp, packsOf(t, filepath.Join(g, "objects", "pack"))[0]+".pack")); err == nil {
		t.Fatal("the workspace's new pack is in the store without a start")
	}
	if kept, _, _ := KeepPacks(st, g, 256, time.Now().Add(time.Hour)); kept != 1 {
		t.Fatalf("the new pack: %d kept", kept)
	}
	os.WriteFile(filepath.Join(ws, "m"), []byte("m\n"), 0o644)
	git("add", "m")
	git("commit", "-q", "-m", "m")
	git("gc", "-q")
	if a, o, err := prunePacks(st, later, MaxKeptPackBytes); a != 1 || o != 0 || err != nil || len(packsOf(t, sp)) != 0 {
		t.Fatalf("gone past Age: %d aged, %d over, %v; left %v", a, o, err, packsOf(t, sp))
	}
}

// TestSharedLinkCopied: a loose object kept as a link (past a start's
// copy budget) whose workspace name then goes while another name keeps
// the file (a `git clone --local`'s link, in a writable tree) is copied
// at a later start: before, it stayed a link for good, and the agent
// wrote it in place through the other name. Seen failing on main
// (e413f85): the store's object still had 2 links after the second start,
// and the write through the other name changed it.
func TestSharedLinkCopied(t *testing.T) {
	ws, _ := gitRepo(t)
	g := filepath.Join(ws, ".git")
	st := Store(t.TempDir(), g)
	lock, err := Lock(st)
	if err != nil {
		t.Fatal(err)
	}
	zero := testBudget()
	zero.Bytes = 0 // every object linked
	res, err := Keep(st, g, &zero)
	if err != nil || res.Linked == 0 || res.Copied != 0 {
		t.Fatalf("Keep past the budget: %+v, %v", res, err)
	}
	objs, _ := filepath.Glob(filepath.Join(g, "objects", "??", "*"))
	obj := objs[0]
	id := filepath.Base(filepath.Dir(obj)) + filepath.Base(obj)
	kept := filepath.Join(st, "objects", id[:2], id[2:])
	want, _ := os.ReadFile(kept)
	other := filepath.Join(ws, "other")
	if err := os.Link(obj, other); err != nil {
		t.Fatal(err)
	}
	os.Remove(obj)
	end(t, lock, st, g, res, time.Now())
	lock, res = start(t, st, g)
	end(t, lock, st, g, res, time.Now())
	os.Chmod(other, 0o644)
	os.WriteFile(other, []byte("written in place"), 0o644)
	if got, _ := os.ReadFile(kept); string(got) != string(want) {
		t.Fatalf("the store's %s changed through the other name (still a link)", id)
	}
}

// TestMarkUncheckedNoFollow: no store ("") records nothing (a relative
// name is the caller's working directory: the workspace), and a link left
// at the record's temporary name is replaced, not written through. Seen
// failing on main (9f4d378): the record was written in the working
// directory, through the link, into the file it named.
func TestMarkUncheckedNoFollow(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("safe\n"), 0o644)
	os.Symlink(victim, uncheckedFile+".tmp")
	if err := MarkUnchecked("", []string{"/x/pack-a"}); err == nil {
		t.Error("MarkUnchecked with no store: no error")
	}
	if _, err := os.Lstat(filepath.Join(cwd, uncheckedFile)); err == nil {
		t.Error("MarkUnchecked with no store wrote in the working directory")
	}
	store := t.TempDir()
	os.Symlink(victim, filepath.Join(store, uncheckedFile+".tmp"))
	if err := MarkUnchecked(store, []string{"/x/pack-a"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "safe\n" {
		t.Errorf("written through the link: the victim holds %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(store, uncheckedFile)); string(b) != "pack-a\n" {
		t.Errorf("the record holds %q", b)
	}
}

// TestMarkUncheckedPastBound: a record past its bound reads as "every
// pack unchecked"; marking more packs must not take that back. It was
// written again with the new names alone (the old bytes, past the bound,
// were not read), and the earlier unchecked packs read as checked.
func TestMarkUncheckedPastBound(t *testing.T) {
	store := t.TempDir()
	big := strings.Repeat("pack-"+strings.Repeat("a", 40)+"\n", maxUnchecked/46+2)
	if err := os.WriteFile(filepath.Join(store, uncheckedFile), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, all := readUnchecked(store); !all {
		t.Fatal("the record past its bound does not read as every pack unchecked")
	}
	if err := MarkUnchecked(store, []string{"/x/pack-b"}); err != nil {
		t.Fatal(err)
	}
	if _, _, all := readUnchecked(store); !all {
		t.Error("marking one more pack made a record past its bound read as a short list: the earlier unchecked packs count as checked")
	}
}

// TestDropKept: a kept pack the end found lying leaves the store; one it
// could not read through leaves only while the store has unchecked packs
// on record; a store pack of the same name that is another file stays.
func TestDropKept(t *testing.T) {
	ws, git := gitRepo(t)
	g := filepath.Join(ws, ".git")
	git("gc", "-q")
	pd := filepath.Join(g, "objects", "pack")
	b := packsOf(t, pd)[0]
	base := filepath.Join(pd, b)
	keep := func() string {
		st := Store(t.TempDir(), g)
		os.MkdirAll(filepath.Join(st, "objects"), 0o700)
		if kept, _, err := KeepPacks(st, g, 256, time.Now().Add(time.Hour)); err != nil || kept != 1 {
			t.Fatalf("KeepPacks: %d, %v", kept, err)
		}
		return st
	}
	st := keep()
	if got, err := DropKept(st, nil, []string{base}); err != nil || len(got) != 0 || len(packsOf(t, filepath.Join(st, "objects", "pack"))) != 1 {
		t.Errorf("unread, no unchecked record: dropped %v (%v), want none", got, err)
	}
	if got, err := DropKept(st, []string{base}, nil); err != nil || len(got) != 1 || len(packsOf(t, filepath.Join(st, "objects", "pack"))) != 0 {
		t.Errorf("lying: dropped %v (%v), want %s", got, err, b)
	}
	st = keep()
	if err := MarkUnchecked(st, []string{"pack-0000000000000000000000000000000000000000"}); err != nil {
		t.Fatal(err)
	}
	if got, err := DropKept(st, nil, []string{base}); err != nil || len(got) != 1 || len(packsOf(t, filepath.Join(st, "objects", "pack"))) != 0 {
		t.Errorf("unread with an unchecked record: dropped %v (%v), want %s", got, err, b)
	}
	st = Store(t.TempDir(), g)
	os.MkdirAll(filepath.Join(st, "objects", "pack"), 0o700)
	for _, ext := range []string{".idx", ".pack"} {
		os.WriteFile(filepath.Join(st, "objects", "pack", b+ext), []byte("the store's"), 0o600)
	}
	if got, err := DropKept(st, []string{base}, nil); err != nil || len(got) != 0 {
		t.Errorf("another file of the same name: dropped %v (%v)", got, err)
	}
	if _, err := DropKept("", []string{base}, nil); err == nil {
		t.Errorf("no store: no error")
	}
}

// TestUncheckedUnkeptNotKept: an end records the pack it could not read of
// a repository without a store; the start that later keeps the repository
// does not link that pack into the store (on main it did: its start kept
// it as the user's), and the store made for the record has no age of its
// own (gitkeep5).
func TestUncheckedUnkeptNotKept(t *testing.T) {
	ws, git := gitRepo(t)
	git("repack", "-q", "-a", "-d")
	gd := filepath.Join(ws, ".git")
	ps, _ := filepath.Glob(filepath.Join(gd, "objects", "pack", "pack-*.idx"))
	if len(ps) != 1 {
		t.Fatalf("packs: %v", ps)
	}
	base := strings.TrimSuffix(ps[0], ".idx")
	st := filepath.Join(t.TempDir(), "store")
	if err := MarkUncheckedUnkept(st, gd, []string{base}); err != nil {
		t.Fatal(err)
	}
	if _, ok := KeptSince(st, gd); ok {
		t.Fatal("a store made for an unchecked record alone has an age")
	}
	b := NewBudget()
	if _, err := Keep(st, gd, &b); err != nil {
		t.Fatal(err)
	}
	kept, _, err := KeepPacks(st, gd, 100, time.Now().Add(time.Hour))
	if err != nil || kept != 0 {
		t.Fatalf("KeepPacks kept %d (%v): the pack an end could not read is linked into the store", kept, err)
	}
	if _, err := os.Lstat(filepath.Join(st, "objects", "pack", filepath.Base(base)+".idx")); err == nil {
		t.Fatal("the unread pack is in the store")
	}
}

// TestPacksKept: true once every pack of the git dir is the store's link
// of its name; false for one the start did not keep (changed after the
// look, of two names); a pack an end recorded unread does not count.
func TestPacksKept(t *testing.T) {
	ws, git := gitRepo(t)
	g := filepath.Join(ws, ".git")
	git("repack", "-q", "-a", "-d")
	st := Store(t.TempDir(), g)
	if PacksKept(st, g) {
		t.Fatal("PacksKept before KeepPacks")
	}
	if kept, _, err := KeepPacks(st, g, 256, time.Now().Add(-time.Hour)); err != nil || kept != 0 || PacksKept(st, g) {
		t.Fatalf("a pack changed after the look: %d kept, %v; PacksKept %v", kept, err, PacksKept(st, g))
	}
	if kept, _, err := KeepPacks(st, g, 256, time.Now().Add(time.Hour)); err != nil || kept != 1 || !PacksKept(st, g) {
		t.Fatalf("KeepPacks: %d kept, %v; PacksKept %v", kept, err, PacksKept(st, g))
	}
	// An agent's pack an end could not read: never kept, not counted.
	un := filepath.Join(g, "objects", "pack", "pack-"+strings.Repeat("cd", 20))
	for _, ext := range []string{".idx", ".pack"} {
		os.WriteFile(un+ext, []byte("x"), 0o444)
	}
	if PacksKept(st, g) {
		t.Fatal("PacksKept with a pack not in the store")
	}
	if err := MarkUnchecked(st, []string{un}); err != nil {
		t.Fatal(err)
	}
	if !PacksKept(st, g) {
		t.Fatal("a pack recorded unread counts against PacksKept")
	}
	// The user's pack of two names is not kept (KeepPacks).
	// Why a set: the names sort by their hashes, so the unread pack may
	// come before the user's; taking the first name as the user's pack
	// linked the kept one, and about one run in ten failed (CI on 3ef4fe9).
	old := map[string]bool{}
	for _, b := range packsOf(t, filepath.Join(g, "objects", "pack")) {
		old[b] = true
	}
	os.Remove(un + ".idx")
	os.Remove(un + ".pack")
	git("commit", "-q", "--allow-empty", "-m", "more")
	git("repack", "-q", "-d")
	var fresh []string
	for _, b := range packsOf(t, filepath.Join(g, "objects", "pack")) {
		if !old[b] {
			fresh = append(fresh, b)
		}
	}
	if len(fresh) != 1 {
		t.Fatalf("repack made packs %v, want one", fresh)
	}
	if err := os.Link(filepath.Join(g, "objects", "pack", fresh[0]+".pack"), filepath.Join(ws, "other.pack")); err != nil {
		t.Fatal(err)
	}
	KeepPacks(st, g, 256, time.Now().Add(time.Hour))
	if PacksKept(st, g) {
		t.Fatal("PacksKept with a pack of two names (not kept)")
	}
	// The unread record past its bound: nothing new is kept, so the
	// end's note must not say every pack is (review20b: this case passed
	// with the check taken out).
	os.Remove(filepath.Join(ws, "other.pack"))
	KeepPacks(st, g, 256, time.Now().Add(time.Hour))
	if !PacksKept(st, g) {
		t.Fatal("every pack kept: PacksKept false")
	}
	big := strings.Repeat("pack-"+strings.Repeat("a", 40)+"\n", maxUnchecked/46+2)
	if err := os.WriteFile(filepath.Join(st, uncheckedFile), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if PacksKept(st, g) {
		t.Fatal("PacksKept with the unread record past its bound")
	}
}

// TestSharedLinkLargeObjectKept: a shared link (the workspace's name
// gone, the object kept by another name) whose object is past
// MaxCopyObject inflated in a small file (a large file of zeros, which
// git compresses to a few KiB) stays a link, as keepOne keeps one. Seen
// failing on 3865889 and bbb529b: copyShared took it for one written in
// place and removed the store's link, and the store held nothing of the
// object.
func TestSharedLinkLargeObjectKept(t *testing.T) {
	ws, git := gitRepo(t)
	g := filepath.Join(ws, ".git")
	zeros := filepath.Join(t.TempDir(), "zeros")
	if err := os.WriteFile(zeros, make([]byte, MaxCopyObject+1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(git("hash-object", "-w", zeros))
	obj := filepath.Join(g, "objects", id[:2], id[2:])
	if fi, err := os.Stat(obj); err != nil || fi.Size() > MaxCopyObject {
		t.Fatalf("the object's file: %v (%v): not a small file", fi, err)
	}
	st := Store(t.TempDir(), g)
	lock, res := start(t, st, g)
	kept := filepath.Join(st, "objects", id[:2], id[2:])
	if nlink, _, ok := linkInfo(mustLstat(t, kept)); !ok || nlink < 2 {
		t.Fatalf("the start did not link the large object (%d links)", nlink)
	}
	other := filepath.Join(ws, "other")
	if err := os.Link(obj, other); err != nil {
		t.Fatal(err)
	}
	os.Remove(obj)
	end(t, lock, st, g, res, time.Now())
	lock, res = start(t, st, g) // the shared link's turn to be copied
	end(t, lock, st, g, res, time.Now())
	if _, err := os.Lstat(kept); err != nil {
		t.Errorf("the store's link of the large object went: %v", err)
	}
}

func mustLstat(t *testing.T, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}
