//go:build linux

package tests

// End-to-end tests of the end's check of the packs a run made (packlie): a
// pack whose index files a forged object under a real object's id.

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// lieIdx rewrites an idx (version 2, sha1) so that the entry filed under
// from is filed under to: the ids re-sorted with their CRCs and offsets,
// the fan-out and the idx's own checksum made again. The pack is
// unchanged: its entry now answers for to with from's bytes.
func lieIdx(t *testing.T, b []byte, from, to string) []byte {
	t.Helper()
	f, _ := hex.DecodeString(from)
	g, _ := hex.DecodeString(to)
	const hdr = 8 + 256*4
	n := int(binary.BigEndian.Uint32(b[8+255*4:]))
	es := make([]idxEntry, n)
	for i := range es {
		es[i].id = append([]byte(nil), b[hdr+i*20:hdr+(i+1)*20]...)
		es[i].crc = binary.BigEndian.Uint32(b[hdr+n*20+i*4:])
		es[i].off = binary.BigEndian.Uint32(b[hdr+n*24+i*4:])
		if es[i].off&0x80000000 != 0 {
			t.Fatal("lieIdx: large offsets not handled")
		}
	}
	found := false
	for i := range es {
		if bytes.Equal(es[i].id, f) {
			es[i].id, found = g, true
		}
	}
	if !found {
		t.Fatalf("lieIdx: %s not in the idx", from)
	}
	return writeIdx(es, b[len(b)-40:len(b)-20])
}

// idxEntry is one object of an idx: its id, its entry's CRC and offset.
type idxEntry struct {
	id       []byte
	crc, off uint32
}

// writeIdx writes an idx (version 2, sha1, offsets below 2 GiB) of the
// entries (sorted here) for the pack whose checksum is packSum.
func writeIdx(es []idxEntry, packSum []byte) []byte {
	sort.Slice(es, func(i, j int) bool { return bytes.Compare(es[i].id, es[j].id) < 0 })
	out := []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}
	var fan [256]uint32
	for _, e := range es {
		for k := int(e.id[0]); k < 256; k++ {
			fan[k]++
		}
	}
	for _, v := range fan {
		out = binary.BigEndian.AppendUint32(out, v)
	}
	for _, e := range es {
		out = append(out, e.id...)
	}
	for _, e := range es {
		out = binary.BigEndian.AppendUint32(out, e.crc)
	}
	for _, e := range es {
		out = binary.BigEndian.AppendUint32(out, e.off)
	}
	out = append(out, packSum...)
	sum := sha1.Sum(out)
	return append(out, sum[:]...)
}

// lyingPack makes, in a scratch repository outside ws, a pack holding a
// true copy of HEAD and a parentless copy of HEAD~1 that its idx files
// under HEAD~1's real id (lane B's reproduction, gitpacks3). It returns the
// pack's name (its checksum) and its two files' bytes.
func lyingPack(t *testing.T, h *gitHost, ws string) (name string, pack, idx []byte) {
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
	name = gitStdin(t, h, s, forged+"\n"+rev("HEAD")+"\n", "pack-objects", "-q", filepath.Join(s, "q"))
	pack, err := os.ReadFile(filepath.Join(s, "q-"+name+".pack"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err = os.ReadFile(filepath.Join(s, "q-"+name+".idx"))
	if err != nil {
		t.Fatal(err)
	}
	return name, pack, lieIdx(t, idx, forged, rev("HEAD~1"))
}

func gitStdin(t *testing.T, h *gitHost, dir, in string, args ...string) string {
	t.Helper()
	cmd := h.cmd(dir, args...)
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("host git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// threeCommits makes ws a repository of three commits, packed by hand (no
// commit-graph: a fresh clone's or a hand repack's shape), the pack four
// weeks old: past git gc's two weeks of grace for what it finds
// unreachable.
func threeCommits(t *testing.T, h *gitHost, ws string) (root string) {
	t.Helper()
	h.repo(t, ws)
	for _, m := range []string{"b", "c"} {
		os.WriteFile(filepath.Join(ws, m), []byte(m+"\n"), 0o644)
		h.mustGit(t, ws, "add", m)
		h.mustGit(t, ws, "-c", "commit.gpgsign=false", "commit", "-q", "-m", m)
	}
	h.mustGit(t, ws, "repack", "-q", "-a", "-d")
	old := time.Now().Add(-28 * 24 * time.Hour)
	ps, _ := filepath.Glob(filepath.Join(ws, ".git", "objects", "pack", "pack-*"))
	for _, p := range ps {
		os.Chtimes(p, old, old)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".git", "objects", "info", "commit-graph")); err == nil {
		t.Fatal("a commit-graph: git believes its parents, not the pack's")
	}
	return strings.TrimSpace(h.mustGit(t, ws, "rev-parse", "HEAD~2"))
}

// plantFiles writes files (name: bytes) into ws/plant, where an agent's
// script copies its forgeries from (and removes them).
func plantFiles(t *testing.T, ws string, files map[string][]byte) {
	t.Helper()
	plant := filepath.Join(ws, "plant")
	if err := os.Mkdir(plant, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(plant, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// plantPack plants a pack and its idx as plant/q.pack and plant/q.idx.
func plantPack(t *testing.T, ws string, pack, idx []byte) {
	t.Helper()
	plantFiles(t, ws, map[string][]byte{"q.pack": pack, "q.idx": idx})
}

// runForging runs an agent's script (h.run) that ends with git log
// --format=%s and fails the test unless jail exits 0 and the log inside
// is want: the forgery took, or the test proves nothing.
func (h *gitHost) runForging(t *testing.T, ws, script string, want []string, args ...string) result {
	t.Helper()
	r := h.run(t, ws, script, nil, args...)
	if r.code != 0 {
		t.Fatalf("jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if got := strings.Fields(r.stdout); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("inside, git log shows %q, want the forged history %q (the attack did not take)\nstderr:\n%s", got, want, r.stderr)
	}
	return r
}

// gcKeepsRoot runs the host's git gc in dir and fails the test if the
// root commit is gone after it.
func (h *gitHost) gcKeepsRoot(t *testing.T, dir, root string, r result) {
	t.Helper()
	gc, gcErr := h.git(dir, "gc", "-q")
	if out, err := h.git(dir, "cat-file", "-e", root); err != nil {
		fsck, _ := h.git(dir, "fsck")
		t.Errorf("after the host's git gc (%v: %s), the root commit %s is gone: %v %s\nfsck:\n%s\njail's stderr:\n%s", gcErr, gc, root, err, out, fsck, r.stderr)
	}
}

// TestGitHistoryLyingPack: the pack directory is writable inside (a
// fetch, a gc make packs there). The agent adds a pack holding a true copy
// of HEAD (git looks in the newest pack first) and a parentless commit its
// idx files under HEAD~1's id, then expires the reflogs. Inside, git log
// still shows every commit but the root; on the host, `git gc` succeeds and
// deletes the root commit (unreachable through the forged parent, in a
// pack older than two weeks) and rewrites HEAD~1 as the forgery. Seen
// failing on main's binary (2d4ab36): the host gc lost the root commit, and
// the run's end said nothing.
func TestGitHistoryLyingPack(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	root := threeCommits(t, h, ws)
	name, pack, idx := lyingPack(t, h, ws)
	plantPack(t, ws, pack, idx)
	script := `cd "$2" || exit 1
git reflog expire --expire=now --all || exit 1
P=.git/objects/pack/pack-$3
cp plant/q.pack $P.pack && cp plant/q.idx $P.idx || exit 1
rm -rf plant
git log --format=%s
`
	r := h.runForging(t, ws, script, []string{"c", "b"}, ws, name)
	t.Logf("jail stderr:\n%s", r.stderr)
	lie := filepath.Join(ws, ".git", "objects", "pack", "pack-"+name+".idx")
	h.gcKeepsRoot(t, ws, root, r)
	if out, err := h.git(ws, "fsck", "--no-dangling"); err != nil {
		t.Errorf("git fsck after the host's gc: %v\n%s", err, out)
	}
	if !hasPath(h.quarantined(t), lie) || !hasPath(h.trailQuarantine(t), lie) {
		t.Errorf("the lying pack's %s is not in the quarantine manifest and the trail\nstderr:\n%s", lie, r.stderr)
	}
	if !strings.Contains(r.stderr, lie) {
		t.Errorf("stderr does not name %s:\n%s", lie, r.stderr)
	}
}

// TestGitPacksMadeInsideKept: what git itself writes in the pack directory
// during a run (a fetch, a repack, a gc) is never taken for a lie: nothing
// quarantined, nothing said about packs, and the history is whole. The
// repack and the gc write reverse indexes (.rev, git 2.41's default): true
// ones, kept (gitkeep.RevTrue).
func TestGitPacksMadeInsideKept(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	root := threeCommits(t, h, ws)
	up := filepath.Join(ws, "up")
	os.Mkdir(up, 0o755)
	h.repo(t, up)
	script := `cd "$2" || exit 1
git fetch -q ./up main:refs/remotes/up/main || exit 1
echo d > d && git add d && git -c user.name=a -c user.email=a@b commit -q -m d || exit 1
git -c pack.writeReverseIndex=true repack -q -a -d || exit 1
echo e > e && git add e && git -c user.name=a -c user.email=a@b commit -q -m e || exit 1
git -c pack.writeReverseIndex=true gc -q || exit 1
ls .git/objects/pack
`
	r := h.run(t, ws, script, nil, ws)
	if r.code != 0 {
		t.Fatalf("jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, ".rev") {
		t.Fatalf("no reverse index written inside:\n%s", r.stdout)
	}
	// The gc's commit-graph leaves the tree (review15f): not a pack.
	for _, q := range h.quarantined(t) {
		if strings.Contains(q, "/objects/pack/") {
			t.Errorf("quarantined: %s\nstderr:\n%s", q, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "objects/pack") {
		t.Errorf("stderr speaks of a pack:\n%s", r.stderr)
	}
	h.mustGit(t, ws, "gc", "-q")
	h.mustGit(t, ws, "cat-file", "-e", root)
	h.mustGit(t, ws, "fsck", "--no-dangling")
}

// lieMidx files id c at id a's entry in a multi-pack-index (version 1,
// sha1; its OIDL and OOFF chunks) and makes its checksum again: c is then
// read as a's bytes, and c's own entry is named by no id.
func lieMidx(t *testing.T, b []byte, a, c string) []byte {
	t.Helper()
	if string(b[:4]) != "MIDX" || b[4] != 1 || b[5] != 1 {
		t.Fatalf("lieMidx: not a sha1 multi-pack-index v1: %x", b[:8])
	}
	chunks := map[string]uint64{}
	for i := 0; i < int(b[6]); i++ {
		e := b[12+i*12:]
		chunks[string(e[:4])] = binary.BigEndian.Uint64(e[4:12])
	}
	oidl, ooff := chunks["OIDL"], chunks["OOFF"]
	n := int(binary.BigEndian.Uint32(b[chunks["OIDF"]+255*4:]))
	at := func(h string) int {
		id, _ := hex.DecodeString(h)
		for i := 0; i < n; i++ {
			if bytes.Equal(b[oidl+uint64(i*20):oidl+uint64(i*20+20)], id) {
				return i
			}
		}
		t.Fatalf("lieMidx: %s not in the multi-pack-index", h)
		return 0
	}
	out := append([]byte(nil), b...)
	i, j := at(a), at(c)
	ei, ej := ooff+uint64(i*8), ooff+uint64(j*8)
	copy(out[ej:ej+8], b[ei:ei+8])
	sum := sha1.Sum(out[:len(out)-20])
	copy(out[len(out)-20:], sum[:])
	return out
}

// TestGitHistoryLyingMultiPackIndex: the same forgery through a
// multi-pack-index, which git reads before each pack's own idx: the
// agent's pack is honest (the parentless commit under its own id), the
// index it writes beside it files HEAD~1's id at that commit's entry. The
// pack check reads packs by their idx and passes this one: the index must
// leave the tree itself. Seen failing on main's binary (2d4ab36): the host
// gc's repack dropped the root commit (the gc then failed in its prune:
// "Could not read" the root; fsck "missing commit").
func TestGitHistoryLyingMultiPackIndex(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	root := threeCommits(t, h, ws)
	rev := func(r string) string { return strings.TrimSpace(h.mustGit(t, ws, "rev-parse", r)) }
	// The index is made on a copy of the repository (same pack names):
	// the agent only copies it in.
	cp := filepath.Join(t.TempDir(), "cp")
	h.mustGit(t, filepath.Dir(cp), "clone", "-q", "--bare", "--no-local", ws, cp)
	os.RemoveAll(filepath.Join(cp, "objects", "pack"))
	os.MkdirAll(filepath.Join(cp, "objects", "pack"), 0o755)
	ps, _ := filepath.Glob(filepath.Join(ws, ".git", "objects", "pack", "pack-*"))
	for _, p := range ps {
		b, _ := os.ReadFile(p)
		os.WriteFile(filepath.Join(cp, "objects", "pack", filepath.Base(p)), b, 0o444)
	}
	tree := rev("HEAD~1^{tree}")
	forged := gitStdin(t, h, cp, "tree "+tree+"\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n\nb\n", "hash-object", "-t", "commit", "-w", "--stdin")
	q := gitStdin(t, h, cp, forged+"\n", "pack-objects", "-q", filepath.Join(cp, "objects", "pack", "pack"))
	h.mustGit(t, cp, "multi-pack-index", "write")
	midx, err := os.ReadFile(filepath.Join(cp, "objects", "pack", "multi-pack-index"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"midx": lieMidx(t, midx, forged, rev("HEAD~1"))}
	for _, ext := range []string{".pack", ".idx"} {
		b, err := os.ReadFile(filepath.Join(cp, "objects", "pack", "pack-"+q+ext))
		if err != nil {
			t.Fatal(err)
		}
		files["q"+ext] = b
	}
	plantFiles(t, ws, files)
	script := `cd "$2" || exit 1
git reflog expire --expire=now --all || exit 1
P=.git/objects/pack
cp plant/q.pack $P/pack-$3.pack && cp plant/q.idx $P/pack-$3.idx && cp plant/midx $P/multi-pack-index || exit 1
rm -rf plant
git log --format=%s
`
	r := h.runForging(t, ws, script, []string{"c", "b"}, ws, q)
	h.gcKeepsRoot(t, ws, root, r)
	m := filepath.Join(ws, ".git", "objects", "pack", "multi-pack-index")
	if !hasPath(h.quarantined(t), m) || !strings.Contains(r.stderr, m) {
		t.Errorf("%s is not in the quarantine manifest or not named\nstderr:\n%s", m, r.stderr)
	}
}

// TestGitHistoryLyingPackPastKept: the end's pack check read only the
// repositories whose store the start kept, the 64 shallowest. Repositories
// an earlier run left (git init in a loop, here 64 of them one level down,
// named to sort first) pushed a deeper repository of the user's (a nested
// checkout, a submodule's git dir) out of that set: its lying pack was not
// read and the host's git gc lost its root commit. Seen failing on main's
// binary (e413f85), as root and as jailtest: the root commit gone after the
// host gc, nothing quarantined.
func TestGitHistoryLyingPackPastKept(t *testing.T) {
	h, ws, vic := pastKeptRepo(t)
	root := threeCommits(t, h, vic)
	name, pack, idx := lyingPack(t, h, vic)
	plantPack(t, ws, pack, idx)
	script := `cd "$2/z" || exit 1
git reflog expire --expire=now --all || exit 1
P=.git/objects/pack/pack-$3
cp ../plant/q.pack $P.pack && cp ../plant/q.idx $P.idx || exit 1
rm -rf ../plant
git log --format=%s
`
	r := h.runForging(t, ws, script, []string{"c", "b"}, ws, name)
	lie := filepath.Join(vic, ".git", "objects", "pack", "pack-"+name+".idx")
	h.gcKeepsRoot(t, vic, root, r)
	if !hasPath(h.quarantined(t), lie) {
		t.Errorf("the lying pack's %s is not in the quarantine manifest\nstderr:\n%s", lie, r.stderr)
	}
}

// pastKeptRepo is a workspace with 64 repositories an earlier run left
// (git init in a loop, one level down, named to sort first) and the
// user's directory z beside them: a repository made there is past the
// start's kept bound (no store).
func pastKeptRepo(t *testing.T) (*gitHost, string, string) {
	h := newGitHost(t)
	ws := workspace(t)
	for i := 0; i < 64; i++ {
		h.mustGit(t, ws, "init", "-q", filepath.Join(ws, fmt.Sprintf("a%02d", i)))
	}
	vic := filepath.Join(ws, "z")
	if err := os.Mkdir(vic, 0o755); err != nil {
		t.Fatal(err)
	}
	return h, ws, vic
}
