package fsrules

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jail-sandbox/jail/dircache"
)

// This file: the hard-link check of the home's protected directories
// (homeFileLinks), and when a start may skip reading them.
//
// The check's question: does a visible file share its inode with a file
// of a protected directory of the home (~/.ssh/, ~/.mozilla/, ~/.local/bin/)?
// Its full answer reads every protected file's link count (an fstatat(2)
// each: tens of thousands in a browser profile or Python's user site),
// then, if any has other links, every visible file's inode. A start may
// skip reading a protected directory P (~/.ssh/ with all below it), and
// the answer is the same, when it can show that no file of P has a
// visible other name, from what an earlier start C recorded of P
// (treeRecord) and what the directories' ctimes say:
//
//  1. C read every file of P (none unreadable), on file systems whose
//     directories' ctimes are trusted, and found each with a link count
//     of 1: each had no name but its own.
//  2. Every directory of P has the key (device, inode, ctime) C saw, and
//     the mounts are the same (/proc/self/mountinfo: a file mounted over
//     a name changes no directory). A directory's entries change only
//     with its ctime (adding, removing or renaming an entry sets it;
//     nobody can set it back), so P holds the same names for the same
//     inodes as at C, and none was added.
//  3. So a visible other name of a protected file was made after C read
//     that file (at C it had none), and making a name sets the ctime of
//     the directory that holds it to that moment: that directory's ctime
//     is later than C's start (less Margin: file times come from a coarse
//     clock). Moving that directory later only sets its ctime again.
//     Creating a link does NOT change the directories of the file's other
//     names, which is why the protected side's ctimes alone prove nothing.
//  4. Every directory of the visible roots whose ctime is not older than
//     that (package dircache's answer gives it, else an lstat; on a file
//     system whose ctimes are not trusted every directory counts), and
//     every visible root that is a file, has each of its regular files
//     stat'ed: one with other links sends the start to the full check. The
//     visible walk covers every directory the full check's second read
//     would (hardlinks: the same roots, less what they hide).
//
// Then the full check would find nothing in P either: the start skips
// it. The visible check of 4 is done once for all the directories
// skipped, from the earliest of their records' starts. A protected
// directory that changed is read (and its other names protected) as
// without a record; a link between it and a skipped one gives the
// skipped one's file a name in a changed directory, and if that name is
// visible, 4 finds it (the whole check is then made). A record is made
// only by a read of P that meets 1 (every directory of P last changed
// more than Margin before the read began); any other read drops it. A
// start whose visible side has more to stat than the skipped directories
// have files reads them all instead (that is then cheaper) and records
// again.

// homeStateName names the records of homes (the user's home directories).
func homeStateName(in Input) string {
	return "fsrules-homelinks-2\x00" + strings.Join(userHomes(in), "\x00")
}

// stateStore keeps a record between runs (package dircache).
type stateStore interface {
	State(name string) []byte
	SetState(name string, b []byte)
	Trusted(dev uint64, dir string) bool
}

// homeTree is a protected directory of a home.
type homeTree struct {
	root string
	kind Kind
	rule string
}

// homeState is the records of the last reads of the protected
// directories: those that found no file with other links.
type homeState struct {
	mounts [32]byte // SHA-256 of /proc/self/mountinfo
	trees  []treeRecord
}

// treeRecord is what a read of one protected directory that found no
// file with other links records.
type treeRecord struct {
	root  string
	start int64 // when the read began (ns since the epoch)
	files int   // entries it held
	dirs  []keyedDir
}

// keyedDir is a directory and its key.
type keyedDir struct {
	path string
	key  dircache.Key
}

func (s *homeState) encode() []byte {
	b := append([]byte(nil), s.mounts[:]...)
	b = binary.AppendUvarint(b, uint64(len(s.trees)))
	for _, t := range s.trees {
		b = dircache.AppendStr(b, t.root)
		b = binary.AppendVarint(b, t.start)
		b = binary.AppendUvarint(b, uint64(t.files))
		b = binary.AppendUvarint(b, uint64(len(t.dirs)))
		for _, d := range t.dirs {
			b = dircache.AppendStr(b, d.path)
			b = dircache.AppendKey(b, d.key)
		}
	}
	return b
}

// decodeHomeState parses what encode wrote; false for anything else.
func decodeHomeState(b []byte) (homeState, bool) {
	var s homeState
	r := dircache.NewStateReader(b)
	copy(s.mounts[:], r.Fixed(len(s.mounts)))
	for i, nt := uint64(0), r.Uvarint(); r.OK() && i < nt; i++ {
		t := treeRecord{root: r.Str(), start: r.Varint(), files: int(r.Uvarint())}
		for j, nd := uint64(0), r.Uvarint(); r.OK() && j < nd; j++ {
			t.dirs = append(t.dirs, keyedDir{path: r.Str(), key: r.Key()})
		}
		s.trees = append(s.trees, t)
	}
	return s, r.Done()
}

// homeTreeWalks counts the reads of the home's protected directories (a
// test seam: a directory skipped does not count).
var homeTreeWalks atomic.Int64

// checkHomeTrees notes the files of the protected directories trees that
// have other hard links: it reads each, but for those the record of an
// earlier start shows it would find nothing in (see the top of this file).
func (w *walker) checkHomeTrees(in Input, trees []homeTree) {
	if len(trees) == 0 {
		return
	}
	st, _ := w.dirs.(stateStore)
	name := homeStateName(in)
	old := map[string]treeRecord{}
	var rec []byte
	if st != nil && w.mounts != nil {
		rec = st.State(name)
		if s, ok := decodeHomeState(rec); ok && s.mounts == *w.mounts {
			for _, t := range s.trees {
				old[t.root] = t
			}
		}
	}
	// The directories unchanged since their record, then the visible side
	// for all of them at once.
	skip := map[string]bool{}
	since, budget := int64(0), 0
	for _, t := range trees {
		r, ok := old[t.root]
		if !ok || skip[t.root] || !treeUnchanged(r) {
			continue
		}
		skip[t.root] = true
		if since == 0 || r.start < since {
			since = r.start
		}
		budget += r.files
	}
	if len(skip) > 0 && !w.visibleUnchanged(st, since-dircache.Margin.Nanoseconds(), budget) {
		clear(skip)
	}
	next := homeState{}
	if w.mounts != nil {
		next.mounts = *w.mounts
	}
	for _, t := range trees {
		if skip[t.root] {
			next.trees = append(next.trees, old[t.root])
			continue
		}
		if r, ok := w.readHomeTree(t, st); ok {
			next.trees = append(next.trees, r)
		}
	}
	if st == nil || w.mounts == nil {
		return
	}
	switch b := next.encode(); {
	case len(next.trees) == 0:
		if rec != nil {
			st.SetState(name, nil)
		}
	case !bytes.Equal(b, rec):
		st.SetState(name, b) // a start that changed nothing writes nothing
	}
}

// treeUnchanged reports whether every directory of r has the key r
// recorded (point 2 at the top of this file).
func treeUnchanged(r treeRecord) bool {
	for _, d := range r.dirs {
		if k, ok := dirKey(d.path); !ok || k != d.key {
			return false
		}
	}
	return len(r.dirs) > 0
}

// readHomeTree reads the protected directory t, noting its files with
// other links, and returns its record when the read meets point 1 at the
// top of this file.
func (w *walker) readHomeTree(t homeTree, st stateStore) (treeRecord, bool) {
	homeTreeWalks.Add(1)
	r := treeRecord{root: t.root, start: time.Now().UnixNano()}
	keep := st != nil && w.mounts != nil
	n, linked := w.noteTree(t.root, t.kind, t.rule, func(dir string, _ bool, err error) {
		keep = false // its files were not checked
		w.notes = append(w.notes, fmt.Sprintf("%s: unreadable inside protected %s (%v): its files' other hard links cannot be found", dir, t.root, err))
	}, func(dir string, k dircache.Key) {
		r.dirs = append(r.dirs, keyedDir{dir, k})
	})
	r.files = n
	if linked > 0 || !keep {
		return r, false // 1 does not hold
	}
	for _, d := range r.dirs {
		// A directory changed within Margin of the read could change
		// again in the same clock tick and keep its ctime.
		if d.key.Ctime >= r.start-dircache.Margin.Nanoseconds() || !st.Trusted(d.key.Dev, d.path) {
			return r, false
		}
	}
	return r, true
}

// visibleUnchanged reports whether no directory of the visible roots
// changed since since (ns) holds a regular file with other links, nor is
// a visible root such a file (point 4 at the top of this file), looking
// at no more than budget entries; false when it cannot tell. A directory
// package dircache answered for has its ctime from there; one the walk
// read (a root, a directory new to the cache) is lstat'ed for it, and
// its ctime counts only on a file system whose ctimes are trusted.
func (w *walker) visibleUnchanged(st stateStore, since int64, budget int) bool {
	if w.vPartial {
		return false
	}
	var check []string
	for _, d := range w.vdirs {
		if d.unchanged && d.ctime < since {
			continue
		}
		if !d.unchanged {
			if k, ok := dirKey(d.path); ok && k.Ctime < since && st.Trusted(k.Dev, d.path) {
				continue
			}
		}
		if budget -= d.total; budget < 0 {
			return false
		}
		check = append(check, d.path)
	}
	for _, f := range w.vfiles {
		if fileLinked(f) {
			return false
		}
	}
	for _, d := range check {
		if filesLinked(d) {
			return false
		}
	}
	return true
}
