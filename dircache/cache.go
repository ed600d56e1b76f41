package dircache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Margin is how long after its last change a directory must have stayed
// unchanged before its record is kept: file times come from a coarse clock
// (a scheduler tick behind the precise one), and two changes within one
// tick can leave the same ctime.
const Margin = time.Second

// MaxFiles bounds the cache files kept (one per view); the least recently
// written go first.
const MaxFiles = 64

// Cache is the directory cache of one run. A nil *Cache reads every
// directory. Its methods are safe for concurrent use.
type Cache struct {
	dir string // "" : off (reads only)
	now func() time.Time
	uid int // the owner a cache file must have (a test seam)

	mu    sync.Mutex
	views map[string]*view
	fsOK  map[uint64]bool // device -> its file system keeps ctimes
	// links are the symlink lists this pass has answered (Links: by view
	// and directory), so that a directory is stat'ed, and read or found
	// unchanged, once per pass however many of its links are asked for;
	// dropped at Save, as the pass's stats are.
	passLinks map[string][]Entry
	passNo    map[string]bool // Readlink: true when no record of the directory could be kept
	// states are the callers' states set in this run (SetState), written
	// at Save.
	states     map[string][]byte
	stateDirty bool
	hits       int
	reads      int
}

type view struct {
	t     table  // the cache file's records, decoded when used
	tUsed []bool // t's records this run looked up
	// pre are this pass's parallel lstat(2)s of t's directories (prefetch):
	// each says whether the directory's key was its record's. They are
	// taken a run of prefetchRun records at a time (runs: who has which),
	// while the walk goes on.
	pre   []uint8
	runs  []atomic.Uint32
	preMu sync.Mutex
	preC  *sync.Cond // a run is done (preMu)
	wg    sync.WaitGroup
	recs  map[string]*Record // the records this run read and kept: they replace t's
	dirty bool
	// started: this pass has used the view (its stats are under way);
	// false after Preload, until the pass's first use, and after Save.
	started bool
	// dec are t's records that have entries, decoded by Preload ahead of
	// the pass: each handed out once, by get (a stat of this pass still
	// decides whether it answers).
	dec map[int32]decoded
	// same are t's records whose directory this pass's own lstat(2) found
	// with the record's key (PassKey), dropped at Save with the pass's
	// other stats; nil until the pass finds one.
	same []bool
}

// decoded is one record's entries decoded ahead (Preload).
type decoded struct {
	ents []Entry
	des  []fs.DirEntry // pointers into ents
}

// pre values
const (
	preNone  = iota // no stat of this pass, or used
	preSame         // the directory's key was its record's
	preOther        // it was not, or no directory: lstat it again
)

// runs values
const (
	runFree  = iota // nobody has taken it yet
	runTaken        // a goroutine (or the walk) is stat'ing it
	runDone         // its pre are set
)

// prefetchRun is how many records in a row are stat'ed by one taker.
const prefetchRun = 64

// get returns dir's record: this run's, else the file's, decoded; i is
// its index in t (-1: this run's). des, when not nil, are its entries as
// Preload decoded them (r.Ents' fs.DirEntry), handed out this once.
//
// ti is dir's index in t as keyOfDir found it (-1: none), so that a
// lookup searches the table once.
func (vw *view) get(dir string, ti int) (r Record, des []fs.DirEntry, i int, ok bool) {
	if rp := vw.recs[dir]; rp != nil {
		return *rp, nil, -1, true
	}
	if i := ti; i >= 0 {
		if d, ok := vw.dec[int32(i)]; ok {
			delete(vw.dec, int32(i)) // once: the caller owns them
			k, total, _, _ := vw.t.head(i)
			return Record{Key: k, Total: total, Ents: d.ents}, d.des, i, true
		}
		return vw.t.record(i), nil, i, true
	}
	return Record{}, nil, -1, false
}

// entriesOf are a hit's entries: Preload's, or made from the record.
func entriesOf(r Record, des []fs.DirEntry) []fs.DirEntry {
	if des != nil {
		return des
	}
	return entries(r.Ents)
}

// use marks record i of t (-1: one of this run's) as used.
func (vw *view) use(i int) {
	if i >= 0 {
		vw.tUsed[i] = true
	}
}

// PrefetchMin is how many records a view must have for its directories to
// be stat'ed in parallel when a pass first uses it.
const PrefetchMin = 256

// Open returns the cache kept in dir (created 0700 if missing). It never
// fails to return a usable cache: the error says why it is off (dir owned
// by another user, writable by others, not a directory), and every
// directory is then read.
func Open(dir string) (*Cache, error) {
	c := &Cache{now: time.Now, uid: os.Geteuid(), views: map[string]*view{}, fsOK: map[uint64]bool{}}
	if dir == "" {
		return c, errors.New("dircache: no directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return c, fmt.Errorf("dircache: %w", err)
	}
	if err := private(dir, c.uid); err != nil {
		return c, err
	}
	c.dir = dir
	return c, nil
}

// Stats returns how many directories were answered from the cache and how
// many were read.
func (c *Cache) Stats() (hits, reads int) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.reads
}

// fileOf is the cache file of view.
func (c *Cache) fileOf(v string) string {
	sum := sha256.Sum256([]byte(v))
	return filepath.Join(c.dir, hex.EncodeToString(sum[:16])+".dc")
}

// viewOf returns view v, loading its file the first time, and starts
// this pass's stats of its directories at the pass's first use.
func (c *Cache) viewOf(v string) *view {
	vw, ok := c.views[v]
	if !ok {
		vw = c.loadView(v)
	}
	if !vw.started {
		vw.started = true
		c.prefetch(vw)
	}
	return vw
}

// Preload reads and checks view v's file, and decodes its records that
// have entries, ahead of the pass that will use it: package sandbox has
// the exit check's files read while the agent runs, so that its end waits
// for the stats and the walk only. No directory is stat'ed here: the
// pass's stats start at its first use of v (an exit check never judges a
// directory by a stat taken before the agent ran), and what Preload
// decoded answers only for a directory that stat finds unchanged. A
// view already in use or loaded is left as it is.
func (c *Cache) Preload(v string) {
	if c == nil || c.dir == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.views[v]; ok {
		return
	}
	vw := c.loadView(v)
	t := &vw.t
	for i := range t.dirs {
		if _, _, n, _ := t.head(i); n == 0 {
			continue
		}
		if vw.dec == nil {
			vw.dec = map[int32]decoded{}
		}
		r := t.record(i)
		vw.dec[int32(i)] = decoded{ents: r.Ents, des: entries(r.Ents)}
	}
}

// loadView makes view v from its cache file (none, or one that fails
// its checks: empty, rewritten at Save). c.mu is held.
func (c *Cache) loadView(v string) *view {
	vw := &view{}
	c.views[v] = vw
	if c.dir == "" {
		return vw
	}
	if b, err := readPrivate(c.fileOf(v), c.uid); err == nil {
		// b is this view's alone and never written again: the table
		// refers to it rather than to a copy.
		if t, err := parseTable(b, v, true); err == nil {
			vw.t, vw.tUsed = t, make([]bool, len(t.dirs))
		} else {
			vw.dirty = true // rewritten at Save
		}
	}
	return vw
}

// prefetch starts a few goroutines that take the lstat(2)s of vw's
// directories (a walk of an unchanged tree is one lstat per directory, one
// after the other otherwise) and keep whether each gave its record's key
// (vw.pre). They take runs of records in the file's order while the walk
// goes on; the walk, coming to a record, waits for its run if a goroutine
// has it, or stats the run itself if none has (statRun). The stats are
// this pass's own: taken from now, when the pass first uses the view, used
// once each by this view only (a record is one view's), dropped at Save,
// which waits for the goroutines (an exit check must never judge a
// directory by a stat taken before the agent ran).
func (c *Cache) prefetch(vw *view) {
	n := min(runtime.GOMAXPROCS(0), 4)
	t := &vw.t
	if len(t.dirs) < PrefetchMin || n < 2 {
		return
	}
	vw.pre = make([]uint8, len(t.dirs))
	vw.runs = make([]atomic.Uint32, (len(t.dirs)+prefetchRun-1)/prefetchRun)
	vw.preC = sync.NewCond(&vw.preMu)
	var next atomic.Int64
	for range n {
		vw.wg.Add(1)
		go func() {
			defer vw.wg.Done()
			for {
				r := int(next.Add(1)) - 1
				if r >= len(vw.runs) {
					return
				}
				vw.statRun(r)
			}
		}()
	}
}

// statRun takes run r of vw.pre, unless someone has, and stats its
// directories.
func (vw *view) statRun(r int) {
	if !vw.runs[r].CompareAndSwap(runFree, runTaken) {
		return
	}
	t := &vw.t
	for i := r * prefetchRun; i < min((r+1)*prefetchRun, len(t.dirs)); i++ {
		vw.pre[i] = preOther
		if k, dir := lstatKey(t.dirs[i]); dir && k == t.key(i) {
			vw.pre[i] = preSame
		}
	}
	vw.preMu.Lock()
	vw.runs[r].Store(runDone) // after pre: a reader that sees runDone sees them
	vw.preC.Broadcast()
	vw.preMu.Unlock()
}

// preOf returns the prefetched stat of record i, once: the run holding it
// stat'ed by the walk itself if no goroutine has taken it yet, waited for
// if one has.
func (vw *view) preOf(i int) uint8 {
	r := i / prefetchRun
	vw.statRun(r)
	if vw.runs[r].Load() != runDone {
		vw.preMu.Lock()
		for vw.runs[r].Load() != runDone {
			vw.preC.Wait()
		}
		vw.preMu.Unlock()
	}
	p := vw.pre[i]
	vw.pre[i] = preNone // once
	return p
}

// keyOfDir returns dir's key for view vw (the prefetched stamp of its
// record, used up, or a fresh lstat), and false when dir is no directory
// or lies on a file system whose ctimes are not trusted; and dir's index
// in vw.t (-1: none, or this run's record replaces it), for get. c.mu is
// held.
func (c *Cache) keyOfDir(vw *view, dir string) (Key, bool, int) {
	ti := -1
	if vw.recs[dir] == nil {
		if i, ok := vw.t.find(dir); ok {
			ti = i
		}
	}
	if vw.pre != nil && ti >= 0 && vw.preOf(ti) == preSame {
		// This pass's lstat gave the record's key: that key.
		k := vw.t.key(ti)
		vw.markSame(ti)
		return k, c.trusted(k.Dev, dir), ti
	}
	key, isDir := lstatKey(dir)
	if !isDir {
		return Key{}, false, ti
	}
	if ti >= 0 && key == vw.t.key(ti) {
		vw.markSame(ti)
	}
	return key, c.trusted(key.Dev, dir), ti
}

// markSame notes that this pass's lstat of record i's directory gave the
// record's key (PassKey).
func (vw *view) markSame(i int) {
	if vw.same == nil {
		vw.same = make([]bool, len(vw.t.dirs))
	}
	vw.same[i] = true
}

// PassKey returns dir's key as this pass's own lstat(2) of it found it,
// when that was the key of a view's record of dir (the pass looked dir up
// or read it through the cache, and it had not changed since the record),
// and false otherwise. A caller that needs the key of a directory the
// pass has walked asks here instead of stat'ing it once more (fsrules'
// other-names record, 2,800 lstats a start on the bench's tree).
//
// Only this pass's stats answer: a pass ends at Save, and an exit check
// must never judge a directory by a stat taken before the agent ran. The
// key is the one the walk itself used, taken before the caller asks: a
// change after it is one the walk did not see either.
func (c *Cache) PassKey(dir string) (Key, bool) {
	if c == nil {
		return Key{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, vw := range c.views {
		if vw.same == nil {
			continue
		}
		if i, ok := vw.t.find(dir); ok && vw.same[i] {
			return vw.t.key(i), true
		}
	}
	return Key{}, false
}

// entries returns the kept entries as fs.DirEntry: pointers into the
// record (no allocation per entry; the walk on an unchanged tree makes
// nothing else per directory).
func entries(es []Entry) []fs.DirEntry {
	out := make([]fs.DirEntry, len(es))
	for i := range es {
		out[i] = &es[i]
	}
	return out
}

// Records returns how many directories view's cache file has records of
// (loading it, as the first lookup would).
func (c *Cache) Records(v string) int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.viewOf(v).t.dirs)
}

// Lookup answers for dir from the record of view when dir is the
// directory that record was kept for and has not changed since (its
// device, inode and ctime): the entries kept then, how many entries dir
// had in all, its device, and true. It reads nothing: false means ReadDir
// must read dir.
func (c *Cache) Lookup(v, dir string) ([]fs.DirEntry, int, uint64, bool) {
	ents, total, key, ok := c.LookupKey(v, dir)
	return ents, total, key.Dev, ok
}

// LookupKey is Lookup, with dir's whole key (its ctime says since when
// it has not changed).
func (c *Cache) LookupKey(v, dir string) ([]fs.DirEntry, int, Key, bool) {
	if c == nil {
		return nil, 0, Key{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	vw := c.viewOf(v)
	key, ok, ti := c.keyOfDir(vw, dir)
	if !ok {
		return nil, 0, Key{}, false
	}
	r, des, i, hit := vw.get(dir, ti)
	if !hit || r.Key != key {
		return nil, 0, Key{}, false
	}
	vw.use(i)
	c.hits++
	return entriesOf(r, des), r.Total, key, true
}

// ReadDir returns the entries of dir that keep selects, in no particular
// order, how many entries dir has in all, and the device dir is on. When dir is the directory a
// record of view was kept for and it has not changed since, the record
// answers; otherwise dir is read (its errors are os.Open's and
// os.File.ReadDir's) and, when it qualifies, remembered. keep must depend
// only on view, dir, the name and the type.
func (c *Cache) ReadDir(v, dir string, keep func(name string, t fs.FileMode) bool) ([]fs.DirEntry, int, uint64, error) {
	return c.readDir(v, dir, keep, false)
}

// ReadDirNoFollow is ReadDir of a directory of its own: a symlink at dir
// (even to a directory), a file or nothing there is an error, and nothing
// is read through a symlink (the read opens dir with O_NOFOLLOW; a hit's
// key is lstat(2)'s, which sees the link). For callers that decide what
// is absent from a listing (fsrules' home names), where a listing of a
// link's target would answer for the wrong directory.
func (c *Cache) ReadDirNoFollow(v, dir string, keep func(name string, t fs.FileMode) bool) ([]fs.DirEntry, int, uint64, error) {
	return c.readDir(v, dir, keep, true)
}

func (c *Cache) readDir(v, dir string, keep func(name string, t fs.FileMode) bool, nofollow bool) ([]fs.DirEntry, int, uint64, error) {
	if c == nil {
		kept, total, key, _, err := readKept(dir, keep, nofollow)
		if err != nil {
			return nil, 0, 0, err
		}
		return entries(kept), total, key.Dev, nil
	}
	t0 := c.now()
	c.mu.Lock()
	vw := c.viewOf(v)
	key, ok, ti := c.keyOfDir(vw, dir)
	if r, des, i, hit := vw.get(dir, ti); ok && hit && r.Key == key {
		vw.use(i)
		c.hits++
		c.mu.Unlock()
		return entriesOf(r, des), r.Total, key.Dev, nil
	}
	c.mu.Unlock()
	kept, total, k2, ok2, err := readKept(dir, keep, nofollow)
	if err != nil {
		return nil, 0, 0, err
	}
	// The record is kept for the directory that was read: the one the lstat
	// above saw, still unchanged, and last changed well before it.
	ok = ok && ok2 && k2 == key && key.Ctime < t0.Add(-Margin).UnixNano()
	c.mu.Lock()
	c.reads++
	if ok {
		c.keep(v, dir, key, total, kept)
	}
	c.mu.Unlock()
	return entries(kept), total, k2.Dev, nil
}

// keep records what a read of dir found, for view v, replacing the
// record it had; nothing when the cache has no directory to save to.
// c.mu is held.
func (c *Cache) keep(v, dir string, key Key, total int, kept []Entry) {
	if c.dir == "" {
		return
	}
	vw := c.viewOf(v)
	if vw.recs == nil {
		vw.recs = map[string]*Record{}
	}
	vw.recs[dir] = &Record{Key: key, Total: total, Ents: kept} // replaces t's
	vw.dirty = true
}

// Uncached reads every directory: the DirReader of a walk without a cache
// (fsrules and gitguard use it when given none).
type Uncached struct{}

// ReadDir reads dir; view is not used.
func (Uncached) ReadDir(_, dir string, keep func(string, fs.FileMode) bool) ([]fs.DirEntry, int, uint64, error) {
	return Read(dir, keep)
}

// Read reads dir without a cache: the entries keep selects, in the
// directory's order (callers sort what they make of them), how many
// entries it has in all and its device. Its errors are os.Open's, fstat's
// and os.File.ReadDir's.
func Read(dir string, keep func(string, fs.FileMode) bool) ([]fs.DirEntry, int, uint64, error) {
	kept, total, key, _, err := readKept(dir, keep, false)
	if err != nil {
		return nil, 0, 0, err
	}
	return entries(kept), total, key.Dev, nil
}

// Save writes the views that changed: each keeps the records this run
// used (a directory no longer walked drops out). Files beyond MaxFiles are
// removed, least recently written first.
func (c *Cache) Save() error {
	if c == nil || c.dir == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.passLinks, c.passNo = nil, nil // the pass is over
	var errs []error
	wrote := c.stateDirty
	if err := c.saveStates(); err != nil {
		errs = append(errs, err)
	}
	for v, vw := range c.views {
		if !vw.started {
			continue // not used since the last Save (or only preloaded): as it was
		}
		vw.wg.Wait()
		// The pass is over: its stats are not the next one's, which takes
		// its own at its first use.
		vw.pre, vw.runs, vw.started, vw.dec, vw.same = nil, nil, false, nil, nil
		nused := 0
		for _, u := range vw.tUsed {
			if u {
				nused++
			}
		}
		if !vw.dirty && nused == len(vw.t.dirs) {
			continue
		}
		recs := make(map[string]*Record, nused+len(vw.recs))
		for i, d := range vw.t.dirs {
			if vw.tUsed[i] {
				r := vw.t.record(i)
				recs[d] = &r
			}
		}
		maps.Copy(recs, vw.recs) // this run's replace the file's
		b, err := Encode(v, recs)
		if err == nil {
			err = writePrivate(c.dir, c.fileOf(v), b)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// What was written is the view now, every record of it used.
		if t, err := parseTable(b, v, true); err == nil {
			vw.t, vw.recs = t, nil
			vw.tUsed = make([]bool, len(t.dirs))
			for i := range vw.tUsed {
				vw.tUsed[i] = true
			}
		} else {
			vw.t, vw.tUsed, vw.recs = table{}, nil, recs
		}
		vw.dirty = false
		wrote = true
	}
	if wrote {
		c.prune() // a start that changed nothing lists nothing
	}
	return errors.Join(errs...)
}

// prune removes the oldest cache files beyond MaxFiles.
func (c *Cache) prune() {
	ents, err := os.ReadDir(c.dir)
	if err != nil || len(ents) <= MaxFiles {
		return
	}
	type file struct {
		p string
		t time.Time
	}
	var fs []file
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			fs = append(fs, file{filepath.Join(c.dir, e.Name()), fi.ModTime()})
		}
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].t.After(fs[j].t) })
	for i := MaxFiles; i < len(fs); i++ {
		os.Remove(fs[i].p)
	}
}

// linksView is the view of Links' records for the caller's view v: apart
// from v's own (ReadDir keeps entries without texts; Links only symlinks).
func linksView(v string) string { return v + linksSuffix }

const linksSuffix = "\x00symlinks"

// Links calls each for every symlink directly in dir, with its text (as
// readlink(2) gives it), sorted by name. When dir is the directory a record
// of view was kept for and it has not changed since (device, inode,
// ctime), the record answers; otherwise dir is read (getdents(2) and a
// readlinkat(2) per symlink) and, when it qualifies, remembered. A symlink
// cannot be changed in place: retargeting one removes or renames an entry
// of dir, which changes dir's ctime. Its errors are those of opening and
// reading dir.
func (c *Cache) Links(v, dir string, each func(name, target string)) error {
	ents, err := c.links(v, dir)
	for i := range ents {
		each(ents[i].name, ents[i].link)
	}
	return err
}

// Readlink returns the text of the symlink p, as os.Readlink does, from
// the symlinks of p's directory (Links, same view): an error when p is no
// symlink. When that directory cannot be listed (search permission only),
// it is os.Readlink's answer.
func (c *Cache) Readlink(v, p string) (string, error) {
	dir, name := filepath.Split(p)
	if c == nil || name == "" || !filepath.IsAbs(p) {
		return os.Readlink(p)
	}
	dir = filepath.Clean(dir)
	if !c.linksKeepable(v, dir) {
		// No record would be kept (an untrusted file system, a directory
		// changed just now): the one link, not the whole directory.
		return os.Readlink(p)
	}
	ents, err := c.links(v, dir)
	if err != nil {
		return os.Readlink(p)
	}
	if i, ok := sort.Find(len(ents), func(i int) int { return strings.Compare(name, ents[i].name) }); ok {
		return ents[i].link, nil
	}
	// No symlink of that name: os.Readlink's own error (ENOENT, EINVAL,
	// ENOTDIR), or its text should p have become one since.
	return os.Readlink(p)
}

// linksKeepable reports whether Links' answer for dir is, or could be
// kept as, a record (this pass has it, or dir is a directory on a trusted
// file system last changed more than Margin ago); the answer is
// remembered for the pass.
func (c *Cache) linksKeepable(v, dir string) bool {
	passKey := linksView(v) + "\x00" + dir
	t0 := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.passLinks[passKey]; ok {
		return true
	}
	if no, ok := c.passNo[passKey]; ok {
		return !no
	}
	vw := c.viewOf(linksView(v))
	key, ok, _ := c.keyOfDir(vw, dir)
	ok = ok && key.Ctime < t0.Add(-Margin).UnixNano()
	if c.passNo == nil {
		c.passNo = map[string]bool{}
	}
	c.passNo[passKey] = !ok
	return ok
}

// links returns dir's symlinks with their texts, sorted by name: the
// record's own entries (not to be changed) or a fresh read's.
func (c *Cache) links(v, dir string) ([]Entry, error) {
	isLink := func(_ string, t fs.FileMode) bool { return t&fs.ModeType == fs.ModeSymlink }
	if c == nil {
		kept, _, _, _, err := readKept(dir, isLink, false)
		if err != nil {
			return nil, err
		}
		kept, _, err = readLinkTexts(dir, kept, Key{})
		return sortedByName(kept), err
	}
	v = linksView(v)
	passKey := v + "\x00" + dir
	t0 := c.now()
	c.mu.Lock()
	if ents, ok := c.passLinks[passKey]; ok {
		c.mu.Unlock()
		return ents, nil
	}
	vw := c.viewOf(v)
	key, ok, ti := c.keyOfDir(vw, dir)
	if r, _, i, hit := vw.get(dir, ti); ok && hit && r.Key == key {
		vw.use(i)
		c.hits++
		c.remember(passKey, r.Ents)
		c.mu.Unlock()
		return r.Ents, nil
	}
	c.mu.Unlock()
	kept, total, k2, ok2, err := readKept(dir, isLink, false)
	if err != nil {
		return nil, err
	}
	// The texts are read through a descriptor of the directory whose key
	// is k2: a symlink retargeted since the listing changed its ctime, so
	// the record below (kept under key, which must equal k2) no longer
	// answers.
	kept, same, err := readLinkTexts(dir, kept, k2)
	if err != nil {
		return nil, err
	}
	kept = sortedByName(kept)
	// As ReadDir: kept for the directory that was read, the one the lstat
	// above saw, unchanged, and last changed well before it.
	ok = ok && ok2 && same && k2 == key && key.Ctime < t0.Add(-Margin).UnixNano()
	c.mu.Lock()
	c.reads++
	if ok {
		c.keep(v, dir, key, total, kept)
	}
	c.remember(passKey, kept)
	c.mu.Unlock()
	return kept, nil
}

// remember keeps a directory's symlinks for the rest of the pass. c.mu is
// held.
func (c *Cache) remember(passKey string, ents []Entry) {
	if c.passLinks == nil {
		c.passLinks = map[string][]Entry{}
	}
	c.passLinks[passKey] = ents
}

func sortedByName(es []Entry) []Entry {
	sort.Slice(es, func(i, j int) bool { return es[i].name < es[j].name })
	return es
}
