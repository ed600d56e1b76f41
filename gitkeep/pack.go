package gitkeep

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"
)

// A pack's .idx (version 2) and .pack, read to learn whether the
// repository itself holds an object the store keeps a copy of (prune).
// Both are the workspace's files: an agent of an earlier run could have
// written them. The idx is only where to look; an object counts as held
// only when its entry in the .pack inflates (deltas applied) to bytes
// whose hash is its name. A pack that lies (an idx naming objects the pack
// lacks, a pack entry of other bytes) makes nothing go, nor does one with
// another name (a hard link the agent can write through later).

var errPack = errors.New("malformed pack")

// errLimit is an entry past one of the reader's bounds (maxDepth,
// maxObject, the budget, the deadline): not read, which says nothing of
// whether it is true (VerifyPack tells the two apart; holds says no to
// both).
var errLimit = errors.New("pack entry past the reader's bounds")

// maxIdx bounds an .idx read whole (about 28 bytes an object: 2.4
// million objects); a pack with a bigger one counts as holding nothing
// (the copies it would free go after Age).
const maxIdx = 64 << 20

// idx is a parsed pack index: the sorted ids and each one's pack offset.
type idx struct {
	width int    // 20 (sha1) or 32 (sha256)
	ids   []byte // n*width, sorted
	offs  []uint64
}

// parseIdx reads an .idx version 2 file (git's pack-format.txt): magic,
// version, 256 fan-out counts, the sorted ids, their CRCs, 4-byte offsets
// (high bit: an index into the 8-byte offsets that follow), and the two
// trailing checksums. width is the object id's size. Anything out of
// place, out of order or out of bounds is an error: such an idx is not
// read at all.
func parseIdx(b []byte, width int) (*idx, error) {
	if len(b) < 8+256*4+2*width || !bytes.Equal(b[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return nil, errPack
	}
	fan := b[8 : 8+256*4]
	var prev uint32
	for i := 0; i < 256; i++ {
		v := binary.BigEndian.Uint32(fan[i*4:])
		if v < prev {
			return nil, errPack
		}
		prev = v
	}
	n := uint64(prev)
	rest := uint64(len(b) - 8 - 256*4 - 2*width)
	// ids, crcs, small offsets at least.
	if n > rest/(uint64(width)+8) {
		return nil, errPack
	}
	p := uint64(8 + 256*4)
	ids := b[p : p+n*uint64(width)]
	p += n * uint64(width)
	p += n * 4 // CRCs
	small := b[p : p+n*4]
	p += n * 4
	large := b[p : uint64(len(b))-2*uint64(width)]
	if len(large)%8 != 0 {
		return nil, errPack
	}
	x := &idx{width: width, ids: ids, offs: make([]uint64, n)}
	for i := uint64(0); i < n; i++ {
		id := ids[i*uint64(width) : (i+1)*uint64(width)]
		if i > 0 && bytes.Compare(ids[(i-1)*uint64(width):i*uint64(width)], id) >= 0 {
			return nil, errPack // not strictly sorted
		}
		// The fan-out must agree: the count of ids whose first byte is
		// at most id[0].
		if hi := uint64(binary.BigEndian.Uint32(fan[int(id[0])*4:])); i >= hi {
			return nil, errPack
		}
		if id[0] > 0 && i < uint64(binary.BigEndian.Uint32(fan[int(id[0]-1)*4:])) {
			return nil, errPack
		}
		o := uint64(binary.BigEndian.Uint32(small[i*4:]))
		if o&0x80000000 != 0 {
			j := o &^ 0x80000000
			if j >= uint64(len(large)/8) {
				return nil, errPack
			}
			o = binary.BigEndian.Uint64(large[j*8:])
		}
		x.offs[i] = o
	}
	return x, nil
}

// find returns id's pack offset.
func (x *idx) find(id []byte) (uint64, bool) {
	n := len(x.offs)
	i := sort.Search(n, func(i int) bool { return bytes.Compare(x.ids[i*x.width:(i+1)*x.width], id) >= 0 })
	if i < n && bytes.Equal(x.ids[i*x.width:(i+1)*x.width], id) {
		return x.offs[i], true
	}
	return 0, false
}

// pack is an open .pack with its index.
type pack struct {
	f    io.ReaderAt // the .pack (an *os.File but in the fuzz test)
	size int64
	x    *idx
	// budget is the inflated bytes left for this prune: a pack of huge
	// objects or long delta chains costs the prune its time, not more.
	budget *int64
	z      io.ReadCloser // the zlib reader inflate resets
	mem    []byte        // the whole pack, when read into memory
	// deadline is the prune's: checked at each entry of a delta chain,
	// so that one object costs the prune at most one entry past it (zero:
	// none).
	deadline time.Time
	// cache, when set, keeps objects read by offset (VerifyPack: each
	// delta's base is read once, not once per delta on its chain).
	cache *objCache
}

// maxDepth bounds a delta chain followed (git makes 50 at most by
// default, 250 with old --aggressive): deeper is not verified, so kept.
const maxDepth = 300

// maxObject bounds one object's inflated size: a bigger one is not
// verified (the store keeps it until the age rule).
const maxObject = 64 << 20

var objTypes = map[int]string{1: "commit", 2: "tree", 3: "blob", 4: "tag"}

// holds reports whether the pack holds the object id: its entry inflates,
// deltas applied, to bytes whose hash is id. Any error is "no".
func (p *pack) holds(id []byte) bool {
	off, ok := p.x.find(id)
	if !ok {
		return false
	}
	typ, data, err := p.object(off, 0)
	if err != nil {
		return false
	}
	var h hash.Hash = sha1.New()
	if p.x.width == 32 {
		h = sha256.New()
	}
	h.Write([]byte(typ + " " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return bytes.Equal(h.Sum(nil), id)
}

// object reads the entry at off: its type and its bytes (a delta applied
// to its base, read the same way).
func (p *pack) object(off uint64, depth int) (string, []byte, error) {
	if depth > maxDepth {
		return "", nil, errLimit
	}
	if off < 12 || off >= uint64(p.size) {
		return "", nil, errPack
	}
	if p.cache != nil {
		if o, ok := p.cache.m[off]; ok {
			return o.typ, o.data, nil
		}
	}
	var hdr [32 + 10 + 10]byte
	n, _ := p.f.ReadAt(hdr[:], int64(off))
	h := hdr[:n]
	if len(h) == 0 {
		return "", nil, errPack
	}
	c := h[0]
	t := int(c>>4) & 7
	size := uint64(c & 15)
	i, shift := 1, uint(4)
	for c&0x80 != 0 {
		if i >= len(h) || shift > 56 {
			return "", nil, errPack
		}
		c = h[i]
		i++
		size |= uint64(c&0x7f) << shift
		shift += 7
	}
	if size > maxObject {
		return "", nil, errLimit
	}
	var base []byte
	var btype string
	switch t {
	case 1, 2, 3, 4:
	case 6: // OFS_DELTA: the base is at a negative offset
		if i >= len(h) {
			return "", nil, errPack
		}
		c = h[i]
		i++
		rel := uint64(c & 0x7f)
		for c&0x80 != 0 {
			if i >= len(h) || rel > 1<<55 {
				return "", nil, errPack
			}
			c = h[i]
			i++
			rel = (rel+1)<<7 | uint64(c&0x7f)
		}
		if rel == 0 || rel > off {
			return "", nil, errPack
		}
		var err error
		if btype, base, err = p.object(off-rel, depth+1); err != nil {
			return "", nil, err
		}
	case 7: // REF_DELTA: the base by id, in this pack
		w := p.x.width
		if i+w > len(h) {
			return "", nil, errPack
		}
		bo, ok := p.x.find(h[i : i+w])
		i += w
		if !ok {
			return "", nil, errPack
		}
		var err error
		if btype, base, err = p.object(bo, depth+1); err != nil {
			return "", nil, err
		}
	default:
		return "", nil, errPack
	}
	// Each level's work is done on the way back up the chain: a chain of
	// 300 deltas each copying a 64 MiB base whole inflates a few KiB a
	// level; without this (and the budget charged with what a delta
	// makes), one object held an end 50 s (review16a).
	if !p.deadline.IsZero() && time.Now().After(p.deadline) {
		return "", nil, errLimit
	}
	data, err := p.inflate(int64(off)+int64(i), size)
	if err != nil {
		return "", nil, err
	}
	typ := objTypes[t]
	if base != nil {
		typ = btype
		if data, err = applyDelta(base, data, p.budget); err != nil {
			return "", nil, err
		}
	}
	p.cache.put(off, typ, data)
	return typ, data, nil
}

// inflate reads the zlib stream at off, which must give exactly size
// bytes.
func (p *pack) inflate(off int64, size uint64) ([]byte, error) {
	if *p.budget < int64(size) {
		return nil, errLimit
	}
	*p.budget -= int64(size)
	var src io.Reader = io.NewSectionReader(p.f, off, p.size-off)
	if p.mem != nil {
		src = bytes.NewReader(p.mem[off:]) // a ByteReader: flate adds no bufio
	}
	// One zlib reader a pack, reset for each entry (its window is 32 KiB).
	if p.z == nil {
		z, err := zlib.NewReader(src)
		if err != nil {
			return nil, errPack
		}
		p.z = z
	} else if err := p.z.(zlib.Resetter).Reset(src, nil); err != nil {
		return nil, errPack
	}
	z := p.z
	out := make([]byte, size)
	if _, err := io.ReadFull(z, out); err != nil {
		return nil, errPack
	}
	var one [1]byte
	if n, _ := z.Read(one[:]); n != 0 {
		return nil, errPack // longer than its header says
	}
	return out, nil
}

// applyDelta applies a git delta (source size, target size, then copy
// and insert instructions) to base. What it makes is charged to budget:
// a delta of a few bytes copies up to maxObject.
func applyDelta(base, d []byte, budget *int64) ([]byte, error) {
	varint := func() (uint64, bool) {
		var v uint64
		for s := uint(0); s < 64; s += 7 {
			if len(d) == 0 {
				return 0, false
			}
			c := d[0]
			d = d[1:]
			v |= uint64(c&0x7f) << s
			if c&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	src, ok1 := varint()
	dst, ok2 := varint()
	if !ok1 || !ok2 || src != uint64(len(base)) {
		return nil, errPack
	}
	if dst > maxObject || *budget < int64(dst) {
		return nil, errLimit
	}
	*budget -= int64(dst)
	out := make([]byte, 0, min(dst, 1<<20)) // grows to dst only as the copies fill it
	for len(d) > 0 {
		c := d[0]
		d = d[1:]
		switch {
		case c&0x80 != 0: // copy from base
			var o, n uint64
			for k := uint(0); k < 7; k++ {
				if c&(1<<k) == 0 {
					continue
				}
				if len(d) == 0 {
					return nil, errPack
				}
				if k < 4 {
					o |= uint64(d[0]) << (8 * k)
				} else {
					n |= uint64(d[0]) << (8 * (k - 4))
				}
				d = d[1:]
			}
			if n == 0 {
				n = 0x10000
			}
			if o+n > uint64(len(base)) || uint64(len(out))+n > dst {
				return nil, errPack
			}
			out = append(out, base[o:o+n]...)
		case c != 0: // insert c literal bytes
			if int(c) > len(d) || uint64(len(out))+uint64(c) > dst {
				return nil, errPack
			}
			out = append(out, d[:c]...)
			d = d[c:]
		default:
			return nil, errPack
		}
	}
	if uint64(len(out)) != dst {
		return nil, errPack
	}
	return out, nil
}

// openPacks opens the repository's own packs (objects/pack/pack-*.idx
// with its .pack, regular files, never through a symlink): the ones
// githistory keeps read-only inside. Alternates are never read: a planted
// one names objects elsewhere. More packs than githistory protects
// (maxPacks) opens none: a pack past that cap is the agent's to delete in
// a later run, so what it holds does not count. A pack whose idx does not
// parse is skipped (its objects count as not held: kept).
func openPacks(gitDir, store string, width, maxPacks int, budget *int64) ([]*pack, error) {
	dir := gitDir + "/objects/pack"
	// gitDir as the start found it, no link on the way: a .git the agent
	// replaced with a link to a repository of its own would make that
	// repository's packs (not read-only in a later run, if no scan finds
	// them) the ones that count.
	if r, err := filepath.EvalSymlinks(gitDir); err != nil || r != filepath.Clean(gitDir) {
		return nil, fmt.Errorf("gitkeep: %s: not the git dir the start found (a link on the way)", gitDir)
	}
	for _, d := range []string{gitDir + "/objects", dir} {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("gitkeep: %s: not a directory", d)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("gitkeep: %w", err)
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if len(n) > 9 && n[:5] == "pack-" && n[len(n)-4:] == ".idx" && e.Type().IsRegular() {
			names = append(names, n[:len(n)-4])
		}
	}
	if len(names) > maxPacks {
		return nil, fmt.Errorf("gitkeep: %s: %d packs, more than the %d kept read-only", dir, len(names), maxPacks)
	}
	var out []*pack
	for _, n := range names {
		if p := openPack(dir+"/"+n, store, width, budget); p != nil {
			out = append(out, p)
		}
	}
	return out, nil
}

func openPack(base, store string, width int, budget *int64) *pack {
	// A pack or idx with another name counts for nothing (review16a):
	// the next run's read-only bind covers this name only, and the agent
	// that linked it elsewhere in a writable tree (before it was
	// protected: the run that made it) rewrites it through the other
	// name, after this prune dropped the copies it held.
	// The store's own link (KeepPacks) is no other name: no sandbox
	// reaches it.
	if !oneName(base+".idx", store) {
		return nil
	}
	b, err := readNoFollow(base+".idx", maxIdx)
	if err != nil {
		return nil
	}
	x, err := parseIdx(b, width)
	if err != nil {
		return nil
	}
	// The agent's file: a FIFO there would block the open for good (every
	// later end hung, review15e), so no blocking open; Stat below takes a
	// regular file only.
	f, err := os.OpenFile(base+".pack", os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	fi, err := f.Stat()
	var hdr [12]byte
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < 12 || !ownLinks(fi, base+".pack", store) {
		f.Close()
		return nil
	}
	if _, err := f.ReadAt(hdr[:], 0); err != nil || string(hdr[:4]) != "PACK" {
		f.Close()
		return nil
	}
	// A pack up to inMemory is read whole (one read, then no syscall an
	// object); a bigger one is read where each entry is.
	if fi.Size() <= inMemory {
		b := make([]byte, fi.Size())
		_, err := f.ReadAt(b, 0)
		f.Close()
		if err != nil {
			return nil
		}
		return &pack{f: bytes.NewReader(b), mem: b, size: int64(len(b)), x: x, budget: budget}
	}
	return &pack{f: f, size: fi.Size(), x: x, budget: budget}
}

// oneName reports whether p is a regular file with one link only, or two
// when the other is the store's kept pack of its name (KeepPacks; store
// "": none counts).
func oneName(p, store string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().IsRegular() && ownLinks(fi, p, store)
}

// ownLinks reports whether fi (the file at p) has one link only, or two
// whose other is the store's kept pack file of its name.
func ownLinks(fi os.FileInfo, p, store string) bool {
	n, _, ok := linkInfo(fi)
	if !ok || n > 2 {
		return false
	}
	if n == 1 {
		return true
	}
	if store == "" {
		return false
	}
	k, err := os.Lstat(filepath.Join(store, "objects", "pack", filepath.Base(p)))
	return err == nil && os.SameFile(fi, k)
}

// inMemory bounds a pack read whole into memory by a prune.
const inMemory = 32 << 20

// readNoFollow reads an idx of the agent's as readFile reads its other
// files: no link followed, no blocking open (a FIFO), a regular file of at
// most max bytes.
func readNoFollow(p string, max int64) ([]byte, error) {
	b, err := readFile(p, max)
	if err != nil {
		return nil, errPack
	}
	return b, nil
}

func closePacks(ps []*pack) {
	for _, p := range ps {
		if c, ok := p.f.(io.Closer); ok {
			c.Close()
		}
	}
}

// packsHold reports whether one of ps holds the object named hexID.
func packsHold(ps []*pack, hexID string) bool {
	id, err := hex.DecodeString(hexID)
	if err != nil {
		return false
	}
	for _, p := range ps {
		if len(id) == p.x.width && p.holds(id) {
			return true
		}
	}
	return false
}
