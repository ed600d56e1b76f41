package gitkeep

import (
	"os"
	"sync/atomic"
)

// Stamps are the workspace's loose object files whose link count this
// start changed (keepOne: linked into the store, or the store's link
// replaced by a copy), each with its device, inode and change time right
// after. Why: a change of its links moves a file's change time into the
// run's window, and the end read every such object again (ForgedLoose)
// though nothing had written it: in a repository of 633 loose objects
// (8.2 MB), 134-190 ms of the first end and 76-87 of each of the next
// two, the starts that copied over the links (session 45). The end
// passes over a file it finds as it was stamped, once Settle has seen
// the store's file system stamp a change later than every stamp before
// the agent could run.
type Stamps struct {
	m       map[string]stamp // by id
	dev     uint64           // the device of every stamp (mixed: not so)
	mixed   bool
	max     int64 // the latest change time stamped (ns)
	settled atomic.Bool
}

// touchFile is touch (tests: a clock of their own).
var touchFile = touch

type stamp struct {
	ino   uint64
	ctime int64 // ns
}

// add stamps the file of id as fi, a stat taken after its last change of
// links at this start, found it (off Linux: nothing stamped).
func (s *Stamps) add(id string, fi os.FileInfo) {
	dev, ino, ctime := stampOf(fi)
	if s == nil || ino == 0 || ctime == 0 {
		return
	}
	if s.m == nil {
		s.m, s.dev = map[string]stamp{}, dev
	}
	if dev != s.dev {
		s.mixed = true
	}
	s.m[id] = stamp{ino, ctime}
	s.max = max(s.max, ctime)
}

// Len is how many files are stamped.
func (s *Stamps) Len() int {
	if s == nil {
		return 0
	}
	return len(s.m)
}

// Settle makes the stamps count at the end, or not: f is a file of the
// store (its lock, held open), on the file system of every stamped file
// (each is linked there). Called after the start's Keep and before the
// agent can run. It changes f's times (the kernel stamps the change with
// its clock) and reads f's change time back: the stamps count when that
// is later than every stamp. Why: the file system stamps a change with a
// coarse clock (a scheduler tick: 4 ms at HZ=250), so an agent's write in
// place in the tick of a stamp could leave the same change time, and the
// end would take its forgery for the file the start linked. Every change
// after f's, the agent's too, is stamped at or after f's (one clock, which
// nothing in the sandbox sets back): when f's is later than every stamp,
// a write in place shows as a change time no stamp has. It reports
// whether they count.
func (s *Stamps) Settle(f *os.File) bool {
	if s == nil || len(s.m) == 0 || s.mixed || f == nil {
		return false
	}
	dev, ctime, ok := touchFile(f)
	if ok && dev == s.dev && ctime > s.max {
		s.settled.Store(true)
	}
	return s.settled.Load()
}

// unchanged reports whether the workspace's file of id is as the start
// stamped it: the same device and inode, the same change time, and the
// stamps settled (Settle). A write in place, a chmod, a rename or a
// link sets a new change time; a file made in its place is another
// inode.
func (s *Stamps) unchanged(id string, fi fileStat) bool {
	if s == nil || !s.settled.Load() || !fi.regular() || fi.ctime == 0 {
		return false
	}
	st, ok := s.m[id]
	return ok && fi.dev == s.dev && fi.ino == st.ino && fi.ctime == st.ctime
}
