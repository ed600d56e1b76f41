package gitkeep

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jail-sandbox/jail/gitguard"
)

// The packs a run made, checked at its end (packlie). The pack directory
// stays writable inside (a fetch, a commit's auto-gc, a repack write packs
// there); the packs of the start are read-only. Git looks an object up in
// the newest pack first and believes the idx: an agent's pack whose idx
// files a forged commit (no parent) under a real commit's id makes the
// host's next `git gc` walk the forgery, repack it under the real id and
// delete what only the real commit led to (the packs of the start are
// deleted by that gc, read-only only inside). Git never checks an idx
// against the pack's bytes on the way (fsck does). So each pack made during
// the run is read as the prune reads one (inflate, deltas applied, hash):
// every entry must hash to the id its idx files it under.

// Width returns the object id size of the repository a store keeps, or
// of a git dir (32 for sha256, else 20). Its config is read bounded and
// only as a plain file: a git dir's is in a tree the agent wrote.
func Width(store string) int {
	if objectFormat(store) == "sha256" {
		return 32
	}
	return 20
}

// objectFormat is the object format git reads a repository's objects in
// ("sha256" or "sha1"), from its config as git's read_repository_format
// does: extensions.objectformat, the last one written, compared as git
// compares it (exact), any spelling of the section and key
// ("[Extensions] objectFormat=sha256"). A text search missed those: a
// sha256 repository the agent planted was read at sha1's width.
func objectFormat(gitDir string) string {
	b, _ := readFile(filepath.Join(gitDir, "config"), maxConfig)
	entries, _ := gitguard.ParseConfig(b)
	format := "sha1"
	for _, e := range entries {
		if e.Section == "extensions" && !e.HasSub && e.Key == "objectformat" {
			format = e.Value
		}
	}
	if format != "sha256" {
		return "sha1"
	}
	return format
}

// Changed is what a run's end finds changed in a git dir's pack directory
// since (the run's start, less the file system's timestamp tick): the
// packs whose .idx or .pack is new or changed (their base path, .../pack-X,
// smallest first: a big pack a gc made inside takes the time budget after
// the small ones), and other files git reads objects through.
type Changed struct {
	Dir   string   // the pack directory, links resolved (as git reaches it)
	Packs []string // base paths of new or changed packs
	// Index is the multi-pack-index when it changed, or names a pack
	// that changed: git reads objects through it before the packs' own
	// idx files.
	Index string
	// Side are the new or changed files git reads beside a pack or the
	// multi-pack-index, which a host git believes as they are (Sides).
	Side []string
	// Replaced: the directory is not the one git reached at the start
	// (renamed into place, a link retargeted, made in the run): every
	// file in it counts as changed.
	Replaced bool
}

// Sides are the files git reads beside a pack (pack-X.bitmap, .rev,
// .mtimes) and beside the multi-pack-index (multi-pack-index-X.bitmap,
// .rev), each a cache git makes again and works without. Git checks none
// of them against the pack (git 2.39.5, tried): a bitmap whose commits
// reach fewer objects than they do makes every push and every fetch served
// from the repository send too little (the other side refuses it:
// "failed to push some refs"), and `git repack -adb` copies the lie into
// the bitmap it writes, so it outlives the host's gcs; a reverse index
// (.rev) whose order is not the pack's makes the host's `git gc` and
// `git repack -ad` fail ("packed object ... is corrupt") until it goes.
// A .mtimes (a cruft pack's object ages) decides what gc --cruft prunes.
var Sides = []string{".bitmap", ".rev", ".mtimes"}

// side reports whether name is a file git reads beside a pack or the
// multi-pack-index (Sides).
func side(name string) bool {
	for _, ext := range Sides {
		if b, ok := strings.CutSuffix(name, ext); ok {
			return strings.HasPrefix(b, "pack-") || (ext != ".mtimes" && strings.HasPrefix(b, "multi-pack-index-"))
		}
	}
	return false
}

// PackDir is gitDir's pack directory as git reaches it (links resolved),
// looked at before the run (ChangedPacks' was); nil when there is none.
func PackDir(gitDir string) os.FileInfo {
	// One stat, links followed in the kernel (27 µs with EvalSymlinks
	// first, 2,000 planted repositories a start: 54 ms).
	fi, err := os.Stat(filepath.Join(gitDir, "objects", "pack"))
	if err != nil {
		return nil
	}
	return fi
}

// ChangedPacks reads gitDir's objects/pack for files changed since: a
// change time (which the agent cannot set back; a new name, a rename, a
// write, a hard link all set it) at or after it (changedAt: since is the
// start's clock less a scheduler tick; a file system stamping in
// milliseconds or coarser gets a second more). was is that directory
// before the run (PackDir): when the directory git reaches now is another
// one, every file in it counts as changed. Nothing of the start's is read
// but that one stat: the run's start costs nothing more.
//
// kept are the pack files the start found to be the store's kept packs
// (KeptStamps): one still that inode with that change time is not the
// run's, though its change time is the start's link's (review18e).
func ChangedPacks(gitDir string, since time.Time, was os.FileInfo, kept map[string]os.FileInfo) (Changed, error) {
	var c Changed
	// As git reaches it: a pack directory the agent replaced with a link
	// is where git on the host looks.
	dir, err := filepath.EvalSymlinks(filepath.Join(gitDir, "objects", "pack"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return c, nil
		}
		return c, fmt.Errorf("gitkeep: %w", err)
	}
	c.Dir = dir
	// Why: a directory renamed into place (or a link retargeted to one)
	// keeps its files' change times: a lying pack written in an earlier
	// run where no end looks (objects/evil/: not a pack directory) is
	// older than this run, and its pack directory, renamed over
	// objects/pack in this one (not pinned: no pack of the start's in it),
	// would be read by no one before the host's gc (review17c). Only the
	// directory that was git's at the start vouches for its old files.
	fi, err := os.Stat(dir)
	if err != nil {
		return c, fmt.Errorf("gitkeep: %w", err)
	}
	c.Replaced = was == nil || !os.SameFile(was, fi)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return c, fmt.Errorf("gitkeep: %w", err)
	}
	changed := func(n string) (int64, bool) {
		fi, err := os.Lstat(filepath.Join(dir, n))
		if err != nil {
			return 0, false
		}
		_, ctime, ok := linkInfo(fi)
		if k := kept[n]; ok && !c.Replaced && k != nil && os.SameFile(k, fi) {
			// Nothing changed it since the start's look: a write, a
			// rename, a link would have set its change time.
			if _, kc, _ := linkInfo(k); kc == ctime {
				return fi.Size(), false
			}
		}
		// Off Linux no ctime is read: every pack counts as new.
		return fi.Size(), !ok || c.Replaced || changedAt(ctime, since)
	}
	type cand struct {
		base string
		size int64
	}
	var cs []cand
	for _, e := range ents {
		n := e.Name()
		if n == "multi-pack-index" {
			if _, ch := changed(n); ch {
				c.Index = filepath.Join(dir, n)
			}
			continue
		}
		if side(n) {
			if _, ch := changed(n); ch {
				c.Side = append(c.Side, filepath.Join(dir, n))
			}
			continue
		}
		b, ok := strings.CutSuffix(n, ".idx")
		if !ok || !strings.HasPrefix(b, "pack-") {
			continue
		}
		// Git takes a pack by its .idx, and only with its .pack (which
		// it stats through a link): either one changed makes the pair new.
		si, ci := changed(n)
		sp, cp := changed(b + ".pack")
		if ci || cp {
			cs = append(cs, cand{filepath.Join(dir, b), si + sp})
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].size < cs[j].size })
	for _, x := range cs {
		c.Packs = append(c.Packs, x.base)
	}
	if c.Index == "" && len(c.Packs) > 0 {
		// A multi-pack-index older than the run that names a pack
		// rewritten in it (one that was not read-only: past the mount
		// budget, a run without mounts) files ids at offsets of the old
		// bytes: the new ones may be anything there, and the pack's own
		// idx, which VerifyPack reads, is not what git reads. A pack git
		// writes has a new name (its checksum): never in an older index.
		p := filepath.Join(dir, "multi-pack-index")
		if b, err := readFile(p, maxIdx); err == nil {
			for _, base := range c.Packs {
				if bytes.Contains(b, []byte(filepath.Base(base)+".idx\x00")) {
					c.Index = p
					break
				}
			}
		}
	}
	return c, nil
}

// coarseStamp is how far behind the clock a file system whose change
// times are whole milliseconds or coarser (ext4 with 128-byte inodes,
// exFAT, a network file system) may stamp a change: up to its
// granularity (a second; Linux allows powers of ten up to it).
const coarseStamp = int64(time.Second)

// changedAt reports whether a file stamped ct may have changed at or
// after since (the start's clock less the coarse clock's tick). Why: with
// a second of slack on every file system, a host repack made in the
// second before a start (a script's `git gc && jail`) was the run's: the
// end took the user's multi-pack-index and bitmap out of the tree, and
// said a whole-history pack past the reader's bounds unchecked and
// recorded it so: its store never kept it (lefthook19). A stamp with a
// digit below the millisecond comes from a file system finer than one
// (granularities are powers of ten), which stamps a change in the run
// no earlier than since; only a stamp of whole milliseconds gets the
// second.
func changedAt(ct int64, since time.Time) bool {
	s := since.UnixNano()
	if ct >= s {
		return true
	}
	return coarseFS(ct) && ct >= s-coarseStamp
}

// coarseFS tells whether a change time ct is of whole milliseconds, as a
// file system of that granularity or a coarser one stamps (one finer
// stamps a digit below the millisecond but once in a million).
func coarseFS(ct int64) bool { return ct%int64(time.Millisecond) == 0 }

// maxConfig bounds the config Width reads (git's own are a few hundred
// bytes).
const maxConfig = 1 << 20

// Verdict is what VerifyPack found.
type Verdict struct {
	// Lie says how the pack is not what git writes: an entry whose bytes
	// do not hash to the id the idx files it under, an entry that does
	// not read (git copies it as it is into the host gc's pack, so the
	// object is lost), an idx that does not parse, a link. "" when none.
	Lie string
	// Unverified says why the pack was not read through (the time budget,
	// an entry past the reader's bounds): it may lie. "" when read.
	Unverified string
	Objects    int // entries verified
}

// verifyBudget bounds the bytes one VerifyPack inflates and makes from
// deltas.
const verifyBudget = 4 << 30

// verifyCache bounds the objects VerifyPack keeps by offset (the bases of
// deltas read after them).
const verifyCache = 64 << 20

// VerifyPack reads every entry of the pack base.idx names in base.pack
// (git's files: regular files, no link; a missing .pack makes git ignore
// the idx, and here too), until deadline.
func VerifyPack(base string, width int, deadline time.Time) Verdict {
	var v Verdict
	for _, ext := range []string{".idx", ".pack"} {
		fi, err := os.Lstat(base + ext)
		switch {
		case errors.Is(err, os.ErrNotExist) && ext == ".pack":
			return v // git does not use an idx without its pack
		case err != nil:
			v.Unverified = err.Error()
			return v
		case !fi.Mode().IsRegular():
			// Git follows it; git never makes one.
			v.Lie = fmt.Sprintf("%s is not a regular file (%s)", filepath.Base(base+ext), fi.Mode().Type())
			return v
		}
	}
	b, err := readFile(base+".idx", maxIdx)
	if err != nil {
		v.Unverified = fmt.Sprintf("its idx: %v", err)
		return v
	}
	x, err := parseIdx(b, width)
	if err != nil {
		v.Lie = "its idx does not parse as git writes one"
		return v
	}
	// Bytes inflated and made by deltas: the deadline bounds the work of
	// git's packs; this, one entry's (a chain of deltas that each make
	// the most they may).
	budget := int64(verifyBudget)
	// Not openPack: its rule that a pack of more than one name counts for
	// nothing is the prune's; here a hard link is no lie (a local
	// `git clone` inside links its packs).
	f, err := os.OpenFile(base+".pack", os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		v.Unverified = fmt.Sprintf("its pack: %v", err)
		return v
	}
	defer f.Close()
	fi, err := f.Stat()
	var hdr [12]byte
	if err == nil && fi.Mode().IsRegular() && fi.Size() >= 12 {
		_, err = f.ReadAt(hdr[:], 0)
	}
	if err != nil || !fi.Mode().IsRegular() || string(hdr[:4]) != "PACK" {
		// Git refuses such a pack (its objects come from elsewhere):
		// fsck names it.
		v.Unverified = "its pack does not open as a pack"
		return v
	}
	p := &pack{f: f, size: fi.Size(), x: x, budget: &budget}
	if fi.Size() <= inMemory {
		b := make([]byte, fi.Size())
		if _, err := f.ReadAt(b, 0); err != nil {
			v.Unverified = fmt.Sprintf("its pack: %v", err)
			return v
		}
		p.f, p.mem = bytes.NewReader(b), b
	}
	return p.verify(deadline)
}

// verify reads every entry p's idx names (VerifyPack).
func (p *pack) verify(deadline time.Time) Verdict {
	var v Verdict
	x, width := p.x, p.x.width
	p.cache = &objCache{m: map[uint64]cached{}, max: verifyCache}
	p.deadline = deadline // one entry's chain stops there too
	// In pack order: a delta's base (at a lower offset, OFS_DELTA) is
	// read, and kept, before it.
	order := make([]int, len(x.offs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return x.offs[order[i]] < x.offs[order[j]] })
	var h hash.Hash = sha1.New()
	if width == 32 {
		h = sha256.New()
	}
	sum := make([]byte, 0, width)
	for _, i := range order {
		if time.Now().After(deadline) {
			v.Unverified = fmt.Sprintf("the end's time budget ran out after %d of its %d objects", v.Objects, len(order))
			return v
		}
		id := x.ids[i*width : (i+1)*width]
		typ, data, err := p.object(x.offs[i], 0)
		if errors.Is(err, errLimit) {
			v.Unverified = fmt.Sprintf("object %s is past what jail reads (%d MiB, a delta chain of %d)", hex.EncodeToString(id), maxObject>>20, maxDepth)
			return v
		}
		if err != nil {
			v.Lie = fmt.Sprintf("its entry for %s does not read", hex.EncodeToString(id))
			return v
		}
		h.Reset()
		h.Write([]byte(typ + " " + strconv.Itoa(len(data)) + "\x00"))
		h.Write(data)
		if !bytes.Equal(h.Sum(sum[:0]), id) {
			v.Lie = fmt.Sprintf("its idx files a %s under %s, whose bytes are not that object", typ, hex.EncodeToString(id))
			return v
		}
		v.Objects++
	}
	return v
}

// objCache keeps objects read by offset up to max bytes; past it, it
// starts again empty (a delta chain's bases are near each other).
type objCache struct {
	m    map[uint64]cached
	size int
	max  int
}

type cached struct {
	typ  string
	data []byte
}

func (c *objCache) put(off uint64, typ string, data []byte) {
	if c == nil || len(data) > c.max/4 {
		return
	}
	if c.size+len(data) > c.max {
		c.m, c.size = map[uint64]cached{}, 0
	}
	c.m[off] = cached{typ, data}
	c.size += len(data)
}

// RevTrue reports whether the reverse index rev (a pack's .rev) is the
// one git makes from the pack's idx beside it (base.idx): version 1, the
// idx positions in pack order, the pack's checksum, its own checksum.
// Git reads a .rev's order as it is (git 2.39.5: only its header and size
// are checked); the order is the idx's offsets sorted, so a true one is
// made again here and compared whole (a few bytes an object).
func RevTrue(rev, base string, width int) bool {
	b, err := readFile(rev, maxIdx)
	if err != nil {
		return false
	}
	ib, err := readFile(base+".idx", maxIdx)
	if err != nil {
		return false
	}
	x, err := parseIdx(ib, width)
	if err != nil {
		return false
	}
	order := make([]uint32, len(x.offs))
	for i := range order {
		order[i] = uint32(i)
	}
	sort.Slice(order, func(i, j int) bool { return x.offs[order[i]] < x.offs[order[j]] })
	id := uint32(1)
	var h hash.Hash = sha1.New()
	if width == 32 {
		id, h = 2, sha256.New()
	}
	want := []byte("RIDX\x00\x00\x00\x01")
	want = binary.BigEndian.AppendUint32(want, id)
	for _, o := range order {
		want = binary.BigEndian.AppendUint32(want, o)
	}
	want = append(want, ib[len(ib)-2*width:len(ib)-width]...) // the pack's checksum
	h.Write(want)
	return bytes.Equal(b, h.Sum(want))
}
