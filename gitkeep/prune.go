package gitkeep

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Age is how long a store keeps an object after the workspace's own link
// to it went while no pack of the repository holds it (an object the agent
// deleted, or one the host's git gc pruned), and a store whose repository
// is gone: git's own gc.reflogExpireUnreachable, the time git itself keeps
// a commit that only a reflog reaches. The run that deletes a ref or the
// git dir says so at its end, with the command that fetches it back.
const Age = 30 * 24 * time.Hour

// fullEvery is how often a prune looks at every objects/xx directory of
// a store, not only those whose workspace directory changed: the age rule
// needs the look, and a pack made by a later gc may hold what was
// deleted.
const fullEvery = 24 * time.Hour

// Store files of the prune: the workspace's objects/xx mtimes at the
// start whose end last looked at each store directory whole ("xx NS", -1
// absent), when the last full look was (unix ns), and since when the
// repository is gone.
const (
	prunedFile = "pruned-mtimes"
	fullFile   = "pruned-full"
	goneFile   = "gone-since"
	// unprotectedFile marks a store whose repository a run used without
	// read-only packs (degraded mode: no mounts): its packs were, and can
	// again be, the agent's to delete, so none counts any more.
	unprotectedFile = "packs-unprotected"
	// unlinkedFile: "id NS" a line, when an end first saw the
	// workspace's link to a copy gone while the copy had other names
	// (its ctime does not say when: unlinkedSince).
	unlinkedFile = "unlinked-since"
	// sharedFile: "id" a line, links (kept past a start's copy budget)
	// whose workspace name an end found gone while the file had another
	// name (a local clone's link, in a tree the agent writes): the next
	// start copies them (copyShared).
	sharedFile = "links-shared"
)

// maxUnlinked bounds the unlinked-since record read (about 60 bytes a
// copy: 270,000 copies); past it the record is read as empty, so every
// such copy's age starts again: kept longer, never shorter.
const maxUnlinked = 16 << 20

// Unprotected marks store: a run uses its repository while the packs are
// not read-only (degraded mode). From then on its copies go by Age only.
func Unprotected(store string) error {
	return writeIfChanged(filepath.Join(store, unprotectedFile), []byte("a run without read-only packs used this repository\n"))
}

// Pruned is what one Prune did.
type Pruned struct {
	Packed int  // copies removed: a pack of the repository holds the object
	Aged   int  // copies removed: past Age without the workspace's link
	Refs   int  // recorded refs dropped: their object is nowhere
	More   bool // the deadline came first: the rest at a later end
	// PacksAged and PacksOver are the kept packs removed (KeepPacks):
	// gone from the workspace for Age, or past MaxKeptPackBytes.
	PacksAged, PacksOver int
	// NoPacks says why no pack was read (none counts as holding
	// anything): too many, or a git dir whose objects/ or objects/pack is
	// not a plain directory.
	NoPacks error
}

// Prune frees what store (the store of git dir gitDir) no longer needs to
// hold, at a run's end, under lock (Lock's file, made exclusive here:
// with another run of the store alive, nothing is done). A copy whose
// object the workspace still has stays. A copy the workspace no longer
// has goes when one of the repository's own packs
// (at most maxPacks: those githistory keeps read-only; each of one name)
// holds the object, verified by its bytes, or Age after the workspace's
// link went (unlinkedSince). A recorded ref goes when its object
// is in neither the store nor the repository. start is Keep's
// Result.Mtimes: only the store directories whose workspace directory
// changed since the last prune are read, all of them once a day.
// Everything stops at deadline (More).
func Prune(lock *os.File, store, gitDir string, start *[256]int64, maxPacks int, now, deadline time.Time) (Pruned, error) {
	var res Pruned
	if !exclusive(lock) {
		return res, nil
	}
	var err error
	if res.PacksAged, res.PacksOver, err = prunePacks(store, now, MaxKeptPackBytes); err != nil {
		return res, err
	}
	width := Width(store)
	// The packs are opened at the first copy the workspace no longer
	// links (after a host gc, or a deletion): most ends open none.
	budget := int64(1) << 30
	var packs []*pack
	var perr error
	opened := false
	open := func() ([]*pack, error) {
		if !opened {
			opened = true
			if _, err := os.Lstat(filepath.Join(store, unprotectedFile)); err == nil {
				perr = fmt.Errorf("gitkeep: %s: a run without read-only packs used this repository", gitDir)
			} else {
				packs, perr = openPacks(gitDir, store, width, maxPacks, &budget)
				for _, p := range packs {
					p.deadline = deadline
				}
			}
			res.NoPacks = perr
		}
		return packs, perr
	}
	defer func() { closePacks(packs) }()

	var last [256]int64
	old, _ := os.ReadFile(filepath.Join(store, prunedFile))
	parseSeen(old, &last)
	full := true
	if b, err := os.ReadFile(filepath.Join(store, fullFile)); err == nil {
		if t, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && now.Sub(time.Unix(0, t)) < fullEvery {
			full = false
		}
	}
	since := map[string]int64{}
	if b, err := readFile(filepath.Join(store, unlinkedFile), maxUnlinked); err == nil {
		parseSince(b, since)
	}
	shared := readShared(store)
	defer func() { writeShared(store, shared) }()
	// What the store's objects take, each class's (counts): a whole look
	// counts them again (the user's bytes, the runs' record).
	c := loadCounts(store)
	look := &looked{c: c, run: map[string]bool{}}
	wholeLook := full
	objs := filepath.Join(store, "objects")
	for x := 0; x < 256; x++ {
		if !full && last[x] != 0 && last[x] == start[x] {
			continue // the workspace's directory is as it was at the last look
		}
		n := fmt.Sprintf("%02x", x)
		if fi, err := os.Lstat(filepath.Join(objs, n)); err != nil || !fi.IsDir() {
			if start[x] == -1 || now.Sub(time.Unix(0, start[x])) > settle {
				last[x] = start[x] // nothing kept there
			}
			continue
		}
		done, err := pruneDir(filepath.Join(objs, n), gitDir, n, open, since, shared, now, deadline, &res, look)
		if err != nil {
			writeSince(store, since)
			return res, err
		}
		if !done {
			res.More, full = true, false
			break
		}
		// One that changed in the file system's last tick is read again.
		if start[x] == -1 || now.Sub(time.Unix(0, start[x])) > settle {
			last[x] = start[x]
		}
	}
	var out bytes.Buffer
	for i, t := range last {
		if t != 0 {
			fmt.Fprintf(&out, "%02x %d\n", i, t)
		}
	}
	if err := writeSince(store, since); err != nil {
		return res, err
	}
	if err := writeIfChanged(filepath.Join(store, prunedFile), out.Bytes()); err != nil {
		return res, err
	}
	if wholeLook && full {
		look.recount()
	}
	if err := c.save(store); err != nil {
		return res, err
	}
	if full {
		if err := writeIfChanged(filepath.Join(store, fullFile), []byte(strconv.FormatInt(now.UnixNano(), 10)+"\n")); err != nil {
			return res, err
		}
	}
	return res, pruneRefs(store, gitDir, open, &res)
}

// pruneDir looks at the copies in one store directory; false when the
// deadline came first.
func pruneDir(dir, gitDir, n string, open func() ([]*pack, error), since map[string]int64, shared map[string]bool, now, deadline time.Time, res *Pruned, look *looked) (bool, error) {
	files, err := os.ReadDir(dir)
	if err != nil {
		return true, nil
	}
	for _, f := range files {
		fn := f.Name()
		if (len(fn) != 38 && len(fn) != 62) || !isHex(fn) || !f.Type().IsRegular() {
			continue
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		fi, err := f.Info()
		if err != nil {
			continue
		}
		look.saw(n+fn, fi.Size())
		// The workspace still has the object (the twin of a copy, or the
		// same inode, an older store's link): the copy stays, the
		// protection against the agent deleting or writing it. A link of
		// another (a second store, a clone's) is not the workspace's.
		if wi, err := os.Lstat(filepath.Join(gitDir, "objects", n, fn)); err == nil && wi.Mode().IsRegular() {
			delete(since, n+fn) // the workspace has it again
			continue
		}
		// Why: a link whose workspace name went but that has another
		// name (in a tree the agent writes) is the agent's to write in
		// place: the next start copies it (copyShared).
		if nl, _, ok := linkInfo(fi); ok && nl > 1 {
			shared[n+fn] = true
		}
		packs, _ := open()
		switch {
		case packsHold(packs, n+fn):
			res.Packed++
		case now.Sub(unlinkedSince(since, n+fn, now)) > Age:
			res.Aged++
		default:
			continue
		}
		delete(since, n+fn)
		delete(shared, n+fn)
		if err := os.Remove(filepath.Join(dir, fn)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return true, fmt.Errorf("gitkeep: %w", err)
		}
		look.freed(n+fn, fi.Size())
	}
	os.Remove(dir) // only when empty
	return true, nil
}

// looked is what a prune's look at a store's objects saw: the bytes of
// the user's still there (a whole look's count) and the runs' objects
// still there.
type looked struct {
	c    *counts
	user int64
	run  map[string]bool
}

func (l *looked) saw(id string, size int64) {
	if _, ok := l.c.run[id]; ok {
		l.run[id] = true
		return
	}
	l.user += size
}

// freed takes a removed object from the counts (and from the look).
func (l *looked) freed(id string, size int64) {
	if l.run[id] {
		delete(l.run, id)
	} else {
		l.user -= size
	}
	l.c.forget(id, size)
}

// recount, after a look at every object, sets the counts to what was
// seen: the user's bytes, and the runs' record without the objects gone
// (a removed link's bytes counted until then: lane keepbudget).
func (l *looked) recount() {
	l.c.used, l.c.dirty = l.user, true
	for id, n := range l.c.run {
		if !l.run[id] {
			l.c.add(id, true, -n)
		}
	}
}

// unlinkedSince is when the end first saw the workspace's object id gone,
// for the age rule (since, the store's record, which no sandbox reaches).
// Not the copy's ctime: a copy's is when the store made it (lane gitkeep3:
// copies, not links), and a link's does not change when the agent renames
// an objects/xx directory aside, which takes the workspace's name away
// without touching its files (review16a: a copy made more than Age ago then
// went at that same end, leaving the renamed file, the agent's to delete,
// the only one).
func unlinkedSince(since map[string]int64, id string, now time.Time) time.Time {
	t, ok := since[id]
	if !ok {
		t = now.UnixNano()
		since[id] = t
	}
	return time.Unix(0, t)
}

func parseSince(b []byte, since map[string]int64) {
	for _, l := range strings.Split(string(b), "\n") {
		id, t, ok := strings.Cut(l, " ")
		if !ok || (len(id) != 40 && len(id) != 64) || !isHex(id) {
			continue
		}
		if v, err := strconv.ParseInt(t, 10, 64); err == nil {
			since[id] = v
		}
	}
}

// writeSince writes the unlinked-since record (none when empty).
func writeSince(store string, since map[string]int64) error {
	lines := make([]string, 0, len(since))
	for id, t := range since {
		// Sorted as the ids: an id ends at the space, which sorts before
		// every hex digit.
		lines = append(lines, id+" "+strconv.FormatInt(t, 10))
	}
	return writeLines(filepath.Join(store, unlinkedFile), lines)
}

// pruneRefs drops the recorded refs whose object the store's fetch could
// not find: a ref the repository no longer has whose object is neither a
// copy in the store nor, in the repository, a loose object or a pack's
// entry (the idx's word is enough here: keeping is the safe side). With
// the packs unread, every ref is kept.
func pruneRefs(store, gitDir string, open func() ([]*pack, error), res *Pruned) error {
	p := filepath.Join(store, "packed-refs")
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	refs := map[string]string{}
	parsePacked(b, refs)
	now, head := Refs(gitDir)
	var names []string
	drop := 0
	for r, id := range refs {
		if now[r] == id || (r == "refs/jail/HEAD" && head == id) || has(store, id) || has(gitDir, id) {
			names = append(names, r)
			continue
		}
		packs, perr := open()
		if perr != nil || inIdx(packs, id) {
			names = append(names, r)
			continue
		}
		drop++
	}
	if drop == 0 {
		return nil
	}
	res.Refs = drop
	sort.Strings(names)
	var out bytes.Buffer
	for _, r := range names {
		fmt.Fprintf(&out, "%s %s\n", refs[r], r)
	}
	return writeIfChanged(p, out.Bytes())
}

func has(gitDir, id string) bool {
	fi, err := os.Lstat(filepath.Join(gitDir, "objects", id[:2], id[2:]))
	return err == nil && fi.Mode().IsRegular()
}

func inIdx(packs []*pack, hexID string) bool {
	id, err := hex.DecodeString(hexID)
	if err != nil {
		return false
	}
	for _, p := range packs {
		if _, ok := p.x.find(id); ok && len(id) == p.x.width {
			return true
		}
	}
	return false
}

// Sweep looks at every store under base (not those in skip: this run's,
// pruned by Prune) and removes one whose repository has been gone (no
// HEAD in the git dir its alternates names) for Age; a repository seen
// again clears the mark. A store another run holds is left alone. It
// returns the stores removed.
func Sweep(base string, skip map[string]bool, now, deadline time.Time) ([]string, error) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return nil, nil
	}
	var removed []string
	for _, e := range ents {
		st := filepath.Join(base, e.Name())
		if !e.IsDir() || skip[st] || len(e.Name()) != 16 || !isHex(e.Name()) {
			continue
		}
		if time.Now().After(deadline) {
			break
		}
		alt, err := os.ReadFile(filepath.Join(st, "objects", "info", "alternates"))
		dir := altGitDir(alt)
		if err != nil || !filepath.IsAbs(dir) || Store(base, dir) != st {
			continue // not a store Keep made: not ours to judge
		}
		gone := filepath.Join(st, goneFile)
		if _, err := os.Lstat(filepath.Join(dir, "HEAD")); err == nil {
			os.Remove(gone)
			continue
		}
		b, err := os.ReadFile(gone)
		t, perr := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || perr != nil {
			if err := writeIfChanged(gone, []byte(strconv.FormatInt(now.UnixNano(), 10)+"\n")); err != nil {
				return removed, err
			}
			continue
		}
		if now.Sub(time.Unix(0, t)) <= Age {
			continue
		}
		lock, err := Lock(st)
		if err != nil {
			continue
		}
		if exclusive(lock) {
			if err := os.RemoveAll(st); err != nil {
				lock.Close()
				return removed, fmt.Errorf("gitkeep: %w", err)
			}
			removed = append(removed, st)
		}
		lock.Close()
	}
	return removed, nil
}
