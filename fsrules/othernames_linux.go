package fsrules

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jail-sandbox/jail/dircache"
	"github.com/jail-sandbox/jail/dirnames"
)

// This file: OtherNames across starts, reading only the directories that
// changed since the last start's walk (OtherNamesKept).
//
// The question: which names in the roots (the writable trees) are other
// hard links of the protected files (a local clone's packs)? A start C
// that walked the roots whole records what it found (the names, with the
// protected files' inodes it looked for, S_C) and the key (device, inode,
// ctime) of every directory it read. A later start N may skip reading a
// directory D of that record, and the answer is the same, when:
//
//  1. The mount table is the one C saw (its SHA-256): a mount over a name
//     changes no directory.
//  2. Each file N protects was protected at C (S_N within S_C): C's read of
//     D looked for its inode.
//  3. D has the key C recorded, on a file system whose directories' ctimes
//     are trusted (package dircache), and D's ctime was more than
//     dircache.Margin before C read it. Adding, removing or renaming an
//     entry sets a directory's ctime (nobody can set it back), so D holds
//     the same names for the same inodes as at C: C's answer for D stands.
//
// Every other directory of the record is read again (its changed entries
// with it); a directory found in a read that the record does not hold (made,
// or moved in, since C: its own subdirectories may be old, their ctimes say
// nothing of the move) is walked whole. A walk that could not read a
// directory records nothing: the next start walks everything again.

// otherNamesReads counts the directories OtherNamesKept read, and
// otherNamesStats those it lstat'ed itself (test seams).
var otherNamesReads, otherNamesStats atomic.Int64

// passKeyer is a DirReader that gives a directory's key as its pass's own
// stat found it (package dircache's PassKey): the plan's walk of the same
// trees stat'ed each directory a moment before.
type passKeyer interface {
	PassKey(dir string) (dircache.Key, bool)
}

// otherNamesState is what a walk of the roots recorded.
type otherNamesState struct {
	mounts [32]byte
	files  [][2]uint64
	dirs   []onDir
	hits   []onHit
}

// onDir is a directory of the walk and its key; always: read at every
// start (ctime untrusted, or changed within Margin of the read).
type onDir struct {
	path   string
	key    dircache.Key
	always bool
}

// onHit is another name of a protected file.
type onHit struct {
	path     string
	dev, ino uint64
}

func (s *otherNamesState) encode() []byte {
	// Sized ahead (a directory's key and flag take about 20 bytes): the
	// bench tree's 2,800 directories make ~200 KiB, grown by doubling and
	// copied otherwise.
	n := len(s.mounts) + 3*binary.MaxVarintLen64 + len(s.files)*2*binary.MaxVarintLen64
	for _, d := range s.dirs {
		n += len(d.path) + 24
	}
	for _, h := range s.hits {
		n += len(h.path) + 16
	}
	b := append(make([]byte, 0, n), s.mounts[:]...)
	b = binary.AppendUvarint(b, uint64(len(s.files)))
	for _, f := range s.files {
		b = binary.AppendUvarint(b, f[0])
		b = binary.AppendUvarint(b, f[1])
	}
	b = binary.AppendUvarint(b, uint64(len(s.dirs)))
	for _, d := range s.dirs {
		b = dircache.AppendStr(b, d.path)
		b = dircache.AppendKey(b, d.key)
		a := uint64(0)
		if d.always {
			a = 1
		}
		b = binary.AppendUvarint(b, a)
	}
	b = binary.AppendUvarint(b, uint64(len(s.hits)))
	for _, h := range s.hits {
		b = dircache.AppendStr(b, h.path)
		b = binary.AppendUvarint(b, h.dev)
		b = binary.AppendUvarint(b, h.ino)
	}
	return b
}

func decodeOtherNamesState(b []byte) (otherNamesState, bool) {
	var s otherNamesState
	r := dircache.NewStateReader(b)
	copy(s.mounts[:], r.Fixed(len(s.mounts)))
	for i, n := uint64(0), r.Uvarint(); r.OK() && i < n; i++ {
		s.files = append(s.files, [2]uint64{r.Uvarint(), r.Uvarint()})
	}
	n := r.Uvarint()
	s.dirs = make([]onDir, 0, min(n, uint64(len(b)/5))) // a record takes 5 bytes and more
	for i := uint64(0); r.OK() && i < n; i++ {
		s.dirs = append(s.dirs, onDir{path: r.Str(), key: r.Key(), always: r.Uvarint() == 1})
	}
	for i, n := uint64(0), r.Uvarint(); r.OK() && i < n; i++ {
		s.hits = append(s.hits, onHit{path: r.Str(), dev: r.Uvarint(), ino: r.Uvarint()})
	}
	return s, r.Done()
}

// OtherNamesKept is OtherNames (mounts: the host's mount table, parsed
// from mountinfo, whose SHA-256 keys the record) reading only what
// changed since the last walk of the same roots (see the top of this
// file), with its record kept in dirs when that is package dircache's
// cache (else every directory is read, as OtherNames does).
func OtherNamesKept(roots []string, files map[[2]uint64]string, mountinfo []byte, mounts []Mount, dirs DirReader) map[string]string {
	st, _ := dirs.(stateStore)
	if len(files) == 0 || st == nil || mountinfo == nil || mounts == nil {
		return OtherNames(roots, files, mounts)
	}
	mountsSum := sha256.Sum256(mountinfo) // here, not at every start: only a pack with other links gets here
	name := "fsrules-othernames-1\x00" + strings.Join(roots, "\x00")
	rec := st.State(name)
	old, ok := decodeOtherNamesState(rec)
	if ok && old.mounts == mountsSum {
		had := map[[2]uint64]bool{}
		for _, f := range old.files {
			had[f] = true
		}
		for f := range files {
			ok = ok && had[f] // 2: each protected now was protected then
		}
	} else {
		ok = false
	}
	inos := make(map[uint64]bool, len(files))
	next := otherNamesState{mounts: mountsSum}
	for f := range files {
		inos[f[1]] = true
		next.files = append(next.files, f)
	}
	slices.SortFunc(next.files, func(a, b [2]uint64) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	out := map[string]string{}
	complete := true
	start := time.Now().UnixNano()
	lw := newLinkWalkFor(inos, mounts, nil)
	lw.each = func(p string, dev, ino uint64) {
		if orig, hit := files[[2]uint64{dev, ino}]; hit && p != orig {
			out[p] = orig
			next.hits = append(next.hits, onHit{p, dev, ino})
		}
	}
	lw.bad = func(string, bool, error) { complete = false }
	lw.seen = func(dir string, k dircache.Key) {
		otherNamesReads.Add(1)
		always := !st.Trusted(k.Dev, dir) || k.Ctime >= start-dircache.Margin.Nanoseconds()
		next.dirs = append(next.dirs, onDir{dir, k, always})
	}
	buf := dirnames.Buffer()
	defer dirnames.Release(buf)
	lw.buf = *buf
	if !ok {
		for _, r := range outerRoots(roots) {
			lw.walk(r)
		}
	} else {
		// keyOf: a directory's key now, from the plan's walk of the same
		// pass where it stat'ed the directory (the same lstat, taken a
		// moment before: a change after it is one that walk missed too),
		// else an lstat of its own.
		pk, _ := dirs.(passKeyer)
		keyOf := func(p string) (dircache.Key, bool) {
			if pk != nil {
				if k, ok := pk.PassKey(p); ok {
					return k, true
				}
			}
			otherNamesStats.Add(1)
			return dirKey(p)
		}
		// The record's directories by path; parents come before their
		// subdirectories (the walk's order), so a directory's parent is
		// decided when the directory is reached.
		idx := make(map[string]int, len(old.dirs))
		for i, d := range old.dirs {
			idx[d.path] = i
		}
		// reach: the record's directories still reached by the walk's
		// way (no symlink followed): a root that is a directory, a
		// directory of an unchanged one's (its entries are C's), or one a
		// read found.
		reach := make([]bool, len(old.dirs))
		unchanged := make([]bool, len(old.dirs))
		for _, r := range outerRoots(roots) {
			if i, rec := idx[r]; rec {
				if _, isDir := dirKey(r); isDir {
					reach[i] = true
				}
			}
		}
		for i, d := range old.dirs {
			if !reach[i] {
				if p, rec := idx[filepath.Dir(d.path)]; !rec || p >= i || !unchanged[p] {
					continue // not where C saw it: a read of its new parent finds it
				}
				reach[i] = true
			}
			if !d.always {
				if k, isDir := keyOf(d.path); isDir && k == d.key {
					unchanged[i] = true // 3: C's answer for it stands
					next.dirs = append(next.dirs, d)
					continue
				}
			}
			subs, err := lw.read(d.path)
			if err != nil {
				if _, isDir := dirKey(d.path); isDir {
					complete = false // there, and not read
				}
				continue // else gone since its parent's read
			}
			for _, sub := range subs {
				if j, rec := idx[join(d.path, sub)]; rec && j > i {
					reach[j] = true
				} else {
					lw.dir(join(d.path, sub), false) // new here: walked whole
				}
			}
		}
		for _, h := range old.hits {
			if i, rec := idx[filepath.Dir(h.path)]; rec && unchanged[i] {
				if orig, hit := files[[2]uint64{h.dev, h.ino}]; hit && h.path != orig {
					out[h.path] = orig
					next.hits = append(next.hits, h)
				}
			}
		}
		// A root the record does not hold, or no directory now (a file,
		// or a directory not there at C): looked at as a whole walk would.
		for _, r := range outerRoots(roots) {
			if i, rec := idx[r]; !rec || !reach[i] {
				lw.walk(r)
			}
		}
	}
	slices.SortFunc(next.hits, func(a, b onHit) int { return strings.Compare(a.path, b.path) })
	next.hits = slices.CompactFunc(next.hits, func(a, b onHit) bool { return a.path == b.path })
	switch b := next.encode(); {
	case !complete:
		if rec != nil {
			st.SetState(name, nil)
		}
	case !bytes.Equal(b, rec):
		st.SetState(name, b) // a start that changed nothing writes nothing
	}
	return out
}
