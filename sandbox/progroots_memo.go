package sandbox

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jail-sandbox/jail/dircache"
	"github.com/jail-sandbox/jail/fsrules"
)

// This file: programRoots' answer for a PATH directory, kept across starts.
//
// What programRoots finds in a PATH directory d is a list of candidates:
// the targets t its symlinks lead to (followLink: by the texts of d's
// symlinks and of the links on the chain, through /etc and the data
// places) that lie in a data place or outside the system directories; each
// is then resolved (EvalSymlinks) and its directory shown unless it lies in
// a writable root. The candidates depend only on the texts of the symlinks
// read, on the data places and on the writable roots (the memo's name), and
// a symlink's text cannot change without its directory's ctime (retargeting
// one removes or renames an entry: see package dircache's doc). So a start
// may take d's candidates from an earlier start's record when every
// directory whose symlinks that start read (d, and each directory of a link
// on a chain: its deps) has the key (device, inode, ctime) it had then, on
// a file system whose ctimes are trusted. A record is kept only when each
// dep had the same key before and after it was read and was last changed
// more than dircache.Margin before: a change during the read would leave a
// later ctime. The candidates' resolution is never kept: it is made afresh
// at every start (a data place's directory swapped for a symlink into the
// workspace is seen). Anything the record cannot answer exactly (another
// key, an undecodable state, a dep no directory) is read as without it.
// The record lives in package dircache's state (jail's state directory,
// which no sandbox sees, a private file with a checksum).

// rootsStore keeps the memo (a *dircache.Cache).
type rootsStore interface {
	State(name string) []byte
	SetState(name string, b []byte)
	Trusted(dev uint64, dir string) bool
}

// rootsMemoHits counts the PATH directories answered by the memo (a test
// seam).
var rootsMemoHits atomic.Int64

// rootsDep is a directory whose symlinks a record was read from, and its
// key then.
type rootsDep struct {
	path string
	key  dircache.Key
}

// rootsEntry is the record of one PATH directory.
type rootsEntry struct {
	dir   string
	deps  []rootsDep
	cands []string
}

// rootsMemo is the memo of one start: the records read, those made.
type rootsMemo struct {
	st   rootsStore
	name string
	rec  []byte
	old  map[string]rootsEntry
	next []rootsEntry
	made bool // next holds a record made by this start
}

// loadRootsMemo returns the memo for these data places and writable roots
// (nil when links keeps no state).
func loadRootsMemo(links linkReader, places, writable []string) *rootsMemo {
	st, ok := links.(rootsStore)
	if !ok || st == nil {
		return nil
	}
	m := &rootsMemo{st: st, old: map[string]rootsEntry{}, name: rootsMemoName(places, writable)}
	m.rec = st.State(m.name)
	if es, ok := decodeRoots(m.rec); ok {
		for _, e := range es {
			m.old[e.dir] = e
		}
	}
	return m
}

// rootsMemoName names the memo of these credentials (what the symlinks
// gave them), data places and writable roots.
func rootsMemoName(places, writable []string) string {
	return "sandbox-progroots-1\x00" + fsrules.Creds() + "\x00" + strings.Join(places, "\x00") + "\x00\x00" + strings.Join(writable, "\x00")
}

// lookup returns d's candidates when its record still answers: every dep
// has its key, on a trusted file system. The record is kept for the next
// start.
func (m *rootsMemo) lookup(d string) ([]string, bool) {
	if m == nil {
		return nil, false
	}
	e, ok := m.old[d]
	if !ok || len(e.deps) == 0 {
		return nil, false
	}
	for _, dep := range e.deps {
		if k, ok := dircache.DirKey(dep.path); !ok || k != dep.key || !m.st.Trusted(k.Dev, dep.path) {
			return nil, false
		}
	}
	m.next = append(m.next, e)
	rootsMemoHits.Add(1)
	return e.cands, true
}

// rootsRec records one PATH directory's read: its deps (keyed before
// each is read) and candidates.
type rootsRec struct {
	t0   time.Time
	e    rootsEntry
	bad  bool
	seen map[string]bool
}

func (m *rootsMemo) recorder(d string) *rootsRec {
	if m == nil {
		return nil
	}
	return &rootsRec{t0: time.Now(), e: rootsEntry{dir: d}, seen: map[string]bool{}}
}

// dep notes that dir's symlinks are about to be read.
func (r *rootsRec) dep(dir string) {
	if r == nil || r.bad || r.seen[dir] {
		return
	}
	r.seen[dir] = true
	k, ok := dircache.DirKey(dir)
	if !ok {
		r.bad = true // not a directory: nothing to key the answer by
		return
	}
	r.e.deps = append(r.e.deps, rootsDep{dir, k})
}

func (r *rootsRec) cand(t string) {
	if r != nil {
		r.e.cands = append(r.e.cands, t)
	}
}

// keep makes r a record when it qualifies: every dep unchanged across
// its read (the same key now), trusted, and last changed more than
// dircache.Margin before the read began.
func (m *rootsMemo) keep(r *rootsRec) {
	if m == nil || r == nil || r.bad || len(r.e.deps) == 0 {
		return
	}
	limit := r.t0.Add(-dircache.Margin).UnixNano()
	for _, dep := range r.e.deps {
		k, ok := dircache.DirKey(dep.path)
		if !ok || k != dep.key || k.Ctime >= limit || !m.st.Trusted(k.Dev, dep.path) {
			return
		}
	}
	m.next = append(m.next, r.e)
	m.made = true
}

// save sets the state for the next start (when it changed).
func (m *rootsMemo) save() {
	if m == nil || !m.made && len(m.next) == len(m.old) && m.rec != nil {
		return // every record answered (the same set, nothing to write)
	}
	switch b := encodeRoots(m.next); {
	case len(m.next) == 0:
		if m.rec != nil {
			m.st.SetState(m.name, nil)
		}
	case !bytes.Equal(b, m.rec):
		m.st.SetState(m.name, b)
	}
}

func encodeRoots(es []rootsEntry) []byte {
	var b []byte
	b = binary.AppendUvarint(b, uint64(len(es)))
	for _, e := range es {
		b = dircache.AppendStr(b, e.dir)
		b = binary.AppendUvarint(b, uint64(len(e.deps)))
		for _, d := range e.deps {
			b = dircache.AppendStr(b, d.path)
			b = dircache.AppendKey(b, d.key)
		}
		b = binary.AppendUvarint(b, uint64(len(e.cands)))
		for _, c := range e.cands {
			b = dircache.AppendStr(b, c)
		}
	}
	return b
}

// decodeRoots parses what encodeRoots wrote; false for anything else
// (every path absolute and clean).
func decodeRoots(b []byte) ([]rootsEntry, bool) {
	if b == nil {
		return nil, false
	}
	r := dircache.NewStateReader(b)
	path := func() string {
		s := r.Str()
		if r.OK() && (!filepath.IsAbs(s) || filepath.Clean(s) != s) {
			r.Fail()
		}
		return s
	}
	var es []rootsEntry
	for i, n := uint64(0), r.Uvarint(); r.OK() && i < n; i++ {
		e := rootsEntry{dir: path()}
		for j, nd := uint64(0), r.Uvarint(); r.OK() && j < nd; j++ {
			e.deps = append(e.deps, rootsDep{path: path(), key: r.Key()})
		}
		for j, nc := uint64(0), r.Uvarint(); r.OK() && j < nc; j++ {
			e.cands = append(e.cands, path())
		}
		es = append(es, e)
	}
	return es, r.Done()
}
