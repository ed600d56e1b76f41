package gitkeep

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	id1 = "1111111111111111111111111111111111111111"
	id2 = "2222222222222222222222222222222222222222"
)

// fakeRepo makes a git dir with three loose objects (blobs; their fan-out
// directories' mtimes an hour old) and refs: main loose, v1 packed, HEAD
// on main. It returns the git dir and the objects' paths.
func fakeRepo(t *testing.T) string {
	t.Helper()
	g := filepath.Join(t.TempDir(), ".git")
	old := time.Now().Add(-time.Hour)
	for _, body := range []string{"one\n", "two\n", "three\n"} {
		writeBlob(t, g, body)
	}
	os.MkdirAll(filepath.Join(g, "objects", "ab"), 0o755)
	os.WriteFile(filepath.Join(g, "objects", "ab", "tmp_obj_x"), nil, 0o644)
	ds, _ := filepath.Glob(filepath.Join(g, "objects", "??"))
	for _, d := range ds {
		os.Chtimes(d, old, old)
	}
	os.MkdirAll(filepath.Join(g, "refs", "heads"), 0o755)
	os.WriteFile(filepath.Join(g, "refs", "heads", "main"), []byte(id1+"\n"), 0o644)
	os.WriteFile(filepath.Join(g, "packed-refs"), []byte("# pack-refs with: peeled\n"+id2+" refs/tags/v1\n^"+id1+"\n"), 0o644)
	os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	return g
}

// looseBlob is the loose object file of a blob of body, and its id.
func looseBlob(body string) (string, []byte) {
	obj := fmt.Sprintf("blob %d\x00%s", len(body), body)
	sum := sha1.Sum([]byte(obj))
	var b bytes.Buffer
	z := zlib.NewWriter(&b)
	z.Write([]byte(obj))
	z.Close()
	return hex.EncodeToString(sum[:]), b.Bytes()
}

// writeBlob writes a blob of body into git dir g as git does (0444) and
// returns its path.
func writeBlob(t *testing.T, g, body string) string {
	t.Helper()
	id, b := looseBlob(body)
	p := filepath.Join(g, "objects", id[:2], id[2:])
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, b, 0o444); err != nil {
		t.Fatal(err)
	}
	return p
}

// objects lists the loose objects of a git dir or store.
func objects(dir string) []string {
	ps, _ := filepath.Glob(filepath.Join(dir, "objects", "??", "*"))
	var out []string
	for _, p := range ps {
		if n := filepath.Base(p); len(n) == 38 && isHex(n) {
			out = append(out, p)
		}
	}
	return out
}

// storePath is where store st keeps the object at workspace path p.
func storePath(st, p string) string {
	return filepath.Join(st, "objects", filepath.Base(filepath.Dir(p)), filepath.Base(p))
}

func TestKeepCopiesAndRecords(t *testing.T) {
	g := fakeRepo(t)
	st := Store(t.TempDir(), g)
	budget := testBudget()
	res, err := Keep(st, g, &budget)
	if err != nil || res.Copied != 3 || res.Linked != 0 || res.CrossFS || res.Full {
		t.Fatalf("Keep: %+v %v", res, err)
	}
	objs := objects(g)
	a, _ := os.Stat(objs[0])
	b, err := os.Stat(storePath(st, objs[0]))
	if err != nil || os.SameFile(a, b) {
		t.Fatalf("object not copied (%v): the same inode %v", err, err == nil)
	}
	if x, y := mustRead(t, objs[0]), mustRead(t, storePath(st, objs[0])); !bytes.Equal(x, y) {
		t.Fatal("the copy's bytes differ")
	}
	if ps, _ := filepath.Glob(filepath.Join(st, "objects", "*", "*tmp*")); len(ps) != 0 {
		t.Errorf("a tmp file was kept: %v", ps)
	}
	pr, _ := os.ReadFile(filepath.Join(st, "packed-refs"))
	want := id1 + " refs/heads/main\n" + id1 + " refs/jail/HEAD\n" + id2 + " refs/tags/v1\n"
	if string(pr) != want {
		t.Errorf("packed-refs:\n%s\nwant:\n%s", pr, want)
	}
	alt, _ := os.ReadFile(filepath.Join(st, "objects", "info", "alternates"))
	if string(alt) != filepath.Join(g, "objects")+"\n" {
		t.Errorf("alternates %q", alt)
	}

	// The agent deletes the objects and a ref; a new object lands. The
	// next start copies only the new one and keeps main recorded.
	for _, p := range objs {
		os.Remove(p)
	}
	os.Remove(filepath.Join(g, "refs", "heads", "main"))
	writeBlob(t, g, "four\n")
	res, err = Keep(st, g, &budget)
	if err != nil || res.Copied != 1 {
		t.Fatalf("second Keep: %+v %v", res, err)
	}
	for _, p := range objs {
		if _, err := os.Stat(storePath(st, p)); err != nil {
			t.Errorf("a kept object went with the workspace's: %v", err)
		}
	}
	if pr, _ := os.ReadFile(filepath.Join(st, "packed-refs")); !strings.Contains(string(pr), id1+" refs/heads/main\n") {
		t.Errorf("a deleted ref is no longer recorded:\n%s", pr)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestKeepOverwrittenInPlace (lane gitkeep3): the agent chmods a loose
// object and writes other bytes into the same inode (no unlink: the fan-out
// directory's mtime does not change). The store's copy keeps the start's
// bytes, and the object still verifies there. Seen failing on main
// (e4c1d18): the store's hard link was that inode, its bytes the agent's.
func TestKeepOverwrittenInPlace(t *testing.T) {
	g := fakeRepo(t)
	st := Store(t.TempDir(), g)
	budget := testBudget()
	if _, err := Keep(st, g, &budget); err != nil {
		t.Fatal(err)
	}
	p := objects(g)[0]
	orig := mustRead(t, p)
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(bytes.Repeat([]byte{'X'}, len(orig)), 0)
	f.Close()
	got := mustRead(t, storePath(st, p))
	if !bytes.Equal(got, orig) {
		t.Fatalf("the store's copy changed with the workspace's write in place: %q", got[:8])
	}
	id, _ := hex.DecodeString(filepath.Base(filepath.Dir(p)) + filepath.Base(p))
	if _, err := checkLoose(got, id); err != nil {
		t.Fatalf("the kept object does not verify: %v", err)
	}
	// The next start (the directory's mtime unchanged, or changed) keeps
	// the verified copy: a corrupt workspace object is not copied over it.
	os.Remove(filepath.Join(st, seenFile))
	budget = testBudget()
	if res, err := Keep(st, g, &budget); err != nil || res.Copied != 0 {
		t.Fatalf("next Keep: %+v %v", res, err)
	}
	if !bytes.Equal(mustRead(t, storePath(st, p)), orig) {
		t.Fatal("the next start replaced the kept copy")
	}
}

// TestKeepJunk (lane gitkeep3): files named like objects that are not the
// object of their name (random bytes, a zlib of no git header, a real
// object under another's name, a size with a leading zero, trailing
// bytes) are not kept: the agent cannot fill the state directory with
// them. Seen failing on main (e4c1d18): every one was linked.
func TestKeepJunk(t *testing.T) {
	g := filepath.Join(t.TempDir(), ".git")
	d := filepath.Join(g, "objects", "ab")
	os.MkdirAll(d, 0o755)
	z := func(s string) []byte {
		var b bytes.Buffer
		w := zlib.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.Bytes()
	}
	_, real := looseBlob("real\n")
	realID, _ := looseBlob("real\n")
	withTail := z(fmt.Sprintf("blob 5\x00real\nmore"))
	for i, b := range [][]byte{
		bytes.Repeat([]byte{0x55}, 4096),
		z("no header at all"),
		z("blob 05\x00real\n"),
		z("thing 5\x00real\n"),
		real,
		withTail,
	} {
		os.WriteFile(filepath.Join(d, fmt.Sprintf("%038x", i)), b, 0o444)
	}
	// A real object hashed right but for the other width is still junk
	// only if its name is not its hash: the one right object is kept.
	os.MkdirAll(filepath.Join(g, "objects", realID[:2]), 0o755)
	os.WriteFile(filepath.Join(g, "objects", realID[:2], realID[2:]), real, 0o444)
	st := Store(t.TempDir(), g)
	budget := testBudget()
	res, err := Keep(st, g, &budget)
	if err != nil || res.Copied != 1 || res.Linked != 0 || res.Junk != 6 {
		t.Fatalf("Keep: %+v %v, want 1 copied, 6 junk", res, err)
	}
	if ps, _ := filepath.Glob(filepath.Join(st, "objects", "ab", "*")); len(ps) != 0 {
		t.Errorf("junk kept: %v", ps)
	}
}

// TestKeepFanoutSwapped (lane gitkeep3): a second sandbox writing the same
// repository swaps objects/xx for a link to a directory of its own between
// the store's listing and its copy. What is kept is only what the real
// directory held. Seen failing on main (e4c1d18) with the same hook placed
// between keepObjects' readDir(sd) and its os.Link: the outside file was
// linked into the store.
func TestKeepFanoutSwapped(t *testing.T) {
	g := fakeRepo(t)
	p := objects(g)[0]
	dir := filepath.Dir(p)
	outside := t.TempDir()
	// The outside directory holds an object of its own under the name the
	// listing saw (so a path-based copy finds it), the agent's bytes.
	_, evil := looseBlob("evil\n")
	os.WriteFile(filepath.Join(outside, filepath.Base(p)), evil, 0o444)
	keepHook = func(d string) {
		if filepath.Base(d) == filepath.Base(dir) { // after its listing
			os.Rename(dir, dir+".moved")
			os.Symlink(outside, dir)
		}
	}
	defer func() { keepHook = nil }()
	st := Store(t.TempDir(), g)
	budget := testBudget()
	if _, err := Keep(st, g, &budget); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(storePath(st, p)); err == nil && bytes.Equal(b, evil) {
		t.Fatal("the swapped-in directory's file was kept")
	}
	if fi, err := os.Lstat(dir); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the hook did not swap the directory: the test proves nothing")
	}
}

// keptPastBytes is fakeRepo kept by a start with a byte budget of 1: one
// object copied, two linked. It returns the git dir and the store.
func keptPastBytes(t *testing.T) (g, st string) {
	t.Helper()
	g = fakeRepo(t)
	st = Store(t.TempDir(), g)
	budget := testBudget()
	budget.Bytes = 1
	if res, err := Keep(st, g, &budget); err != nil || res.Copied != 1 || res.Linked != 2 {
		t.Fatalf("Keep: %+v %v", res, err)
	}
	return g, st
}

// linkedObject is an object of git dir g that store st holds as a link
// (the same file), and its size.
func linkedObject(st, g string) (string, int64) {
	for _, p := range objects(g) {
		if a, _ := os.Stat(p); a != nil {
			if b, err := os.Stat(storePath(st, p)); err == nil && os.SameFile(a, b) {
				return p, b.Size()
			}
		}
	}
	return "", 0
}

// TestKeepPastByteBudget: objects past the start's byte budget are
// linked (kept against deletion), and copied at a later start.
func TestKeepPastByteBudget(t *testing.T) {
	g, st := keptPastBytes(t)
	// One of the linked objects is written in place (what a link does
	// not keep: said at the start): the next start takes its link out.
	bad, _ := linkedObject(st, g)
	os.Chmod(bad, 0o644)
	os.WriteFile(bad, []byte("junk"), 0o644)
	budget := testBudget()
	if res, err := Keep(st, g, &budget); err != nil || res.Copied != 1 || res.Junk != 1 || res.Linked != 0 {
		t.Fatalf("next Keep: %+v %v", res, err)
	}
	if _, err := os.Lstat(storePath(st, bad)); err == nil {
		t.Error("the store still links an object that is junk now")
	}
	os.Remove(bad)
	for _, p := range objects(g) {
		a, _ := os.Stat(p)
		if b, err := os.Stat(storePath(st, p)); err != nil || os.SameFile(a, b) {
			t.Errorf("%s not a copy (%v)", p, err)
		}
	}
}

// TestKeepSkipsUnchangedAndLinks: a fan-out directory whose mtime is the
// one recorded is not read (an object put there behind git's back with
// the mtime restored is not copied: the proof that it was skipped), and
// a symlinked fan-out directory or object is never followed.
func TestKeepSkipsUnchangedAndLinks(t *testing.T) {
	g := fakeRepo(t)
	st := Store(t.TempDir(), g)
	budget := testBudget()
	if _, err := Keep(st, g, &budget); err != nil {
		t.Fatal(err)
	}
	objs := objects(g)
	dir := filepath.Dir(objs[0])
	other := filepath.Dir(objs[len(objs)-1])
	if other == dir {
		t.Skip("the fixture's objects share a directory")
	}
	fi, _ := os.Stat(dir) // recorded in seenFile
	for i := 0; ; i++ {
		id, b := looseBlob(fmt.Sprint(i))
		if id[:2] == filepath.Base(dir) {
			os.WriteFile(filepath.Join(dir, id[2:]), b, 0o444)
			break
		}
	}
	os.Chtimes(dir, fi.ModTime(), fi.ModTime())
	outside := t.TempDir()
	id, b := looseBlob("secret")
	os.WriteFile(filepath.Join(outside, id[2:]), b, 0o600)
	os.Symlink(outside, filepath.Join(g, "objects", id[:2]))
	os.Symlink(filepath.Join(outside, id[2:]), filepath.Join(other, strings.Repeat("7", 38)))
	res, err := Keep(st, g, &budget)
	if err != nil || res.Copied+res.Linked != 0 {
		t.Fatalf("Keep kept %d (%v), want 0: %+v", res.Copied+res.Linked, err, res)
	}
	if _, err := os.Lstat(filepath.Join(st, "objects", id[:2])); err == nil {
		t.Error("a symlinked fan-out directory was followed")
	}
}

func TestKeepBudget(t *testing.T) {
	g := fakeRepo(t)
	st := Store(t.TempDir(), g)
	budget := testBudget()
	budget.Objects = 2
	res, err := Keep(st, g, &budget)
	if err != nil || res.Copied != 2 || !res.Full || budget.Objects != 0 {
		t.Fatalf("Keep: %+v %v budget %+v", res, err, budget)
	}
	budget = testBudget()
	budget.Objects = 5
	if res, err = Keep(st, g, &budget); err != nil || res.Copied != 1 || res.Full {
		t.Fatalf("next Keep: %+v %v", res, err)
	}
}

// BenchmarkKeepUnchanged is a start's cost on a repository of 5,120 loose
// objects (every fan-out directory used) already kept: nothing to link.
func BenchmarkKeepUnchanged(b *testing.B) {
	g := filepath.Join(b.TempDir(), ".git")
	old := time.Now().Add(-time.Hour)
	for i := 0; i < 256; i++ {
		d := filepath.Join(g, "objects", hex2(i))
		os.MkdirAll(d, 0o755)
		for j := 0; j < 20; j++ {
			id, b := looseBlob(fmt.Sprint(i, j))
			os.WriteFile(filepath.Join(d, hex2(j)+id[4:]), b, 0o444) // junk to Keep: read once
		}
		os.Chtimes(d, old, old)
	}
	os.MkdirAll(filepath.Join(g, "refs", "heads"), 0o755)
	os.WriteFile(filepath.Join(g, "refs", "heads", "main"), []byte(id1+"\n"), 0o644)
	os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	st := Store(b.TempDir(), g)
	budget := testBudget()
	if _, err := Keep(st, g, &budget); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		budget := testBudget()
		if res, err := Keep(st, g, &budget); err != nil || res.Copied+res.Linked != 0 {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

func hex2(i int) string { return string("0123456789abcdef"[i>>4]) + string("0123456789abcdef"[i&15]) }

// FuzzParse: the store's own files (packed-refs, fanout-mtimes) are read
// back at every start; whatever they hold, the parsers neither panic nor
// take a line that is not theirs.
func FuzzParse(f *testing.F) {
	f.Add([]byte(id1 + " refs/heads/main\n^" + id2 + "\n# pack-refs with: peeled\n"))
	f.Add([]byte("ab 1700000000000000000\nff -1\nzz 3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		refs := map[string]string{}
		parsePacked(b, refs)
		for r, id := range refs {
			if !isID(id) || !strings.HasPrefix(r, "refs/") {
				t.Fatalf("took %q %q", id, r)
			}
		}
		var seen [256]int64
		parseSeen(b, &seen)
	})
}

// TestKeepRefusesBadRefNames: a ref name git refuses, planted by the agent
// in the workspace's packed-refs or as a loose ref file, is not recorded:
// in the store's packed-refs it would make every fetch from the store (the
// recovery) fail ("packed refname is dangerous"). Seen failing before
// validRef (the names were recorded; the fetch failed by hand).
func TestKeepRefusesBadRefNames(t *testing.T) {
	g := fakeRepo(t)
	bad := []string{"refs/heads/../../x", "refs/heads/a*b", "refs/heads/x.lock", "refs/heads/.hid", "refs/heads/a@{1}", "refs/heads/a b", "refs/heads/a\x01"}
	var pr strings.Builder
	for _, n := range bad {
		pr.WriteString(id2 + " " + n + "\n")
	}
	os.WriteFile(filepath.Join(g, "packed-refs"), []byte(pr.String()), 0o644)
	os.WriteFile(filepath.Join(g, "refs", "heads", "x.lock"), []byte(id2+"\n"), 0o644)
	os.WriteFile(filepath.Join(g, "refs", "heads", "q?"), []byte(id2+"\n"), 0o644)
	st := Store(t.TempDir(), g)
	budget := testBudget()
	if _, err := Keep(st, g, &budget); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(st, "packed-refs"))
	if want := id1 + " refs/heads/main\n" + id1 + " refs/jail/HEAD\n"; string(got) != want {
		t.Errorf("packed-refs:\n%q\nwant:\n%q", got, want)
	}
}

// TestKeepAgentShapedFiles: the repository's files are the agent's to
// replace. A FIFO as packed-refs, HEAD or config, or as objects/, would
// block the open for good (the start and the run's end hung, SIGTERM did
// not help); packed-refs as a symlink to /dev/zero grows without end; a
// sparse loose ref of a terabyte would be allocated whole. Each Keep and
// Lost must return at once, with the real refs still read. Seen failing
// (hanging) with os.ReadFile/os.ReadDir as before.
func TestKeepAgentShapedFiles(t *testing.T) {
	for _, c := range []struct {
		name  string
		plant func(g string) error
	}{
		{"fifo packed-refs", func(g string) error { return mkfifo(filepath.Join(g, "packed-refs")) }},
		{"fifo HEAD", func(g string) error { return mkfifo(filepath.Join(g, "HEAD")) }},
		{"fifo config", func(g string) error { return mkfifo(filepath.Join(g, "config")) }},
		{"fifo objects", func(g string) error {
			os.RemoveAll(filepath.Join(g, "objects"))
			return mkfifo(filepath.Join(g, "objects"))
		}},
		{"packed-refs to /dev/zero", func(g string) error {
			os.Remove(filepath.Join(g, "packed-refs"))
			return os.Symlink("/dev/zero", filepath.Join(g, "packed-refs"))
		}},
		{"sparse loose ref", func(g string) error {
			f, err := os.Create(filepath.Join(g, "refs", "heads", "huge"))
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(1 << 40)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := fakeRepo(t)
			if err := c.plant(g); err != nil {
				t.Skipf("plant: %v", err)
			}
			st := Store(t.TempDir(), g)
			done := make(chan string, 1)
			go func() {
				budget := testBudget()
				res, _ := Keep(st, g, &budget)
				Lost(res.Start, g)
				done <- res.Start["refs/heads/main"]
			}()
			select {
			case main := <-done:
				if main != id1 && c.name != "fifo objects" {
					t.Errorf("refs/heads/main not read: %q", main)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Keep or Lost blocked on the planted file")
			}
		})
	}
}

// mkfifo replaces p with a FIFO.
func mkfifo(p string) error {
	os.Remove(p)
	return syscall.Mkfifo(p, 0o644)
}

// TestKeepPackedTooLarge: a packed-refs past MaxPacked (the agent's, made to
// slow every start: 16 MiB cost 1.5 s a start before the bound) is not
// read: said by PackedUnread, the loose refs still recorded.
func TestKeepPackedTooLarge(t *testing.T) {
	g := fakeRepo(t)
	var b strings.Builder
	for i := 0; b.Len() <= MaxPacked; i++ {
		fmt.Fprintf(&b, "%040x refs/tags/t%d\n", i+1, i)
	}
	os.WriteFile(filepath.Join(g, "packed-refs"), []byte(b.String()), 0o644)
	budget := testBudget()
	res, err := Keep(Store(t.TempDir(), g), g, &budget)
	if err != nil || !res.PackedUnread || res.Start["refs/heads/main"] != id1 || res.Start["refs/tags/t0"] != "" {
		t.Fatalf("Keep: unread %v, main %q, t0 %q, %v", res.PackedUnread, res.Start["refs/heads/main"], res.Start["refs/tags/t0"], err)
	}
}

// FuzzLoose: the workspace's loose object files are the agent's; whatever
// they hold, the checks neither panic nor take bytes that are not the
// object of the name (with the name the fuzzer's bytes hash to, only a
// true object passes).
func FuzzLoose(f *testing.F) {
	_, b := looseBlob("real\n")
	f.Add(b)
	f.Add([]byte{0x78, 0x9c})
	f.Fuzz(func(t *testing.T, b []byte) {
		looseHeader(bytes.NewReader(b), 20)
		want := sha1.Sum(b)
		if _, err := checkLoose(b, want[:]); err == nil {
			t.Fatalf("took %q as the object of its own hash", b)
		}
		if typ, data, err := inflateLoose(b, want[:]); err == nil {
			t.Fatalf("inflateLoose took %q (%s %q)", b, typ, data)
		}
		id, real := looseBlob(string(b))
		raw, _ := hex.DecodeString(id)
		if _, err := checkLoose(real, raw); err != nil {
			t.Fatalf("a true object refused: %v", err)
		}
		if _, data, err := inflateLoose(real, raw); err != nil && len(b) <= maxCommit || err == nil && !bytes.Equal(data, b) {
			t.Fatalf("inflateLoose of a true object: %v", err)
		}
	})
}

// testBudget is a start's budget without its time bound: a loaded test
// machine must not turn the fixtures' copies into links.
func testBudget() Budget {
	b := NewBudget()
	b.Until = time.Now().Add(time.Hour)
	return b
}

// TestKeepPastTime: past MaxCopyTime (and minCopies made) a start links,
// as past MaxCopyBytes; the next start copies.
func TestKeepPastTime(t *testing.T) {
	g := fakeRepo(t)
	st := Store(t.TempDir(), g)
	budget := NewBudget()
	budget.Until, budget.copies = time.Now().Add(-time.Second), minCopies
	if res, err := Keep(st, g, &budget); err != nil || res.Copied != 0 || res.Linked != 3 {
		t.Fatalf("Keep: %+v %v", res, err)
	}
	budget = testBudget()
	if res, err := Keep(st, g, &budget); err != nil || res.Copied != 3 {
		t.Fatalf("next Keep: %+v %v", res, err)
	}
}

// A moved ref recorded at the end keeps every ref the store recorded
// before, however long its packed-refs has grown (refs deleted in the
// workspace stay recorded start after start). Seen failing with the
// bounded read recordRefs had: past MaxPacked the store held the moved
// ref alone.
func TestRecordRefsKeepsALongRecord(t *testing.T) {
	store := t.TempDir()
	var b strings.Builder
	n := 0
	for b.Len() <= MaxPacked+maxSmall {
		fmt.Fprintf(&b, "%040x refs/heads/branch-%06d\n", n+1, n)
		n++
	}
	if err := os.WriteFile(filepath.Join(store, "packed-refs"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	recordRefs(store, map[string]string{"refs/jail/moved/heads/main": strings.Repeat("ab", 20)})
	got := map[string]string{}
	data, _ := os.ReadFile(filepath.Join(store, "packed-refs"))
	parsePacked(data, got)
	if len(got) != n+1 || got["refs/heads/branch-000000"] == "" || got["refs/jail/moved/heads/main"] == "" {
		t.Fatalf("the store holds %d refs after recording one more on %d", len(got), n)
	}
}

// TestKeepUnchangedOpensNoFanout: a start whose fan-out directories are
// unchanged since the last one kept them whole opens none of them (an
// fstatat each: 256 opens, poller checks, fstats and closes a start
// before), and one changed since is opened and its new object kept.
func TestKeepUnchangedOpensNoFanout(t *testing.T) {
	g := fakeRepo(t)
	old := time.Now().Add(-time.Minute) // settled: kept whole at the first start
	for _, p := range objects(g) {
		os.Chtimes(filepath.Dir(p), old, old)
	}
	st := Store(t.TempDir(), g)
	keep := func() (Result, int64) {
		budget := testBudget()
		before := fanoutOpens.Load()
		res, err := Keep(st, g, &budget)
		if err != nil {
			t.Fatal(err)
		}
		return res, fanoutOpens.Load() - before
	}
	if _, n := keep(); n == 0 {
		t.Fatal("the first start opened no fan-out directory: the test proves nothing")
	}
	if res, n := keep(); n != 0 || res.Copied != 0 {
		t.Errorf("unchanged: %d fan-out directories opened, %d copied; want none", n, res.Copied)
	}
	id, b := looseBlob("new at the second start")
	d := filepath.Join(g, "objects", id[:2])
	os.MkdirAll(d, 0o755)
	if err := os.WriteFile(filepath.Join(d, id[2:]), b, 0o444); err != nil {
		t.Fatal(err)
	}
	res, n := keep()
	if n != 1 || res.Copied != 1 {
		t.Errorf("one directory changed: %d opened, %d copied; want 1 and 1", n, res.Copied)
	}
	if _, err := os.Lstat(storePath(st, filepath.Join(d, id[2:]))); err != nil {
		t.Errorf("the new object is not kept: %v", err)
	}
}
