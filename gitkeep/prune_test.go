//go:build linux

package gitkeep

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// gitRepo makes a repository of loose objects only: commits of a file
// that grows a little each time (so a gc makes deltas) on main, one on a
// side branch. It returns the work tree and a git runner.
func gitRepo(t *testing.T) (string, func(args ...string) string) {
	t.Helper()
	home := t.TempDir()
	ws := filepath.Join(t.TempDir(), "ws")
	os.MkdirAll(ws, 0o755)
	git := func(args ...string) string {
		t.Helper()
		c := exec.Command("git", append([]string{"-C", ws}, args...)...)
		c.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=commit.gpgsign", "GIT_CONFIG_VALUE_0=false")
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q", "-b", "main", ".")
	var body strings.Builder
	for i := 0; i < 12; i++ {
		for j := 0; j < 40; j++ {
			body.WriteString("line of the file that a delta can share, round ")
			body.WriteString(strings.Repeat("x", i))
			body.WriteString("\n")
		}
		os.WriteFile(filepath.Join(ws, "f"), []byte(body.String()), 0o644)
		git("add", "f")
		git("commit", "-q", "-m", "c")
	}
	git("checkout", "-q", "-b", "side")
	os.WriteFile(filepath.Join(ws, "s"), []byte("side\n"), 0o644)
	git("add", "s")
	git("commit", "-q", "-m", "s")
	git("checkout", "-q", "main")
	return ws, git
}

// start is a run's start: the store locked and brought up to date.
func start(t *testing.T, st, g string) (*os.File, Result) {
	t.Helper()
	lock, err := Lock(st)
	if err != nil {
		t.Fatal(err)
	}
	budget := testBudget()
	res, err := Keep(st, g, &budget)
	if err != nil {
		t.Fatal(err)
	}
	return lock, res
}

// copies counts the store's object copies and those whose object the
// workspace (the git dir its alternates names) no longer has.
func copies(t *testing.T, st string) (all, own int) {
	t.Helper()
	alt, _ := os.ReadFile(filepath.Join(st, "objects", "info", "alternates"))
	ws := strings.TrimSpace(string(alt))
	ps, _ := filepath.Glob(filepath.Join(st, "objects", "??", "*"))
	for _, p := range ps {
		all++
		if _, err := os.Lstat(filepath.Join(ws, filepath.Base(filepath.Dir(p)), filepath.Base(p))); err != nil {
			own++
		}
	}
	return all, own
}

func end(t *testing.T, lock *os.File, st, g string, res Result, now time.Time) Pruned {
	t.Helper()
	defer lock.Close()
	p, err := Prune(lock, st, g, &res.Mtimes, 256, now, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPruneAfterHostGC: the host's gc packs the loose objects (deltas
// too) and deletes them: the store's copies are then its own, and the
// next run's end frees every one, verified in the pack; the store still
// gives the whole history back (its alternates reach the pack).
func TestPruneAfterHostGC(t *testing.T) {
	ws, git := gitRepo(t)
	g := filepath.Join(ws, ".git")
	st := Store(t.TempDir(), g)
	lock, res := start(t, st, g)
	n, own := copies(t, st)
	if n < 30 || own != 0 {
		t.Fatalf("store has %d copies (%d its own only)", n, own)
	}
	if p := end(t, lock, st, g, res, time.Now()); p.Packed+p.Aged+p.Refs != 0 || p.NoPacks != nil {
		t.Fatalf("a prune with nothing packed: %+v", p)
	}
	// A second store of the same repository (another state directory)
	// links the same files: after the gc no copy is alone, yet none is
	// the workspace's. Seen failing when only a link count of 1 counted
	// (nothing pruned).
	l2, _ := start(t, Store(t.TempDir(), g), g)
	l2.Close()
	git("gc", "-q")
	if _, err := os.Stat(filepath.Join(g, "objects", "info", "packs")); err != nil {
		t.Fatal("no pack after gc")
	}
	if !strings.Contains(git("verify-pack", "-v", mustGlob(t, filepath.Join(g, "objects", "pack", "*.idx"))), "chain length") {
		t.Fatal("the gc made no delta: the test does not read one")
	}
	lock, res = start(t, st, g)
	p := end(t, lock, st, g, res, time.Now())
	if p.Packed != n || p.Aged != 0 || p.Refs != 0 {
		t.Fatalf("prune after gc: %+v, want %d packed", p, n)
	}
	if all, _ := copies(t, st); all != 0 {
		t.Errorf("%d copies left", all)
	}
	// The recovery: a new repository fetches everything from the store.
	rec := filepath.Join(t.TempDir(), "r")
	c := exec.Command("sh", "-c", `git init -q "$1" && git -C "$1" fetch -q "$2" '+refs/*:refs/jail-kept/*' && git -C "$1" fsck --strict`, "sh", rec, st)
	c.Env = append(os.Environ(), "HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("fetch from the pruned store: %v\n%s", err, out)
	}
}

func mustGlob(t *testing.T, p string) string {
	t.Helper()
	m, _ := filepath.Glob(p)
	if len(m) != 1 {
		t.Fatalf("%s: %d matches", p, len(m))
	}
	return m[0]
}

// TestPruneKeepsDeleted: objects and a ref the agent deleted (no pack
// holds them) stay in the store until Age has passed since; then they
// go, and the ref the repository no longer has whose object is nowhere
// with them (one the repository still has stays recorded).
func TestPruneKeepsDeleted(t *testing.T) {
	ws, git := gitRepo(t)
	g := filepath.Join(ws, ".git")
	side := strings.TrimSpace(git("rev-parse", "side"))
	st := Store(t.TempDir(), g)
	lock, res := start(t, st, g)
	n, _ := copies(t, st)
	// The agent.
	ds, _ := filepath.Glob(filepath.Join(g, "objects", "??"))
	for _, d := range ds {
		os.RemoveAll(d)
	}
	git("update-ref", "-d", "refs/heads/side")
	if p := end(t, lock, st, g, res, time.Now()); p.Packed+p.Aged+p.Refs != 0 {
		t.Fatalf("the deleted history was pruned: %+v", p)
	}
	lock, res = start(t, st, g)
	if p := end(t, lock, st, g, res, time.Now().Add(Age-time.Hour)); p.Packed+p.Aged+p.Refs != 0 {
		t.Fatalf("pruned before Age: %+v", p)
	}
	if all, own := copies(t, st); all != n || own != n {
		t.Fatalf("store %d/%d copies, want %d", all, own, n)
	}
	pr, _ := os.ReadFile(filepath.Join(st, "packed-refs"))
	if !strings.Contains(string(pr), side+" refs/heads/side\n") {
		t.Fatalf("side not recorded:\n%s", pr)
	}
	lock, res = start(t, st, g)
	p := end(t, lock, st, g, res, time.Now().Add(Age+fullEvery+time.Hour))
	if p.Aged != n || p.Refs != 1 { // side: main and HEAD are still the repository's
		t.Fatalf("prune past Age: %+v, want %d aged, 1 ref", p, n)
	}
	if pr, _ := os.ReadFile(filepath.Join(st, "packed-refs")); strings.Contains(string(pr), "refs/heads/side") || !strings.Contains(string(pr), "refs/heads/main") {
		t.Errorf("packed-refs after the prune:\n%s", pr)
	}
}

// TestPruneRefusesLyingPacks: the agent deletes the loose objects and
// plants a pack whose idx names them all (each at a real entry of other
// bytes), or an idx that does not parse: nothing goes. Seen failing with
// holds reduced to the idx lookup (every copy pruned).
func TestPruneRefusesLyingPacks(t *testing.T) {
	ws, git := gitRepo(t)
	g, st, n, ids, _ := keptLoose(t, ws)
	var lock *os.File
	var res Result
	// A real pack of one other object.
	other := strings.TrimSpace(git("hash-object", "-w", "--stdin", "-t", "blob", os.DevNull))
	c := exec.Command("git", "-C", ws, "pack-objects", "-q", "--stdout")
	c.Stdin = strings.NewReader(other + "\n")
	pk, err := c.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"??"} {
		ds, _ := filepath.Glob(filepath.Join(g, "objects", d))
		for _, d := range ds {
			os.RemoveAll(d)
		}
	}
	pd := filepath.Join(g, "objects", "pack")
	os.WriteFile(filepath.Join(pd, "pack-lie.pack"), pk, 0o444)
	os.WriteFile(filepath.Join(pd, "pack-lie.idx"), fakeIdx(ids, 12), 0o444)
	os.WriteFile(filepath.Join(pd, "pack-bad.pack"), pk, 0o444)
	os.WriteFile(filepath.Join(pd, "pack-bad.idx"), append(fakeIdx(ids, 12)[:1100], 0xff), 0o444)
	lock, res = start(t, st, g)
	if p := end(t, lock, st, g, res, time.Now()); p.Packed+p.Aged+p.Refs != 0 {
		t.Fatalf("a lying pack pruned the store: %+v", p)
	}
	if all, _ := copies(t, st); all != n {
		t.Fatalf("%d of %d copies left", all, n)
	}
}

// fakeIdx is an idx v2 naming ids, every one at offset off.
func fakeIdx(ids [][]byte, off uint32) []byte {
	sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i], ids[j]) < 0 })
	var b bytes.Buffer
	b.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	for i := 0; i < 256; i++ {
		n := sort.Search(len(ids), func(k int) bool { return int(ids[k][0]) > i })
		binary.Write(&b, binary.BigEndian, uint32(n))
	}
	for _, id := range ids {
		b.Write(id)
	}
	for range ids {
		b.Write([]byte{0, 0, 0, 0})
	}
	for range ids {
		binary.Write(&b, binary.BigEndian, off)
	}
	b.Write(make([]byte, 40))
	return b.Bytes()
}

// TestPruneWaitsForOtherRuns: while another run holds the store (its
// agent could still delete a pack it made), an end prunes nothing.
func TestPruneWaitsForOtherRuns(t *testing.T) {
	ws, git := gitRepo(t)
	g := filepath.Join(ws, ".git")
	st := Store(t.TempDir(), g)
	l, _ := start(t, st, g)
	l.Close()
	git("gc", "-q")
	other, err := Lock(st)
	if err != nil {
		t.Fatal(err)
	}
	lock, res := start(t, st, g)
	if p := end(t, lock, st, g, res, time.Now()); p.Packed != 0 {
		t.Fatalf("pruned under another run: %+v", p)
	}
	other.Close()
	lock, res = start(t, st, g)
	if p := end(t, lock, st, g, res, time.Now()); p.Packed == 0 {
		t.Fatalf("control: nothing pruned alone: %+v", p)
	}
}

// TestSweepGoneRepo: a store whose repository is gone is marked, kept
// for Age, then removed; a repository back clears the mark.
func TestSweepGoneRepo(t *testing.T) {
	ws, _ := gitRepo(t)
	g := filepath.Join(ws, ".git")
	base := t.TempDir()
	st := Store(base, g)
	l, _ := start(t, st, g)
	l.Close()
	now := time.Now()
	dl := now.Add(time.Minute)
	os.Rename(g, g+".away")
	if rm, err := Sweep(base, nil, now, dl); err != nil || len(rm) != 0 {
		t.Fatalf("first sweep removed %v (%v)", rm, err)
	}
	if _, err := os.Stat(filepath.Join(st, goneFile)); err != nil {
		t.Fatal("no gone mark")
	}
	os.Rename(g+".away", g)
	Sweep(base, nil, now.Add(Age+time.Hour), dl)
	if _, err := os.Stat(filepath.Join(st, goneFile)); err == nil {
		t.Fatal("mark kept with the repository back")
	}
	os.RemoveAll(g)
	Sweep(base, nil, now, dl)
	if rm, _ := Sweep(base, nil, now.Add(Age-time.Hour), dl); len(rm) != 0 {
		t.Fatal("removed before Age")
	}
	if rm, _ := Sweep(base, nil, now.Add(Age+time.Hour), dl); len(rm) != 1 || rm[0] != st {
		t.Fatalf("sweep past Age removed %v", rm)
	}
	if _, err := os.Lstat(st); err == nil {
		t.Error("store still there")
	}
}

// FuzzPack: the workspace's idx and pack entries are the agent's to
// write; parseIdx, find, object and applyDelta never panic, and a hash
// never matches bytes that are not the object's.
func FuzzPack(f *testing.F) {
	id := sha1.Sum([]byte("blob 0\x00"))
	f.Add(fakeIdx([][]byte{id[:]}, 12), []byte("PACK\x00\x00\x00\x02\x00\x00\x00\x01\x30\x78\x9c\x03\x00\x00\x00\x00\x01"))
	f.Add([]byte{0xff, 't', 'O', 'c'}, []byte{0x05, 0x03, 0x91, 0x00, 0x03})
	f.Fuzz(func(t *testing.T, ib, pb []byte) {
		big := int64(1) << 30
		applyDelta([]byte("hello"), pb, &big)
		x, err := parseIdx(ib, 20)
		if err != nil {
			return
		}
		budget := int64(1 << 24)
		pk := &pack{f: bytes.NewReader(pb), mem: pb, size: int64(len(pb)), x: x, budget: &budget}
		for i := range x.offs {
			id := x.ids[i*20 : (i+1)*20]
			if o, ok := x.find(id); !ok || o != x.offs[i] {
				t.Fatalf("find %x", id)
			}
			pk.holds(id)
		}
	})
}

// BenchmarkPruneUnchanged is a run end's prune of a store of 5,120
// copies whose workspace is as the last prune saw it: nothing read.
func BenchmarkPruneUnchanged(b *testing.B) {
	g := filepath.Join(b.TempDir(), ".git")
	old := time.Now().Add(-time.Hour)
	for i := 0; i < 256; i++ {
		d := filepath.Join(g, "objects", hex2(i))
		os.MkdirAll(d, 0o755)
		for j := 0; j < 20; j++ {
			os.WriteFile(filepath.Join(d, hex2(j)+strings.Repeat("0", 36)), nil, 0o444)
		}
		os.Chtimes(d, old, old)
	}
	os.MkdirAll(filepath.Join(g, "objects", "pack"), 0o755)
	os.MkdirAll(filepath.Join(g, "refs", "heads"), 0o755)
	os.WriteFile(filepath.Join(g, "refs", "heads", "main"), []byte(id1+"\n"), 0o644)
	os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	base := b.TempDir()
	st := Store(base, g)
	round := func() {
		lock, err := Lock(st)
		if err != nil {
			b.Fatal(err)
		}
		budget := testBudget()
		res, err := Keep(st, g, &budget)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		now := time.Now()
		if _, err := Prune(lock, st, g, &res.Mtimes, 256, now, now.Add(time.Second)); err != nil {
			b.Fatal(err)
		}
		lock.Close()
		if _, err := Sweep(base, map[string]bool{st: true}, now, now.Add(time.Second)); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
	}
	b.StopTimer()
	round()
	b.ResetTimer()
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		round()
	}
}

// TestPruneRefusesLinkedGitDir: the agent moves the real git dir away and
// puts a link to a repository of its own (a real pack holding every
// object) where it was: nothing goes. Seen failing without the
// EvalSymlinks check in openPacks (every copy pruned).
func TestPruneRefusesLinkedGitDir(t *testing.T) {
	ws, git := gitRepo(t)
	g := filepath.Join(ws, ".git")
	st := Store(t.TempDir(), g)
	lock, res := start(t, st, g)
	lock.Close()
	n, _ := copies(t, st)
	evil := filepath.Join(t.TempDir(), "evil.git")
	if out, err := exec.Command("cp", "-a", g, evil).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	c := exec.Command("git", "--git-dir="+evil, "gc", "-q")
	c.Env = append(os.Environ(), "HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("gc: %v %s", err, out)
	}
	os.Rename(g, g+".moved")
	os.Symlink(evil, g)
	_ = git
	lock, res = start(t, st, g)
	if p := end(t, lock, st, g, res, time.Now()); p.Packed != 0 || p.NoPacks == nil {
		t.Fatalf("a linked git dir's packs counted: %+v", p)
	}
	if all, _ := copies(t, st); all != n {
		t.Fatalf("%d of %d copies left", all, n)
	}
}

// TestPruneUnprotected: once a run used the repository without read-only
// packs (degraded mode), its packs count for nothing: a later run like it
// could delete the pack the copy went for. Seen failing without the
// marker's check in Prune (every copy pruned).
func TestPruneUnprotected(t *testing.T) {
	ws, git := gitRepo(t)
	g := filepath.Join(ws, ".git")
	st := Store(t.TempDir(), g)
	lock, _ := start(t, st, g)
	if err := Unprotected(st); err != nil {
		t.Fatal(err)
	}
	lock.Close()
	git("gc", "-q")
	lock, res := start(t, st, g)
	if p := end(t, lock, st, g, res, time.Now()); p.Packed != 0 || p.NoPacks == nil {
		t.Fatalf("packs counted after a degraded run: %+v", p)
	}
}

// TestPruneFifoPack (review15e): the agent makes pack-0.pack a FIFO beside
// a copy of a real idx naming the objects it deleted. The end's prune must
// not block opening it (every later run's end hung, killed at 20 s), nor
// prune for it. Seen failing (timed out) on gitkeepgc's openPack, which
// opened the .pack without O_NONBLOCK.
func TestPruneFifoPack(t *testing.T) {
	ws, _ := gitRepo(t)
	g, st, n, ids, ps := keptLoose(t, ws)
	var lock *os.File
	var res Result
	for _, p := range ps {
		os.Remove(p)
	}
	pd := filepath.Join(g, "objects", "pack")
	os.MkdirAll(pd, 0o755)
	os.WriteFile(filepath.Join(pd, "pack-0.idx"), fakeIdx(ids, 12), 0o444)
	if err := mkfifo(filepath.Join(pd, "pack-0.pack")); err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(filepath.Join(pd, "pack-1.idx")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pd, "pack-1.pack"), []byte("PACK"), 0o444)
	lock, res = start(t, st, g)
	done := make(chan Pruned, 1)
	go func() { done <- end(t, lock, st, g, res, time.Now()) }()
	select {
	case p := <-done:
		if p.Packed != 0 {
			t.Fatalf("a FIFO pack pruned the store: %+v", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the prune blocked on a FIFO in objects/pack")
	}
	if all, _ := copies(t, st); all != n {
		t.Fatalf("%d of %d copies left", all, n)
	}
}

// keptLoose keeps the repository at ws in a new store, as a run's start
// does, and returns its git dir, the store, the copies in it, and the
// loose objects' ids and paths (what an agent would delete).
func keptLoose(t *testing.T, ws string) (g, st string, n int, ids [][]byte, loose []string) {
	t.Helper()
	g = filepath.Join(ws, ".git")
	st = Store(t.TempDir(), g)
	lock, _ := start(t, st, g)
	lock.Close()
	n, _ = copies(t, st)
	loose, _ = filepath.Glob(filepath.Join(g, "objects", "??", "*"))
	for _, p := range loose {
		id, _ := hex.DecodeString(filepath.Base(filepath.Dir(p)) + filepath.Base(p))
		ids = append(ids, id)
	}
	return g, st, n, ids, loose
}

// TestPruneMarksGoing (lane gitkeep3): a copy (one link: its ctime is
// when the store made it) whose object the workspace no longer has is
// recorded from the end that first saw it gone (unlinked-since) and
// dropped from the record when the workspace has the object again; a copy
// the workspace still has is never pruned, packs or not.
func TestPruneMarksGoing(t *testing.T) {
	ws, _ := gitRepo(t)
	g, st, n, _, loose := keptLoose(t, ws)
	saved := map[string][]byte{}
	for _, p := range loose {
		saved[p], _ = os.ReadFile(p)
		os.Remove(p)
	}
	recorded := func() int {
		since := map[string]int64{}
		b, _ := os.ReadFile(filepath.Join(st, unlinkedFile))
		parseSince(b, since)
		return len(since)
	}
	lock, res := start(t, st, g)
	if p := end(t, lock, st, g, res, time.Now()); p.Packed+p.Aged != 0 {
		t.Fatalf("pruned: %+v", p)
	}
	if got := recorded(); got != n {
		t.Fatalf("%d of %d copies recorded gone", got, n)
	}
	for p, b := range saved {
		os.WriteFile(p, b, 0o444)
	}
	lock, res = start(t, st, g)
	if p := end(t, lock, st, g, res, time.Now().Add(2*Age)); p.Packed+p.Aged != 0 {
		t.Fatalf("pruned copies the workspace has: %+v", p)
	}
	if got := recorded(); got != 0 {
		t.Fatalf("%d copies still recorded gone", got)
	}
}

// TestStoreBound (lane gitkeep3): a store holding MaxStoreBytes of copies
// keeps no new object (StoreFull: the agent writing and deleting objects
// run after run fills it no further), and a whole prune counts the store's
// bytes again. main (e21fcff) had no bound: every object was linked,
// whatever the store held; seen failing with the StoreFull check removed.
func TestStoreBound(t *testing.T) {
	ws, _ := gitRepo(t)
	g, st, n, _, _ := keptLoose(t, ws)
	var sum int64
	ps, _ := filepath.Glob(filepath.Join(st, "objects", "??", "*"))
	for _, p := range ps {
		fi, _ := os.Lstat(p)
		sum += fi.Size()
	}
	if got := readBytes(st); got != sum || n == 0 {
		t.Fatalf("kept-bytes %d after the first start, the copies hold %d", got, sum)
	}
	writeBytes(st, MaxStoreBytes)
	p := writeBlob(t, g, "new object\n")
	lock, res := start(t, st, g)
	if !res.StoreFull || res.Copied+res.Linked != 0 {
		t.Fatalf("a full store kept more: %+v", res)
	}
	if _, err := os.Lstat(storePath(st, p)); err == nil {
		t.Fatal("the new object was kept")
	}
	end(t, lock, st, g, res, time.Now()) // a whole look (the first prune)
	if got := readBytes(st); got != sum {
		t.Fatalf("kept-bytes %d after a whole prune, the copies hold %d", got, sum)
	}
	lock, res = start(t, st, g)
	lock.Close()
	if res.StoreFull || res.Copied != 1 {
		t.Fatalf("after the count: %+v", res)
	}
}

// TestPruneAgeAfterDirRename (review16a): the agent renames the
// workspace's objects/xx directories aside. The objects' own ctime does
// not change (a directory's rename touches the directory's inode, not its
// files'), so a copy the store made more than Age ago looked deleted Age
// ago: the same end pruned it, and the next run's agent deleted the
// renamed directory, the only copy left. Seen failing on main (every copy
// aged at the first end). The copies stay Age from the end that first saw
// them gone, then go.
func TestPruneAgeAfterDirRename(t *testing.T) {
	ws, _ := gitRepo(t)
	g := filepath.Join(ws, ".git")
	st := Store(t.TempDir(), g)
	lock, res := start(t, st, g)
	n, _ := copies(t, st)
	end(t, lock, st, g, res, time.Now())
	// The agent, a month and more after the store linked the objects.
	ds, _ := filepath.Glob(filepath.Join(g, "objects", "??"))
	for _, d := range ds {
		if err := os.Rename(d, d+"-aside"); err != nil {
			t.Fatal(err)
		}
	}
	later := time.Now().Add(Age + fullEvery + time.Hour)
	lock, res = start(t, st, g)
	if p := end(t, lock, st, g, res, later); p.Aged != 0 {
		t.Fatalf("copies of objects renamed aside aged at once: %+v", p)
	}
	if all, _ := copies(t, st); all != n {
		t.Fatalf("%d of %d copies left", all, n)
	}
	lock, res = start(t, st, g)
	if p := end(t, lock, st, g, res, later.Add(Age-time.Hour)); p.Aged != 0 {
		t.Fatalf("pruned before Age since the end that saw them gone: %+v", p)
	}
	lock, res = start(t, st, g)
	if p := end(t, lock, st, g, res, later.Add(Age+fullEvery+time.Hour)); p.Aged != n {
		t.Fatalf("prune Age after the end that saw them gone: %+v, want %d aged", p, n)
	}
	if _, err := os.Stat(filepath.Join(st, unlinkedFile)); err == nil {
		if b, _ := os.ReadFile(filepath.Join(st, unlinkedFile)); len(b) != 0 {
			t.Errorf("record left after every copy went:\n%s", b)
		}
	}
}

// TestPruneHardLinkedPack (review16a): the agent's gc inside writes the
// pack and links it under a second name in the workspace. The end's
// prune found the objects in the pack and dropped the store's copies; the
// next run makes the pack's name read-only (a bind: the name, not the
// file), and the agent truncates the file through its other name. Seen
// failing on main (every copy pruned). A pack or idx with another name
// counts for nothing.
func TestPruneHardLinkedPack(t *testing.T) {
	ws, git := gitRepo(t)
	g := filepath.Join(ws, ".git")
	st := Store(t.TempDir(), g)
	lock, res := start(t, st, g)
	n, _ := copies(t, st)
	// The agent.
	git("gc", "-q")
	pk := mustGlob(t, filepath.Join(g, "objects", "pack", "*.pack"))
	if err := os.Link(pk, filepath.Join(ws, "other-name")); err != nil {
		t.Fatal(err)
	}
	if p := end(t, lock, st, g, res, time.Now()); p.Packed != 0 {
		t.Fatalf("a pack with a second name pruned the store: %+v", p)
	}
	if all, _ := copies(t, st); all != n {
		t.Fatalf("%d of %d copies left", all, n)
	}
	// The same with the idx linked (the pack alone).
	os.Remove(filepath.Join(ws, "other-name"))
	ix := mustGlob(t, filepath.Join(g, "objects", "pack", "*.idx"))
	if err := os.Link(ix, filepath.Join(ws, "other-idx")); err != nil {
		t.Fatal(err)
	}
	lock, res = start(t, st, g)
	if p := end(t, lock, st, g, res, time.Now()); p.Packed != 0 {
		t.Fatalf("an idx with a second name pruned the store: %+v", p)
	}
	// One name each: the pack counts (at the next whole look).
	os.Remove(filepath.Join(ws, "other-idx"))
	lock, res = start(t, st, g)
	if p := end(t, lock, st, g, res, time.Now().Add(fullEvery+time.Hour)); p.Packed != n {
		t.Fatalf("prune of a pack of one name: %+v, want %d packed", p, n)
	}
}

// TestKeptSince: a store's age is recorded at its first Keep and not
// moved by later ones; a directory never kept has none.
func TestKeptSince(t *testing.T) {
	ws, _ := gitRepo(t)
	st := filepath.Join(t.TempDir(), "store")
	if _, ok := KeptSince(st, filepath.Join(ws, ".git")); ok {
		t.Fatal("an age for a store never kept")
	}
	b := NewBudget()
	if _, err := Keep(st, filepath.Join(ws, ".git"), &b); err != nil {
		t.Fatal(err)
	}
	t1, ok := KeptSince(st, filepath.Join(ws, ".git"))
	if !ok || t1 > time.Now().UnixNano() {
		t.Fatalf("after Keep: %d %v", t1, ok)
	}
	time.Sleep(10 * time.Millisecond)
	b = NewBudget()
	if _, err := Keep(st, filepath.Join(ws, ".git"), &b); err != nil {
		t.Fatal(err)
	}
	if t2, _ := KeptSince(st, filepath.Join(ws, ".git")); t2 != t1 {
		t.Fatalf("a second Keep moved the age: %d, was %d", t2, t1)
	}
}

// TestKeptSinceOtherRepo: the agent removes a user's repository and makes
// one of its own at the same path: the store (named by the path) is the
// old one's, and on main the new repository took its age, and with it the
// old one's rank for the start's budget of pack mounts. A repository at
// the path that is another directory has no age until its store keeps
// it, then its own (gitkeep5).
func TestKeptSinceOtherRepo(t *testing.T) {
	ws, git := gitRepo(t)
	gd := filepath.Join(ws, ".git")
	st := filepath.Join(t.TempDir(), "store")
	b := NewBudget()
	if _, err := Keep(st, gd, &b); err != nil {
		t.Fatal(err)
	}
	t1, ok := KeptSince(st, gd)
	if !ok {
		t.Fatal("no age after Keep")
	}
	time.Sleep(20 * time.Millisecond)
	if err := os.RemoveAll(gd); err != nil {
		t.Fatal(err)
	}
	git("init", "-q", "-b", "main", ".")
	if t2, ok := KeptSince(st, gd); ok {
		t.Fatalf("a new repository at the old path has the old store's age %d (was %d)", t2, t1)
	}
	b = NewBudget()
	if _, err := Keep(st, gd, &b); err != nil {
		t.Fatal(err)
	}
	if t3, ok := KeptSince(st, gd); !ok || t3 <= t1 {
		t.Fatalf("after its first Keep the new repository's age is %d %v, want after %d", t3, ok, t1)
	}
}
