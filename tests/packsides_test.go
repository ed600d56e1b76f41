//go:build linux

package tests

// End-to-end tests of the files git reads beside a pack (a bitmap, a
// reverse index) and believes unchecked: one the agent plants or rewrites
// beside a start pack leaves the tree at the end (gitkeep.Sides).

import (
	"crypto/sha1"
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// lieBitmap rewrites a pack bitmap (version 1, sha1) so that each commit
// it has a bitmap for reaches only itself: the type bitmaps, the name-hash
// cache and the lookup table (if any: none unless asked) stay, each
// commit's bitmap is one literal run holding its own bit, and the file's
// checksum is made again.
func lieBitmap(t *testing.T, b []byte) []byte {
	t.Helper()
	if string(b[:4]) != "BITM" || binary.BigEndian.Uint16(b[4:]) != 1 {
		t.Fatalf("lieBitmap: not a v1 bitmap: %x", b[:8])
	}
	n := int(binary.BigEndian.Uint32(b[8:]))
	off := 12 + 20
	ewahEnd := func(o int) (bits uint32, end int) {
		return binary.BigEndian.Uint32(b[o:]), o + 8 + 8*int(binary.BigEndian.Uint32(b[o+4:])) + 4
	}
	out := append([]byte(nil), b[:off]...)
	for i := 0; i < 4; i++ { // commits, trees, blobs, tags
		_, e := ewahEnd(off)
		out, off = append(out, b[off:e]...), e
	}
	for i := 0; i < n; i++ {
		pos := binary.BigEndian.Uint32(b[off:])
		bits, e := ewahEnd(off + 6)
		words := make([]uint64, (bits+63)/64)
		words[pos/64] |= 1 << (pos % 64)
		out = binary.BigEndian.AppendUint32(out, pos)
		out = append(out, 0, b[off+5]) // no xor with an earlier bitmap; its flags
		out = binary.BigEndian.AppendUint32(out, bits)
		out = binary.BigEndian.AppendUint32(out, uint32(len(words)+1))
		out = binary.BigEndian.AppendUint64(out, uint64(len(words))<<33) // a marker: no run, then the literals
		for _, w := range words {
			out = binary.BigEndian.AppendUint64(out, w)
		}
		out = binary.BigEndian.AppendUint32(out, 0)
		off = e
	}
	out = append(out, b[off:len(b)-20]...)
	sum := sha1.Sum(out)
	return append(out, sum[:]...)
}

// lieRev makes a reverse index (.rev, version 1, sha1) for the pack whose
// idx is ib with two positions of the true order swapped.
func lieRev(t *testing.T, ib []byte) []byte {
	t.Helper()
	const hdr = 8 + 256*4
	n := int(binary.BigEndian.Uint32(ib[8+255*4:]))
	if n < 3 {
		t.Fatalf("lieRev: %d objects", n)
	}
	offs := make([]uint32, n)
	order := make([]uint32, n)
	for i := range offs {
		offs[i] = binary.BigEndian.Uint32(ib[hdr+n*24+i*4:])
		order[i] = uint32(i)
	}
	sort.Slice(order, func(i, j int) bool { return offs[order[i]] < offs[order[j]] })
	order[1], order[2] = order[2], order[1]
	out := []byte("RIDX\x00\x00\x00\x01\x00\x00\x00\x01")
	for _, o := range order {
		out = binary.BigEndian.AppendUint32(out, o)
	}
	out = append(out, ib[len(ib)-40:len(ib)-20]...)
	sum := sha1.Sum(out)
	return append(out, sum[:]...)
}

// startPack returns the base path (.../pack-X) of ws's one pack.
func startPack(t *testing.T, ws string) string {
	t.Helper()
	ps, _ := filepath.Glob(filepath.Join(ws, ".git", "objects", "pack", "pack-*.pack"))
	if len(ps) != 1 {
		t.Fatalf("packs: %v, want one", ps)
	}
	return strings.TrimSuffix(ps[0], ".pack")
}

// TestGitHistoryLyingBitmap: the start's pack has a bitmap (git repack
// -adb; a bare repository's gc writes one by default), which is no part of
// the read-only pack. The agent rewrites it so that every commit reaches
// only itself. On the host, every push then sends the commits alone (the
// remote refuses it), and `git repack -adb` copies the lie into the bitmap
// it writes. Seen failing on main's binary (e413f85), as root and as
// jailtest: the host's push after the run failed ("failed to push some
// refs"), nothing said.
func TestGitHistoryLyingBitmap(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	threeCommits(t, h, ws)
	h.mustGit(t, ws, "repack", "-q", "-a", "-d", "-b")
	base := startPack(t, ws)
	b, err := os.ReadFile(base + ".bitmap")
	if err != nil {
		t.Fatal(err)
	}
	plantFiles(t, ws, map[string][]byte{"b": lieBitmap(t, b)})
	script := `cd "$2" || exit 1
B=$3.bitmap
rm -f $B && cp plant/b $B || exit 1
rm -rf plant
git rev-list --use-bitmap-index --objects --all | wc -l
`
	r := h.run(t, ws, script, nil, ws, base)
	if r.code != 0 {
		t.Fatalf("jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if got := strings.TrimSpace(r.stdout); got != "1" {
		t.Fatalf("inside, the bitmap walk found %s objects, want 1 (the lie did not take)", got)
	}
	remote := filepath.Join(t.TempDir(), "remote")
	h.mustGit(t, filepath.Dir(remote), "init", "-q", "--bare", remote)
	if out, err := h.git(ws, "push", "-q", remote, "--all"); err != nil {
		t.Errorf("the host's push after the run: %v\n%s\njail's stderr:\n%s", err, out, r.stderr)
	}
	if !hasPath(h.quarantined(t), base+".bitmap") || !strings.Contains(r.stderr, base+".bitmap") {
		t.Errorf("%s.bitmap is not in the quarantine manifest or not named\nstderr:\n%s", base, r.stderr)
	}
}

// TestGitHistoryLyingRev: the agent writes a reverse index (.rev) beside
// the start's read-only pack whose order is not the pack's. Git 2.39 reads
// it unchecked: the host's `git gc` and `git repack -ad` then fail
// ("packed object ... is corrupt") until it goes. A true .rev, which git
// writes with pack.writeReverseIndex (the default from git 2.41), stays:
// TestGitPacksMadeInsideKept. Seen failing on main's binary (e413f85), as
// root and as jailtest: the host's gc failed after the run, nothing said.
func TestGitHistoryLyingRev(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	root := threeCommits(t, h, ws)
	base := startPack(t, ws)
	ib, err := os.ReadFile(base + ".idx")
	if err != nil {
		t.Fatal(err)
	}
	plantFiles(t, ws, map[string][]byte{"r": lieRev(t, ib)})
	script := `cd "$2" || exit 1
cp plant/r $3.rev || exit 1
rm -rf plant
git cat-file --batch-all-objects --batch-check='%(objectsize:disk)' | grep -c missing
`
	r := h.run(t, ws, script, nil, ws, base)
	if r.code != 0 || strings.TrimSpace(r.stdout) == "0" {
		t.Fatalf("jail exit %d (want 0 and objects git cannot size inside: the lie did not take)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if out, err := h.git(ws, "gc", "-q"); err != nil {
		t.Errorf("the host's git gc after the run: %v\n%s\njail's stderr:\n%s", err, out, r.stderr)
	}
	h.mustGit(t, ws, "cat-file", "-e", root)
	if !hasPath(h.quarantined(t), base+".rev") || !strings.Contains(r.stderr, base+".rev") {
		t.Errorf("%s.rev is not in the quarantine manifest or not named\nstderr:\n%s", base, r.stderr)
	}
}

// A host repack made just before a start (a script's `git gc && jail`,
// an IDE's auto-gc) counted as the run's: the end's pack check took the
// host's multi-pack-index and bitmap out of the tree as changed in the
// run (and a whole-history pack past the reader's bounds was said
// unchecked and recorded so: its store never kept it after). A file
// system stamping finer than a millisecond stamps a change in the run at
// most a scheduler tick before the start: older stamps are the host's.
// The agent's own rewrite of the bitmap still leaves the tree. Seen
// failing on main: both files of the host's repack were moved out.
func TestGitHostRepackBeforeStart(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	h.repo(t, ws)
	h.mustGit(t, ws, "repack", "-q", "-adb", "--write-midx")
	pd := filepath.Join(ws, ".git", "objects", "pack")
	bitmaps, _ := filepath.Glob(filepath.Join(pd, "multi-pack-index-*.bitmap"))
	if len(bitmaps) != 1 {
		t.Fatalf("git repack --write-midx -b made no bitmap: %v", bitmaps)
	}
	host := []string{filepath.Join(pd, "multi-pack-index"), bitmaps[0]}
	time.Sleep(150 * time.Millisecond) // past a scheduler tick, well within the old second
	r := h.run(t, ws, "true", nil)
	mustCode(t, r, 0)
	for _, p := range host {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("the host's %s, made before the start, was taken: %v\n%s", filepath.Base(p), err, r.stderr)
		}
	}
	if q := h.quarantined(t); len(q) != 0 {
		t.Errorf("quarantined: %v", q)
	}
	// The agent's change to the same bitmap is the run's.
	h.trail = filepath.Join(t.TempDir(), "trail2.jsonl")
	r = h.run(t, ws, `b=$(ls .git/objects/pack/multi-pack-index-*.bitmap) && cp "$b" x && rm -f "$b" && mv x "$b"`, nil)
	mustCode(t, r, 0)
	h.expectSafe(t, r, "", bitmaps[0])
}
