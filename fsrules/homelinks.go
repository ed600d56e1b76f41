package fsrules

import (
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
// skip the first read, and the answer is the same, when it can show that
// no protected file has a visible other name, from what an earlier start
// C recorded (homeState) and what the directories' ctimes say:
//
//  1. C read every file of every protected directory (none unreadable),
//     on file systems whose directories' ctimes are trusted, and found
//     each with a link count of 1: each had no name but its own.
//  2. Every protected directory has the key (device, inode, ctime) C saw,
//     the list of protected directories is the same, and so are the
//     mounts (/proc/self/mountinfo: a file mounted over a name changes no
//     directory). A directory's entries change only with its ctime
//     (adding, removing or renaming an entry sets it; nobody can set it
//     back), so the protected directories hold the same names for the
//     same inodes as at C, and none was added.
//  3. So a visible other name of a protected file was made after C read
//     that file (at C it had none), and making a name sets the ctime of
//     the directory that holds it to that moment: that directory's ctime
//     is later than C's start (less Margin: file times come from a coarse
//     clock). Moving that directory later only sets its ctime again.
//     Creating a link does NOT change the directories of the file's other
//     names, which is why the protected side's ctimes alone prove nothing.
//  4. Every directory of the visible roots whose ctime is not older than
//     that (or that the walk read rather than found unchanged in package
//     dircache, whose records say since when a directory is unchanged), and
//     every visible root that is a file, has each of its regular files
//     stat'ed: one with other links sends the start to the full check. The
//     visible walk covers every directory the full check's second read
//     would (hardlinks: the same roots, less what they hide).
//
// Then the full check would find nothing either: the start skips it. The
// record is made only by a full check that meets 1 (and whose directories
// were all last changed more than Margin before it began); any other full
// check removes it. A start whose visible side has more to stat than the
// protected side has files runs the full check instead (which is then
// cheaper) and records again.

// homeStateName names the record of homes (the user's home directories).
func homeStateName(in Input) string {
	return "fsrules-homelinks-1\x00" + strings.Join(userHomes(in), "\x00")
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

// homeState is what a full check that found no protected file with
// other links records.
type homeState struct {
	start  int64    // when the check began (ns since the epoch)
	files  int      // entries the protected directories held
	mounts [32]byte // SHA-256 of /proc/self/mountinfo
	roots  []string // the protected directories, in order
	dirs   []keyedDir
}

// keyedDir is a directory and its key.
type keyedDir struct {
	path string
	key  dircache.Key
}

func (s *homeState) encode() []byte {
	b := binary.AppendVarint(nil, s.start)
	b = binary.AppendUvarint(b, uint64(s.files))
	b = append(b, s.mounts[:]...)
	b = binary.AppendUvarint(b, uint64(len(s.roots)))
	for _, r := range s.roots {
		b = binary.AppendUvarint(b, uint64(len(r)))
		b = append(b, r...)
	}
	b = binary.AppendUvarint(b, uint64(len(s.dirs)))
	for _, d := range s.dirs {
		b = binary.AppendUvarint(b, uint64(len(d.path)))
		b = append(b, d.path...)
		b = binary.AppendUvarint(b, d.key.Dev)
		b = binary.AppendUvarint(b, d.key.Ino)
		b = binary.AppendVarint(b, d.key.Ctime)
	}
	return b
}

// decodeHomeState parses what encode wrote; false for anything else.
func decodeHomeState(b []byte) (homeState, bool) {
	var s homeState
	bad := false
	uv := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			bad = true
			return 0
		}
		b = b[n:]
		return v
	}
	str := func() string {
		n := uv()
		if bad || n > uint64(len(b)) {
			bad = true
			return ""
		}
		v := string(b[:n])
		b = b[n:]
		return v
	}
	v, n := binary.Varint(b)
	if n <= 0 {
		return s, false
	}
	s.start, b = v, b[n:]
	s.files = int(uv())
	if bad || len(b) < len(s.mounts) {
		return s, false
	}
	copy(s.mounts[:], b)
	b = b[len(s.mounts):]
	for i, nr := uint64(0), uv(); !bad && i < nr; i++ {
		s.roots = append(s.roots, str())
	}
	for i, nd := uint64(0), uv(); !bad && i < nd; i++ {
		d := keyedDir{path: str()}
		d.key.Dev, d.key.Ino = uv(), uv()
		c, n := binary.Varint(b)
		if n <= 0 {
			return s, false
		}
		d.key.Ctime, b = c, b[n:]
		s.dirs = append(s.dirs, d)
	}
	return s, !bad && len(b) == 0
}

// homeTreeWalks counts the full reads of the home's protected
// directories (a test seam: a start that skips them does not count).
var homeTreeWalks atomic.Int64

// checkHomeTrees notes the files of the protected directories trees that
// have other hard links: the full check, unless the record of an earlier
// start shows it would find nothing (see the top of this file).
func (w *walker) checkHomeTrees(in Input, trees []homeTree) {
	if len(trees) == 0 {
		return
	}
	st, _ := w.dirs.(stateStore)
	name := homeStateName(in)
	if st != nil && w.mounts != nil && w.homeTreesUnchanged(st.State(name), trees) {
		return
	}
	homeTreeWalks.Add(1)
	start := time.Now().UnixNano()
	s := homeState{start: start, mounts: *w.mounts}
	keep := st != nil && w.mounts != nil
	for _, t := range trees {
		s.roots = append(s.roots, t.root)
		root := t.root
		n, linked := w.noteTree(root, t.kind, t.rule, func(dir string, _ bool, err error) {
			keep = false // its files were not checked
			w.notes = append(w.notes, fmt.Sprintf("%s: unreadable inside protected %s (%v): its files' other hard links cannot be found", dir, root, err))
		}, func(dir string, k dircache.Key) {
			s.dirs = append(s.dirs, keyedDir{dir, k})
		})
		s.files += n
		if linked > 0 {
			keep = false // 1 does not hold
		}
	}
	for _, d := range s.dirs {
		if !keep {
			break
		}
		// A directory changed within Margin of the start could change
		// again in the same clock tick and keep its ctime.
		keep = d.key.Ctime < start-dircache.Margin.Nanoseconds() && st.Trusted(d.key.Dev, d.path)
	}
	if st == nil {
		return
	}
	if keep {
		st.SetState(name, s.encode())
	} else {
		st.SetState(name, nil)
	}
}

// homeTreesUnchanged reports whether rec, the record of an earlier full
// check, shows that no file of trees has another name in the visible
// roots (points 2 to 4 at the top of this file). False whenever anything
// is not as it must be.
func (w *walker) homeTreesUnchanged(rec []byte, trees []homeTree) bool {
	s, ok := decodeHomeState(rec)
	if !ok || s.mounts != *w.mounts || len(s.roots) != len(trees) || w.vPartial {
		return false
	}
	for i, t := range trees {
		if s.roots[i] != t.root {
			return false
		}
	}
	for _, d := range s.dirs {
		if k, ok := dirKey(d.path); !ok || k != d.key {
			return false
		}
	}
	// The visible side: what changed since the record's check began, with
	// no more to stat than the full check would.
	since := s.start - dircache.Margin.Nanoseconds()
	budget := s.files
	var check []string
	for _, d := range w.vdirs {
		if d.unchanged && d.ctime < since {
			continue
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
