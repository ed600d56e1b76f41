//go:build linux

package tests

// End-to-end tests of the start's packs kept in the git-kept store
// (gitkeep.KeepPacks): a lying pack the end cannot read through in its
// budget is only said; the host's gc after it loses history in the
// workspace, never in the store.

import (
	"bytes"
	"compress/zlib"
	"crypto/rand"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// bigLyingPack is lyingPack (a true copy of HEAD, a parentless commit
// filed under HEAD~1's id) with a delta chain of large blobs after it:
// each blob is past what the end's check keeps of a delta's bases, so
// reading the chain through costs more than the end's budget (or more
// bytes than it makes for one pack), and the pack is said, not read.
func bigLyingPack(t *testing.T, h *gitHost, ws string) (name string, pack, idx []byte) {
	t.Helper()
	return bigLyingPackChain(t, h, ws, 60)
}

// bigLyingPackChain is bigLyingPack with a delta chain of chain deltas.
func bigLyingPackChain(t *testing.T, h *gitHost, ws string, chain int) (name string, pack, idx []byte) {
	t.Helper()
	s := t.TempDir()
	h.mustGit(t, s, "init", "-q", "--bare", ".")
	rev := func(r string) string { return strings.TrimSpace(h.mustGit(t, ws, "rev-parse", r)) }
	tree := rev("HEAD~1^{tree}")
	forged := gitStdin(t, h, s, "tree "+tree+"\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n\nb\n", "hash-object", "-t", "commit", "-w", "--stdin")
	head := h.mustGit(t, ws, "cat-file", "commit", "HEAD")
	if got := gitStdin(t, h, s, head, "hash-object", "-t", "commit", "-w", "--stdin"); got != rev("HEAD") {
		t.Fatalf("HEAD copied as %s, want %s", got, rev("HEAD"))
	}
	// A 17 MiB blob (past what the check caches of a delta's base) and a
	// chain of 60 deltas on it, each the one before with its first two
	// bytes changed: reading the chain through makes more bytes than the
	// check makes for one pack. Then the commits (the check reads in pack
	// order). The idx is written here (git index-pack took seconds to
	// resolve the chain), the forgery filed under HEAD~1's id.
	const size = 17 << 20
	pack = []byte("PACK\x00\x00\x00\x02")
	pack = binary.BigEndian.AppendUint32(pack, uint32(1+chain+2))
	deflate := func(b []byte) []byte {
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		w.Write(b)
		w.Close()
		return z.Bytes()
	}
	// hdr is git's entry header: the type and the (inflated) size.
	hdr := func(typ, sz int) []byte {
		c := byte(typ<<4 | sz&15)
		sz >>= 4
		var out []byte
		for sz > 0 {
			out = append(out, c|0x80)
			c, sz = byte(sz&0x7f), sz>>7
		}
		return append(out, c)
	}
	varint := func(out []byte, n int) []byte {
		for n >= 0x80 {
			out = append(out, byte(n)|0x80)
			n >>= 7
		}
		return append(out, byte(n))
	}
	copyOp := func(out []byte, off, n int) []byte {
		cmd, args := byte(0x80), []byte{}
		for i := 0; i < 4; i++ {
			if x := byte(off >> (8 * i)); x != 0 {
				cmd |= 1 << i
				args = append(args, x)
			}
		}
		for i := 0; i < 3; i++ {
			if x := byte(n >> (8 * i)); x != 0 {
				cmd |= 0x10 << i
				args = append(args, x)
			}
		}
		return append(append(out, cmd), args...)
	}
	block := make([]byte, 4096)
	for i := range block {
		block[i] = byte(i*7 + i/13)
	}
	var es []idxEntry
	// entry files the entry at pack[at:] under the id of a typ object of
	// body (hex id when body is nil).
	entry := func(at int, typ string, body []byte, hexID string) {
		id, _ := hex.DecodeString(hexID)
		if body != nil {
			h := sha1.New()
			h.Write([]byte(typ + " " + strconv.Itoa(len(body)) + "\x00"))
			h.Write(body)
			id = h.Sum(nil)
		}
		es = append(es, idxEntry{id: id, crc: crc32.ChecksumIEEE(pack[at:]), off: uint32(at)})
	}
	data := bytes.Repeat(block, size/len(block))
	prev := len(pack)
	pack = append(pack, hdr(3, size)...)
	pack = append(pack, deflate(data)...)
	entry(prev, "blob", data, "")
	for v := 0; v < chain; v++ {
		d := varint(varint(nil, size), size)
		d = append(d, 2, byte(v), byte(v>>8))
		d = copyOp(d, 2, 0xffffff)
		d = copyOp(d, 2+0xffffff, size-2-0xffffff)
		at := len(pack)
		pack = append(pack, hdr(6, len(d))...)
		// The base's offset back from this entry, as git encodes it.
		ofs := at - prev
		enc := []byte{byte(ofs & 127)}
		for ofs >>= 7; ofs > 0; ofs >>= 7 {
			ofs--
			enc = append([]byte{byte(128 | ofs&127)}, enc...)
		}
		pack = append(pack, enc...)
		pack = append(pack, deflate(d)...)
		prev = at
		data[0], data[1] = byte(v), byte(v>>8)
		entry(at, "blob", data, "")
	}
	for i, id := range []string{forged, rev("HEAD")} {
		body := []byte(h.mustGit(t, s, "cat-file", "commit", id))
		at := len(pack)
		pack = append(pack, hdr(1, len(body))...)
		pack = append(pack, deflate(body)...)
		if i == 0 {
			id = rev("HEAD~1") // the lie
		}
		entry(at, "commit", nil, id)
	}
	sum := sha1.Sum(pack)
	pack = append(pack, sum[:]...)
	name = hex.EncodeToString(sum[:])
	return name, pack, writeIdx(es, sum[:])
}

// TestGitHistoryLyingPackPastBudget: packlie's attack with a pack the
// end's check cannot read through: the end says it, and the host's next
// git gc deletes the root commit from the workspace (git believes the
// idx). The start's pack is kept in the store, so a fetch from the store
// gets the whole history back. Seen failing on main's binary (e413f85):
// the store held no pack and the workspace's was gone, the fetch had no
// root commit ("did not send all necessary objects").
//
// Then (GcThenRun) after the host's gc kept the unread lying pack's
// forgery (the gc's pack files the parentless commit under HEAD~1's id:
// git copies a pack's entries as they are), the next run's start kept
// that gc's pack in the store beside the start's true one; git takes the
// newer pack first, so the fetch from the store got the forgery and no
// root commit (review18a). The end's record names the unread pack only: a
// pack made from it on the host is no safer. Seen failing on main
// (e99ca00), root and jailtest: "did not send all necessary objects", no
// root commit from the store.
//
// Fresh: the user's pack changed just before the start (`git pull &&
// jail`, `git gc && jail`): the start kept only packs changed a second
// before it, so the store held no pack and the fetch had no root commit,
// whatever the agent's delta chain or its pack's times (session 19's
// ciweight saw it with a faster fixture, a chain of 30 built sooner, an
// agent's pack backdated past gc's grace: gc drops its unreachable
// objects at once). Seen failing on main (4d8a97a), root and jailtest:
// "not our ref", no root commit from the store.
func TestGitHistoryLyingPackPastBudget(t *testing.T) {
	for _, c := range []struct {
		name  string
		chain int
		back  string // the agent's touch -d of its pack: past gc's grace, after the user's pack
		fresh bool   // the user's pack changed 200 ms before the start
	}{
		{"chain60", 60, "", false},
		{"fresh-chain60-backdated", 60, "21 days ago", true},
		{"fresh-chain30-backdated", 30, "21 days ago", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, ws, root, r := lyingPackPastBudget(t, c.chain, c.back, c.fresh)
			h.git(ws, "gc", "-q")
			if _, err := h.git(ws, "cat-file", "-e", root); err == nil {
				t.Fatalf("the host's gc kept the root commit %s: the attack did not take", root)
			}
			fetchKept(t, h, root, r.stderr)
			fetchKept(t, h, root, r.stderr+runLater(t, h, ws).stderr)
		})
	}
}

// lyingPackPastBudget runs an agent that leaves bigLyingPackChain (chain
// deltas) in a three-commit workspace (the end says it, unread), its
// files' times set back (touch -d back) unless back is "", and returns the
// workspace, its root commit and the run. fresh: the user's pack changed
// just before the start.
func lyingPackPastBudget(t *testing.T, chain int, back string, fresh bool) (h *gitHost, ws, root string, r result) {
	t.Helper()
	h = newGitHost(t)
	ws = workspace(t)
	root = threeCommits(t, h, ws)
	name, pack, idx := bigLyingPackChain(t, h, ws, chain)
	plantPack(t, ws, pack, idx)
	if fresh {
		ps, _ := filepath.Glob(filepath.Join(ws, ".git", "objects", "pack", "pack-*"))
		for _, p := range ps {
			if err := os.Chmod(p, 0o444); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	script := `cd "$2" || exit 1
git reflog expire --expire=now --all || exit 1
P=.git/objects/pack/pack-$3
cp plant/q.pack $P.pack && cp plant/q.idx $P.idx || exit 1
if [ -n "$4" ]; then touch -d "$4" $P.pack $P.idx || exit 1; fi
rm -rf plant
git log --format=%s
`
	r = h.runForging(t, ws, script, []string{"c", "b"}, ws, name, back)
	if !strings.Contains(r.stderr, "pack-"+name) || !strings.Contains(r.stderr, "not checked") {
		t.Fatalf("the end did not say the lying pack was not checked (read through? quarantined?):\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "; the start's packs are kept") {
		t.Errorf("the end does not say the start's packs are kept:\n%s", r.stderr)
	}
	return h, ws, root, r
}

// TestGitHistoryUnreadPackUnkeptSaid: the end's note on a pack it could
// not read through said "the start's packs are kept" (to fetch back after
// the host's gc) when the start had not kept one: here the user's pack
// has a second name in the workspace (a backup), which a start never
// keeps (the agent could write it through that name); so after another
// run used the repository at the start, or a pack changed just before
// it. The agent's pack is one true blob past what the end reads (64 MiB
// of zeros: said unread at once). Seen failing on main (4d8a97a), root
// and jailtest: "the start's packs are kept".
func TestGitHistoryUnreadPackUnkeptSaid(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	threeCommits(t, h, ws)
	ps, _ := filepath.Glob(filepath.Join(ws, ".git", "objects", "pack", "pack-*.pack"))
	if len(ps) != 1 {
		t.Fatalf("packs: %v", ps)
	}
	if err := os.Link(ps[0], filepath.Join(ws, "backup.pack")); err != nil {
		t.Fatal(err)
	}
	s := t.TempDir()
	h.mustGit(t, s, "init", "-q", "--bare", ".")
	big := filepath.Join(s, "big")
	if err := os.WriteFile(big, make([]byte, 65<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(h.mustGit(t, s, "hash-object", "-w", big))
	name := gitStdin(t, h, s, id+"\n", "pack-objects", "-q", filepath.Join(s, "q"))
	pack, err1 := os.ReadFile(filepath.Join(s, "q-"+name+".pack"))
	idx, err2 := os.ReadFile(filepath.Join(s, "q-"+name+".idx"))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	plantPack(t, ws, pack, idx)
	r := h.run(t, ws, `cd "$2" && P=.git/objects/pack/pack-$3 && cp plant/q.pack $P.pack && cp plant/q.idx $P.idx && rm -rf plant`, nil, ws, name)
	mustCode(t, r, 0)
	if !strings.Contains(r.stderr, "pack-"+name) || !strings.Contains(r.stderr, "not checked") {
		t.Fatalf("the end did not say the agent's pack was not checked:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "; the start's packs are kept") || !strings.Contains(r.stderr, "not all of the start's packs are kept") {
		t.Errorf("the end says the start's packs are kept, when the user's pack of two names is not:\n%s", r.stderr)
	}
}

// fetchKept fetches the store's refs into a fresh repository and fails
// unless the root commit and a whole history come back.
func fetchKept(t *testing.T, h *gitHost, root, stderr string) {
	t.Helper()
	alts, _ := filepath.Glob(filepath.Join(h.state, "jail", "git-kept", "*", "objects", "info", "alternates"))
	if len(alts) != 1 {
		t.Fatalf("stores: %v", alts)
	}
	fetchKeptFrom(t, h, filepath.Dir(filepath.Dir(filepath.Dir(alts[0]))), root, stderr)
}

// fetchKeptFrom is fetchKept from the store named.
func fetchKeptFrom(t *testing.T, h *gitHost, store, root, stderr string) {
	t.Helper()
	fresh := t.TempDir()
	h.mustGit(t, fresh, "init", "-q")
	out, err := h.git(fresh, "fetch", "-q", store, "+refs/*:refs/jail-kept/*")
	if err != nil {
		t.Errorf("fetch from the store %s: %v\n%s", store, err, out)
	}
	if out, err := h.git(fresh, "cat-file", "-e", root); err != nil {
		t.Errorf("the store does not give the root commit %s back: %v %s\njail's stderr:\n%s", root, err, out, stderr)
	}
	if out, err := h.git(fresh, "fsck", "--no-dangling"); err != nil {
		t.Errorf("git fsck of the fetched history: %v\n%s", err, out)
	}
}

// runLater runs a second agent that does nothing, a second after the
// host's gc (the start keeps a pack changed before its look less its
// tick, a second on a file system that stamps whole milliseconds), with
// a trail of its own.
func runLater(t *testing.T, h *gitHost, ws string) result {
	t.Helper()
	time.Sleep(1100 * time.Millisecond)
	h.trail = filepath.Join(t.TempDir(), "trail.jsonl")
	r := h.run(t, ws, "true", nil)
	if r.code != 0 {
		t.Fatalf("second run: jail exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	return r
}

// TestGitHistoryForgedLooseGc: the agent writes a parentless commit into
// the loose file of a commit made since the last gc (HEAD~1: loose, its
// true bytes copied into the store at the start); the end said nothing,
// the host's gc walked the forgery and packed it under the true id (the
// root commit, in a pack four weeks old, lost from the workspace), and git
// reads every pack, the store's alternates' too, before a loose object:
// the store's true copy was hidden, the fetch lost the root commit; so
// after the next run's start (its gc pack kept in the store). Seen failing
// on main (e99ca00), root and jailtest: "did not send all necessary
// objects". The end now takes the forgery out of the tree (review18a).
func TestGitHistoryForgedLooseGc(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	root := threeCommits(t, h, ws)
	d := looseForgedHead1(t, h, ws)
	script := `cd "$2" || exit 1
git reflog expire --expire=now --all || exit 1
O=.git/objects/$3
rm -f $O && cp plant/forged $O || exit 1
rm -rf plant
git log --format=%s
`
	r := h.runForging(t, ws, script, []string{"e", "forged"}, ws, d[:2]+"/"+d[2:])
	if !strings.Contains(r.stderr, "a true copy the start had is kept") {
		t.Errorf("the end does not name the store's copy of the forged object:\n%s", r.stderr)
	}
	// The host's gc (on main it lost the root commit from the
	// workspace: its pack is four weeks old); the store gives the
	// history back, then and after the next run's start.
	h.git(ws, "gc", "-q")
	fetchKept(t, h, root, r.stderr)
	fetchKept(t, h, root, r.stderr+runLater(t, h, ws).stderr)
}

// looseForgedHead1 commits d and e on ws's packed history, left loose,
// and plants a parentless commit to forge HEAD~1 with (plant/forged); it
// returns HEAD~1's id.
func looseForgedHead1(t *testing.T, h *gitHost, ws string) string {
	t.Helper()
	for _, m := range []string{"d", "e"} {
		os.WriteFile(filepath.Join(ws, m), []byte(m+"\n"), 0o644)
		h.mustGit(t, ws, "add", m)
		h.mustGit(t, ws, "-c", "commit.gpgsign=false", "-c", "gc.auto=0", "commit", "-q", "-m", m)
	}
	d := strings.TrimSpace(h.mustGit(t, ws, "rev-parse", "HEAD~1"))
	plantFiles(t, ws, map[string][]byte{"forged": forgedCommit(t, h, ws, "HEAD~1")})
	return d
}

// TestGitHistoryForgedLooseInPlaceKept: the agent rewrites in place
// (chmod, write: the same inode, no name made or removed in its directory)
// the loose file of a commit made since the last gc, which the start
// copied into the store: only the store's listing names that file at the
// end. Since session 44 the store is listed while the agent runs (the
// agent here writes after a pause, so the listing comes first); the end
// still takes the forgery out of the tree and names the store's true copy.
func TestGitHistoryForgedLooseInPlaceKept(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	threeCommits(t, h, ws)
	d := looseForgedHead1(t, h, ws)
	obj := filepath.Join(ws, ".git", "objects", d[:2], d[2:])
	before, err := os.Stat(obj)
	if err != nil {
		t.Fatal(err)
	}
	// The end reads every file of a directory changed from a second
	// before the start (the file system's coarse clock): the commit is
	// older than that, or the store's listing is not what finds it.
	time.Sleep(1100 * time.Millisecond)
	r := h.runForging(t, ws, `cd "$2" || exit 1
sleep 0.5
chmod u+w "$3" && cat plant/forged > "$3" || exit 1
rm -rf plant
git log --format=%s
`, []string{"e", "forged"}, ws, obj)
	if !hasPath(h.quarantined(t), obj) {
		t.Errorf("the in-place forgery %s is not in the quarantine manifest\nstderr:\n%s", obj, r.stderr)
	}
	if !strings.Contains(r.stderr, "a true copy the start had is kept") {
		t.Errorf("the end does not name the store's copy of the forged object:\n%s", r.stderr)
	}
	if after, err := os.Stat(obj); err == nil && os.SameFile(before, after) {
		t.Errorf("the forged file is still in the tree as %s", obj)
	}
}

// TestGitHistoryLooseGarbageAppended: the agent appends one byte, in
// place, to the loose file of a commit made since the last gc. git inside
// still reads the commit (its reader stops at the zlib stream's end), but
// git fsck calls the object corrupt ("garbage at end of loose object") and
// the host's git gc fails on it ("failed to run repack") until the user
// finds and mends it by hand. The end took the file for the true object:
// nothing was said. Seen failing on 079631e's binary, as root and as
// jailtest: no quarantine, fsck failing. The end now takes it out of the
// tree and names the store's true copy, which the fetch gives back.
func TestGitHistoryLooseGarbageAppended(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	root := threeCommits(t, h, ws)
	d := looseForgedHead1(t, h, ws)
	obj := filepath.Join(ws, ".git", "objects", d[:2], d[2:])
	// Older than the start's second: only the store's listing names it.
	time.Sleep(1100 * time.Millisecond)
	r := h.run(t, ws, `cd "$2" || exit 1
chmod u+w "$3" && printf x >> "$3" || exit 1
rm -rf plant
git cat-file -e HEAD~1 && echo readable
`, nil, ws, obj)
	if r.code != 0 || !strings.Contains(r.stdout, "readable") {
		t.Fatalf("the attack did not take (exit %d): git inside should still read the commit\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !hasPath(h.quarantined(t), obj) {
		fsck, _ := h.git(ws, "fsck")
		t.Errorf("the object with a byte appended %s is not in the quarantine manifest; the host's git fsck:\n%s\njail's stderr:\n%s", obj, fsck, r.stderr)
	}
	if !strings.Contains(r.stderr, "a true copy the start had is kept") {
		t.Errorf("the end does not name the store's copy of the object:\n%s", r.stderr)
	}
	fetchKept(t, h, root, r.stderr)
}

// The user's file larger than a copy (17 MiB, committed on the host and
// left loose) is kept as a link at the start; the end read the store's
// link with a copy's bound, named the object forged and took it out of
// the tree: a run that did nothing left `git fsck` saying "missing blob".
// Seen failing on main as root and as jailtest.
func TestGitHistoryLargeLooseKept(t *testing.T) {
	h := newGitHost(t)
	ws, _ := largeLooseRepo(t, h)
	r := h.run(t, ws, "true", nil)
	mustCode(t, r, 0)
	if out, err := h.git(ws, "fsck"); err != nil {
		t.Errorf("git fsck after a run that did nothing: %v\n%s\n%s", err, out, r.stderr)
	}
	if q := h.quarantined(t); len(q) != 0 {
		t.Errorf("quarantined: %v", q)
	}
}

// largeLooseRepo is a workspace whose repository has the user's 17 MiB
// file committed on the host and left loose (larger than a copy: the
// start links it), and that object's file.
func largeLooseRepo(t *testing.T, h *gitHost) (ws, obj string) {
	t.Helper()
	ws = workspace(t)
	h.repo(t, ws)
	big := make([]byte, 17<<20)
	rand.Read(big)
	fsWrite(t, ws, "big", string(big), 0o644)
	h.mustGit(t, ws, "add", "big")
	h.mustGit(t, ws, "commit", "-q", "-m", "big")
	id := strings.TrimSpace(h.mustGit(t, ws, "rev-parse", "HEAD:big"))
	return ws, filepath.Join(ws, ".git", "objects", id[:2], id[2:])
}

// TestGitHistoryLinkedLooseWrittenAtOnce: the start links the user's
// large loose object into the store, which changes its file's change
// time, and stamps it so that the end need not read it again (one read
// of 17 MiB, or of every object a first start links past its copy
// time). The agent's first act, at once, writes a byte into that file in
// place: the end still reads it and takes it out of the tree (git fsck
// calls it corrupt; the host's gc fails on it). Seen failing with the
// end's stamp check comparing the inode alone: nothing said, the file
// left.
func TestGitHistoryLinkedLooseWrittenAtOnce(t *testing.T) {
	h := newGitHost(t)
	ws, obj := largeLooseRepo(t, h)
	r := h.run(t, ws, `chmod u+w "$3" && printf x >> "$3" || exit 1`, nil, ws, obj)
	mustCode(t, r, 0)
	if !hasPath(h.quarantined(t), obj) {
		fsck, _ := h.git(ws, "fsck")
		t.Errorf("the linked object written at once %s is not in the quarantine manifest; the host's git fsck:\n%s\njail's stderr:\n%s", obj, fsck, r.stderr)
	}
}

// forgedCommit is a loose object file (zlib'd) of a parentless commit of
// rev's tree in dir's repository, "forged" its message: written under
// rev's id, it cuts the history off there.
func forgedCommit(t *testing.T, h *gitHost, dir, rev string) []byte {
	t.Helper()
	tree := strings.TrimSpace(h.mustGit(t, dir, "rev-parse", rev+"^{tree}"))
	body := "tree " + tree + "\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n\nforged\n"
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write([]byte("commit " + strconv.Itoa(len(body)) + "\x00" + body))
	w.Close()
	return z.Bytes()
}
