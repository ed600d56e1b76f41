package gitkeep

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/jail-sandbox/jail/dirnames"
)

// Listing is a store's loose objects as ListStore found them: the names
// ForgedLoose looks at in the workspace, read while the agent runs
// instead of after it (256 directories opened and read: 3.5 ms of a 40 ms
// end in a repository of 500 loose objects).
type Listing struct {
	objs []looseName // forEachLoose's order: the same findings in the same order
	err  error
}

type looseName struct{ d, n string }

// ListStore lists store's loose objects. Taken once the start's Keep has
// run (and before the end's ForgedLoose), it names every object
// ForgedLoose's own listing of the store would at the end that the
// workspace had at the start in a fan-out directory the start kept whole
// (not Partial): Keep leaves such a directory only when the store holds
// each of its objects, and no run's end prunes a store while this run
// holds its lock. What a listing taken then does not name needs no
// store's name: an object made in the run changes its directory, which
// the workspace pass reads (its files changed in the run), and a Partial
// directory's files are read there too, whatever the store holds.
func ListStore(store string) *Listing {
	l := &Listing{}
	if store == "" {
		return l
	}
	sobjs := filepath.Join(store, "objects")
	sfd := openDirAt(sobjs)
	defer closeDirAt(sfd)
	l.err = forEachLoose(sobjs, sfd, nil, func(d, n string) {
		l.objs = append(l.objs, looseName{d, n})
	})
	return l
}

// readHook, when set (tests), is called with each workspace file
// ForgedLoose reads.
var readHook func(p string)

// ForgedLoose is the end's look at the loose objects the store keeps
// copies of: the workspace's file of each such id whose change time is at
// or after since (written in the run: in place, or deleted and made
// again) and that is not the object of its name (a link, or bytes that do
// not hash to the id). Why: git reads every pack (the alternates' too)
// before any loose object, so after the host's gc packed the agent's
// parentless commit under a loose commit's id, the store's true copy was
// hidden from `git fetch STORE` and the root commit was lost; inside, and
// on the host before that gc, git reads the forgery too (review18a). It
// returns the workspace paths of the forgeries and how many copies the
// deadline left unlooked at.
//
// Then every loose object file in a workspace objects/xx directory whose
// change time is at or after since and that is not the directory the
// start saw there (start.Inos: made or moved in during the run), whether
// the store has a copy or not (store "": none read). Why: git never
// writes an object it already has (it only freshens the file), and it
// reads a loose object without hashing it: a file the agent planted under
// the id of a blob the user writes later (a file it suggested, a generated
// lockfile) became the user's commit of that file, the agent's bytes
// under the user's content's id, pushed as they are (review18e). A moved
// directory's files keep their change times; in the start's own
// directory a file named, renamed or linked in the run has a new one, and
// only those are read (git's own new object changes the directory too:
// the rest need no read).
//
// And, in the directories start.Partial names (objects the start neither
// copied nor linked, past its budget), every loose object file whose own
// change time is at or after since. Why: one of those rewritten in place
// changes no directory, and the store has no copy to list it by; git read
// the forgery as the user's object and the host's gc packed it (session
// 19). start nil (no store, no start's look: a repository past the kept
// bound, 64 shallower ones planted in front of it): every changed
// directory is read whole and every other one file by file, as a partial
// one (review19a: a file rewritten in place there went unread).
//
// A file the start's Keep linked (or whose store link it replaced by a
// copy) has a change time in the run's window from that alone: found as
// the start stamped it (start.Stamps, settled before the agent ran), it
// is taken as unchanged, not read.
//
// The store's names come from listed (ListStore of store, after the
// start's Keep); nil, or a listing that failed, lists the store here.
func ForgedLoose(store, gitDir string, since, deadline time.Time, start *Result, listed *Listing) (forged []string, left int, err error) {
	seen := map[string]bool{}
	objs := filepath.Join(gitDir, "objects")
	// The workspace's files are stat'ed relative to its objects directory
	// (one name less to walk: objects/xx/rest, 800 times an end in a
	// repository of 555 loose objects), as a path through it is.
	ofd := openDirAt(objs)
	defer closeDirAt(ofd)
	// judge: objects/d/n (id d+n) as lstat found it; read: read
	// whatever its change time (seen: read already).
	judge := func(d, n, id string, read bool, fi fileStat) {
		if fi.ctime != 0 && fi.ctime < since.UnixNano() && !read {
			return
		}
		if !read && start != nil && start.Stamps.unchanged(id, fi) {
			// Its change time is the start's link's, and nothing
			// changed it since (Stamps.Settle: no write in place can
			// keep it): what it held before the run, as a file older
			// than the run is. Not in a directory moved in (read): each
			// of those files is read, stamped or not.
			return
		}
		seen[id] = true
		p := filepath.Join(objs, d, n)
		if !fi.regular() {
			// Git follows a link to whatever it names.
			forged = append(forged, p)
			return
		}
		// Read up to what a pack's object is (maxObject), the rest
		// said, not taken. Why not a copy's bound for what the store
		// holds: it holds links too, of objects larger than a copy
		// (the user's git add of a 17 MiB file), whose start's link
		// set their change time: read with a copy's bound, each was
		// named forged and renamed aside (lefthook19).
		max, file := int64(maxObject), int64(maxObject+maxObject/64)
		if fi.size > file {
			left++
			return
		}
		want, _ := hex.DecodeString(id)
		if readHook != nil {
			readHook(p)
		}
		b, err := readFile(p, file)
		if err != nil {
			return // unreadable: the user's git cannot read it either
		}
		// One inflate: past max (by its header), said, not taken.
		switch _, err := checkLooseUpTo(b, want, max); {
		case errors.Is(err, errTooLarge):
			left++
		case err != nil:
			forged = append(forged, p)
		}
	}
	check := func(d, n string, read bool) {
		id := d + n
		if seen[id] {
			return
		}
		if time.Now().After(deadline) {
			left++
			return
		}
		if fi, ok := statObject(ofd, objs, d, n); ok {
			judge(d, n, id, read, fi)
		} // else gone (packed, or deleted: the copy is kept)
	}
	if store != "" {
		if listed == nil || listed.err != nil {
			listed = ListStore(store)
		}
		if listed.err != nil {
			return forged, left, listed.err
		}
		// The store's names are unique: none is seen yet.
		for i, st := range statListed(ofd, objs, listed.objs, deadline) {
			o := listed.objs[i]
			switch {
			case st.late || time.Now().After(deadline):
				left++ // a read bounded as before: one past the deadline
			case st.ok:
				judge(o.d, o.n, o.d+o.n, false, st.fi)
			}
		}
	}
	whole := map[string]bool{} // directories whose every file is read, whatever its age
	err = forEachLoose(objs, ofd, func(name string, fi fileStat) bool {
		if time.Now().After(deadline) {
			left++ // a directory not looked at (thousands of planted repositories)
			return false
		}
		ct := fi.ctime
		if ct == 0 || !fi.dir() {
			whole[name] = true // git follows a link to whatever it names
			return true
		}
		x := fanout(name)
		if ct < since.UnixNano() {
			// Why start nil too: a repository with no store (past the
			// kept bound, or its Keep failed) has no start's look, and a
			// file rewritten in place changes no directory (review19a).
			return start == nil || start.Partial[x]
		}
		whole[name] = start == nil || start.Inos[x] == 0 || fi.ino != start.Inos[x]
		return true
	}, func(d, n string) {
		// A directory moved in the run holds files of any age: each
		// is read, whatever its change time. In the start's own
		// directory, only the files changed in the run.
		check(d, n, whole[d])
	})
	return forged, left, err
}

// statObject is the lstat of objects/d/n, relative to ofd (openDirAt of
// objs) or by its whole path when ofd is -1; false: gone.
func statObject(ofd int, objs, d, n string) (fileStat, bool) {
	rel, full := d+"/"+n, ""
	if ofd < 0 {
		full = filepath.Join(objs, rel)
	}
	return lstatAt(ofd, rel, full)
}

// statted is a listed object's workspace file as statListed found it:
// ok, gone (not ok), or not looked at by the deadline (late).
type statted struct {
	fi       fileStat
	ok, late bool
}

// statChunk is the fewest names a goroutine of statListed takes.
const statChunk = 256

// statListed lstats the workspace's file of each of names, on up to four
// cores at once: the end's stats of a store's kept objects are most of
// its look at them (3,000 objects: 13 ms of a 16 ms look, one core here),
// and each is a lookup of its own. Those past the deadline are late, as
// the one-at-a-time look counted them.
func statListed(ofd int, objs string, names []looseName, deadline time.Time) []statted {
	out := make([]statted, len(names))
	part := func(from, to int) {
		for i := from; i < to; i++ {
			if (i-from)%64 == 0 && time.Now().After(deadline) {
				for j := i; j < to; j++ {
					out[j].late = true
				}
				return
			}
			out[i].fi, out[i].ok = statObject(ofd, objs, names[i].d, names[i].n)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), 4, len(names)/statChunk)
	if workers <= 1 {
		part(0, len(names))
		return out
	}
	var wg sync.WaitGroup
	per := (len(names) + workers - 1) / workers
	for from := 0; from < len(names); from += per {
		wg.Add(1)
		go func(from, to int) {
			defer wg.Done()
			part(from, to)
		}(from, min(from+per, len(names)))
	}
	wg.Wait()
	return out
}

// forEachLoose calls f with each fan-out directory's name and object
// file name under objs (objects/xx/rest), in the directories dir (the
// directory's own lstat, relative to objsfd when it is objs opened by
// openDirAt, else -1) accepts; nil accepts every one.
func forEachLoose(objs string, objsfd int, dir func(name string, fi fileStat) bool, f func(d, n string)) error {
	ents, err := os.ReadDir(objs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("gitkeep: %w", err)
	}
	buf := dirnames.Buffer()
	defer dirnames.Release(buf)
	var names []string
	for _, e := range ents {
		d := e.Name()
		if len(d) != 2 || !isHex(d) {
			continue
		}
		full := "" // the whole path, only where objs could not be opened
		if objsfd < 0 {
			full = filepath.Join(objs, d)
		}
		if dir != nil {
			fi, ok := lstatAt(objsfd, d, full)
			if !ok || !dir(d, fi) {
				continue
			}
		} else if !e.IsDir() {
			continue
		}
		// Followed: git reaches a linked fan-out directory's files.
		var ok bool
		if names, ok = namesAt(objsfd, d, full, *buf, names[:0]); !ok {
			continue
		}
		slices.Sort(names) // os.ReadDir's order: the same findings in the same order
		for _, n := range names {
			if isID(d + n) {
				f(d, n)
			}
		}
	}
	return nil
}

// HasCopy reports whether store holds its own loose copy (or link) of the
// object whose workspace file is p (gitDir/objects/xx/rest): the true
// bytes the start kept, which `git fetch STORE` gives back. An object past
// the start's budget, or new in the run, has none, and neither has one the
// store holds as a link to p's own inode: the end must not say one is kept
// (review19a, review20a).
func HasCopy(store, p string) bool {
	if store == "" {
		return false
	}
	d, n := filepath.Base(filepath.Dir(p)), filepath.Base(p)
	if len(d) != 2 || !isID(d+n) {
		return false
	}
	fi, err := os.Lstat(filepath.Join(store, "objects", d, n))
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	// Why: an object past MaxCopyObject (or a start's copy budget) is kept
	// as a hard link, the workspace's own inode: written in place, the
	// store's file is the forgery too, and the fetch named gives back no
	// true copy (review20a).
	w, err := os.Lstat(p)
	return err != nil || !os.SameFile(fi, w)
}
