// Package gitkeep keeps, in jail's state directory, what the read-only packs
// (package gitguard, Plan.History) leave the agent able to delete from a
// workspace's repository: its loose objects (the commits made since the last
// gc, often the unpushed ones) and its refs and HEAD (where each branch
// pointed when the run started).
//
// Each repository gets a store: a bare repository under the state directory
// whose objects are copies of the workspace's loose objects (each verified
// to be the object of its name: zlib, git's header, the hash; only objects
// new since the last start are copied), whose objects/info/alternates names
// the workspace's objects directory (the packs, which the sandbox cannot
// delete), and whose packed-refs records every ref the repository had at
// each start (a ref that later goes stays recorded). After any run, the
// user gets the start's history back with
//
//	git fetch STORE '+refs/*:refs/jail-kept/*'
//
// Nothing is ever written into the workspace: the recovery is the user's
// command. The store is out of the sandbox's reach (the whole state directory
// is hidden), so the agent can neither delete nor write what it holds. A copy,
// not a hard link: a link is the workspace's inode, which the agent can chmod
// and write in place, and the store's object was lost with it (lane
// gitkeep3). The cost: a loose object takes its space twice while the
// workspace has it (loose objects are the few since the last gc; the prune
// frees a copy once a pack holds it). An object larger than MaxCopyObject,
// or past a start's MaxCopyBytes, is hard-linked (kept against deletion
// only; copied at a later start while the workspace still has it). A
// store holds at most MaxStoreBytes of the objects made outside jail's
// runs and, apart, MaxRunBytes of those made in one (RunWindows: a run's
// agent cannot spend what keeps the user's); said past either. Loose
// objects and a state directory on different file systems: the copies are
// made, only a link cannot be (Result.CrossFS).
//
// The package is pure Go and builds on every GOOS.
package gitkeep

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/replacefile"
	"github.com/jail-sandbox/jail/plainfile"
)

// MaxLinks bounds the objects linked in one start (over every repository):
// a run's agent could leave millions of loose objects to slow the next
// start. Past it the rest is linked at later starts.
const MaxLinks = 20000

// MaxRefs bounds the entries (loose refs and their directories) read under
// one repository's refs/.
const MaxRefs = 20000

// MaxPacked bounds the packed-refs file read from one repository (about
// 35,000 refs): a larger one is not read (its refs are not recorded, said
// by Result.PackedUnread), so the agent's packed-refs costs no start more
// than ~0.1 s (16 MiB cost 1.5 s at the start and 0.7 s at the end; a
// gigabyte, the supervisor's memory).
const MaxPacked = 2 << 20

// maxSmall bounds a loose ref, HEAD and config read (a ref is 41 bytes).
const maxSmall = 64 << 10

// settle is how old a directory's mtime must be before the store trusts
// it: a file system's mtime ticks coarsely, and an object linked into a
// directory in the same tick as the store's look would leave the mtime
// unchanged.
const settle = 2 * time.Second

// Store is the store of git dir gitDir under base: one directory per
// repository, named by its path.
func Store(base, gitDir string) string {
	sum := sha256.Sum256([]byte(gitDir))
	return filepath.Join(base, hex.EncodeToString(sum[:8]))
}

// altLine is the alternates file of gitDir's store: its objects
// directory, C-quoted as git reads it (parse_alt_odb_entry) when the path
// holds a control byte. Why: a git dir the agent made at ws/"x\n"/ws/evil
// split an unquoted line in two, and the store read the objects of the
// second, a directory of the agent's choosing (session 19).
func altLine(gitDir string) []byte {
	p := filepath.Join(gitDir, "objects")
	if !strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return []byte(p + "\n")
	}
	b := []byte{'"'}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20 || c >= 0x7f:
			// Octal, as git's quote_c_style: strconv.Unquote (altGitDir)
			// reads it back byte for byte.
			b = append(b, '\\', '0'+c>>6, '0'+c>>3&7, '0'+c&7)
		default:
			b = append(b, c)
		}
	}
	return append(b, '"', '\n')
}

// altGitDir is the git dir a store's alternates file (altLine) names, ""
// for one altLine did not write.
func altGitDir(b []byte) string {
	line := strings.TrimSpace(string(b))
	if strings.HasPrefix(line, `"`) {
		u, err := strconv.Unquote(line)
		if err != nil {
			return ""
		}
		line = u
	}
	dir, ok := strings.CutSuffix(line, "/objects")
	if !ok {
		return ""
	}
	return dir
}

// Result is what one Keep did.
type Result struct {
	Copied int // objects copied at this start (verified)
	// Linked are the objects linked at this start (kept against deletion,
	// not a write in place): larger than MaxCopyObject, or past
	// MaxCopyBytes (copied at a later start).
	Linked int
	Junk   int // files named like an object that are not that object: not kept
	// StoreFull: the store holds MaxStoreBytes of copies of objects made
	// outside every run: new ones are not kept.
	StoreFull bool
	// RunFull: the store holds MaxRunBytes of objects made in runs: new
	// ones made in a run are not kept (the user's still are).
	RunFull bool
	Full    bool // the budget ran out: some objects are kept at a later start
	CrossFS bool // the store is on another file system: objects to link not kept
	Refs    int  // refs recorded (with those recorded before)
	// PackedUnread: packed-refs is larger than MaxPacked, so its refs are
	// not recorded (the loose ones and the objects are).
	PackedUnread bool
	// Start are the refs gitDir had at this start (Lost's start).
	Start map[string]string
	// Mtimes are the mtimes (ns) of gitDir's objects/xx directories at
	// this start, -1 for one absent (Prune's look).
	Mtimes [256]int64
	// Partial are the objects/xx directories with objects this start
	// neither copied nor linked (past its budget) or could not read:
	// ForgedLoose looks at their files' change times at the end.
	Partial [256]bool
	// Inos are the inode numbers of those directories at this start, 0
	// for one absent or not read (ForgedLoose: a directory moved in).
	Inos [256]uint64
	// Stamps are the workspace's object files whose links this start
	// changed, as it left them (ForgedLoose passes over one found so,
	// once settled).
	Stamps *Stamps
}

// Keep brings store, the store of git dir gitDir, up to date: every loose
// object hard-linked (budget is what is left of MaxLinks for this start,
// lowered by what is linked), every ref and HEAD's commit recorded. An
// objects/xx directory whose mtime is the one recorded when the store last
// kept it whole (seenFile) is not read: nothing was added to it since.
func Keep(store, gitDir string, budget *Budget) (Result, error) {
	res := Result{Stamps: &Stamps{}}
	objs := filepath.Join(store, "objects")
	if err := os.MkdirAll(filepath.Join(objs, "info"), 0o700); err != nil {
		return res, fmt.Errorf("gitkeep: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(store, "refs"), 0o700); err != nil {
		return res, fmt.Errorf("gitkeep: %w", err)
	}
	if err := markSince(store, gitDir); err != nil {
		return res, err
	}
	wide := objectFormat(gitDir) == "sha256"
	// Why commitGraph, multiPackIndex and useBitmaps off: git reads
	// each of them from the alternates (the workspace) too, and believes
	// them before the packs: a commit-graph the host's gc wrote after a
	// lying pack says the forged parents, and the fetch from the store
	// then leaves out the history its own packs hold (lane gitkeep4).
	cfg := "[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tcommitGraph = false\n\tmultiPackIndex = false\n[pack]\n\tuseBitmaps = false\n"
	if wide {
		cfg = "[core]\n\trepositoryformatversion = 1\n\tbare = true\n\tcommitGraph = false\n\tmultiPackIndex = false\n[pack]\n\tuseBitmaps = false\n[extensions]\n\tobjectformat = sha256\n"
	}
	if err := writeIfChanged(filepath.Join(store, "config"), []byte(cfg)); err != nil {
		return res, err
	}
	// The packs stay in the workspace (read-only inside): the store reads
	// them there.
	if err := writeIfChanged(filepath.Join(objs, "info", "alternates"), altLine(gitDir)); err != nil {
		return res, err
	}
	c := loadCounts(store)
	err := keepObjects(gitDir, store, budget, c, &res)
	if err == nil {
		err = copyShared(store, budget, c, &res)
	}
	// What was kept is counted, an error on the way or not.
	if serr := c.save(store); err == nil {
		err = serr
	}
	if err != nil {
		return res, err
	}
	err = keepRefs(store, gitDir, &res)
	return res, err
}

// sinceFile, in a store, holds when the store was first kept (unix ns):
// its age, by which a start's budget of pack mounts takes repositories
// (KeptSince).
const sinceFile = "kept-since"

// repoFile, in a store, names the repository it keeps: its git dir's
// identity (repoID) when first kept.
const repoFile = "kept-repo"

// otherRepo says whether store keeps another repository than the one at
// gitDir now: its record (repoFile) names another git dir. A store without
// one (made before the record, or for an end's unchecked record alone) is
// not known to be another's.
func otherRepo(store, gitDir string) bool {
	b, err := readFile(filepath.Join(store, repoFile), 256)
	if err != nil {
		return false
	}
	id := repoID(gitDir)
	return id == "" || strings.TrimSpace(string(b)) != id
}

// markSince records when store was first kept, once, and for which
// repository (repoFile). A store kept before the record was written (its
// config there, no repository recorded) has its directory's birth time,
// where the file system keeps one: its true age. Else now: a store made
// by an end's unchecked record alone (MarkUncheckedUnkept) was not kept
// then, and a store whose repository is another one now (the agent made a
// repository at the path a user's left) starts again: it took the old
// store's age, and with it the old repository's rank for the start's
// budget of pack mounts (gitkeep5).
func markSince(store, gitDir string) error {
	p := filepath.Join(store, sinceFile)
	other := otherRepo(store, gitDir)
	if _, err := os.Lstat(p); err == nil && !other {
		return writeRepo(store, gitDir)
	}
	t := time.Now().UnixNano()
	_, noRepo := os.Lstat(filepath.Join(store, repoFile))
	if _, err := os.Lstat(filepath.Join(store, "config")); err == nil && noRepo != nil {
		if b, ok := birth(store); ok {
			t = b
		}
	}
	if err := writeIfChanged(p, []byte(strconv.FormatInt(t, 10)+"\n")); err != nil {
		return err
	}
	return writeRepo(store, gitDir)
}

// writeRepo records gitDir's identity in store (none when unreadable: a
// later start records it).
func writeRepo(store, gitDir string) error {
	id := repoID(gitDir)
	if id == "" {
		return nil
	}
	return writeIfChanged(filepath.Join(store, repoFile), []byte(id+"\n"))
}

// KeptSince says since when store has kept the repository of git dir
// gitDir (unix ns; false: not kept, not known, or the store keeps another
// repository that was at that path): its record (markSince), else, for a
// store kept before the record, its directory's birth time. The store is
// jail's (the state directory): no sandbox sets either. A start that
// leaves pack directories writable past its budget of mounts leaves the
// youngest stores' (gitguard.Input.KeptSince): a copy the store freed
// because a pack held it was freed while that pack was read-only, and
// repositories planted after it stay younger.
func KeptSince(store, gitDir string) (int64, bool) {
	if otherRepo(store, gitDir) {
		return 0, false
	}
	if b, err := readFile(filepath.Join(store, sinceFile), 64); err == nil {
		if t, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
			return t, true
		}
	}
	if _, err := os.Lstat(filepath.Join(store, "config")); err != nil {
		return 0, false // never kept (an end's unchecked record alone)
	}
	return birth(store)
}

// seenFile, in a store, holds the mtime (ns) of each of the workspace's
// objects/xx directories as it was when the store last kept it whole: one
// read a start instead of a stat a directory in the store. (Its name
// changed when copies replaced links: a store made before reads every
// directory once more, and its links become copies.)
const seenFile = "fanout-mtimes-copied"

// MaxCopyBytes bounds the bytes (inflated: what the hash check reads) of
// the objects copied at one start over every repository: about 0.15 s of
// inflating and hashing. Past it, objects are linked (kept against
// deletion, not against a write in place) and copied at a later start.
const MaxCopyBytes = 64 << 20

// MaxCopyObject bounds one copied object (inflated, and its file): a
// larger one is linked, never copied (a loose object that big is rare: git
// add of a large file; git gc on the host packs it).
const MaxCopyObject = 16 << 20

// MaxCopyTime bounds the time one start spends copying objects, over every
// repository: a first start in a repository of 5,000 loose objects (21 MB)
// took 6 s to copy them all on a loaded 2-core VM (ext4: no reflink; a link
// makes no inode, a copy does). Past it, objects are linked, as past
// MaxCopyBytes, and copied at the next starts.
const MaxCopyTime = 150 * time.Millisecond

// MaxStoreBytes bounds the bytes of the copies one store holds: the
// agent can write objects (git hash-object -w of anything) and delete
// them, run after run, each kept Age. Only the objects made outside every
// run count here (a run's go to MaxRunBytes). Past it, a start keeps no
// new such object of the repository (said): the user's git gc on the host
// packs the loose objects, and the end's prune then frees the copies a
// pack holds.
const MaxStoreBytes = 1 << 30

// bytesFile, in a store, holds the bytes of its copies of objects made
// outside every run (a run's: runFile): added to by each start's copies,
// taken from by each prune and each link a start removes, and counted
// again by a prune that looks at the whole store (once a day).
const bytesFile = "kept-bytes"

// minCopies objects a start copies whatever the time (a load spike in
// the copy of a usual start's few new objects does not leave them links).
const minCopies = 32

// Budget is what one start may still keep, over every repository.
type Budget struct {
	copies  int       // objects copied so far
	Objects int       // objects kept (copied or linked), from MaxLinks
	Bytes   int64     // bytes copied (inflated), from MaxCopyBytes
	Until   time.Time // copies made until then, from MaxCopyTime
	// Runs are the windows of jail's runs (RunWindows): an object whose
	// change time is in one is a run's, kept against MaxRunBytes.
	Runs Windows
}

// NewBudget is a start's whole budget, from now.
func NewBudget() Budget {
	return Budget{Objects: MaxLinks, Bytes: MaxCopyBytes, Until: time.Now().Add(MaxCopyTime)}
}

// keepHook, when set (tests), runs after a fan-out directory's listing,
// before its files are opened: where a concurrent sandbox could swap the
// directory for a link.
var keepHook func(dir string)

// fanoutOpens counts the fan-out directories keepObjects opened (a test
// seam: an unchanged one is not).
var fanoutOpens atomic.Int64

// keepObjects keeps each loose object of gitDir in the store. Everything
// of the workspace is opened relative to a descriptor of a directory
// opened without following a link (openat, O_NOFOLLOW|O_DIRECTORY): a
// second sandbox writing the same repository cannot swap objects/xx for a
// link to elsewhere between the listing and the copy. Each object is
// copied, not linked: a hard link is the workspace's inode, which the
// agent can chmod and write in place, and the store's copy would change
// with it. A copy is made only of a file that is a git loose object of
// its name (zlib, a header of git's, bytes hashing to the name): an
// agent's junk named like an object is not kept.
func keepObjects(gitDir, store string, budget *Budget, c *counts, res *Result) error {
	src, objs := filepath.Join(gitDir, "objects"), filepath.Join(store, "objects")
	for i := range res.Mtimes {
		res.Mtimes[i] = -1
	}
	// A symlinked objects directory leads out of the repository, and one
	// that is a FIFO would block the read: only a real directory is read.
	top, err := openDir(unix.AT_FDCWD, src)
	if err != nil {
		return nil // no objects directory: nothing to keep
	}
	defer top.Close()
	ents, err := top.ReadDir(-1) // the dirent's type: no stat per entry
	if err != nil {
		return nil
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	seenPath := filepath.Join(store, seenFile)
	var seen [256]int64
	old, _ := os.ReadFile(seenPath)
	parseSeen(old, &seen)
	now := time.Now()
	for _, e := range ents {
		n := e.Name()
		// Only git's own fan-out directories, only real ones: a symlinked
		// objects/xx leads out of the repository.
		if len(n) != 2 || !isHex(n) || !e.IsDir() {
			continue
		}
		x := fanout(n)
		res.Partial[x] = true // until kept whole, below
		// Unchanged since the last start, by an fstatat(2) of the name
		// (no link followed: one swapped for a link since the listing is
		// no directory here, and stays Partial): 1 system call instead of
		// an open, the os.File's poller check and fstat, and a close, 256
		// times a start.
		if mt, ino, isDir := dirStamp(int(top.Fd()), n); !isDir {
			continue // swapped for a link or gone since the listing
		} else if mt != 0 && seen[x] == mt {
			res.Mtimes[x], res.Inos[x] = mt, ino
			res.Partial[x] = false
			continue
		}
		fanoutOpens.Add(1)
		sub, err := openDir(int(top.Fd()), n)
		if err != nil {
			continue // swapped for a link or gone since the listing
		}
		si, err := sub.Stat()
		if err != nil {
			sub.Close()
			continue
		}
		mt := si.ModTime().UnixNano()
		res.Mtimes[x] = mt
		res.Inos[x] = inode(si)
		if seen[x] == mt {
			sub.Close()
			res.Partial[x] = false
			continue // unchanged since the last start
		}
		seen[x] = 0
		done, err := keepDir(sub, n, filepath.Join(objs, n), budget, c, res)
		sub.Close()
		if err != nil {
			return err
		}
		res.Partial[x] = !done
		// The mtime marks the directory as kept whole; one that changed in
		// the file system's last tick is read again next time.
		if done && now.Sub(si.ModTime()) > settle {
			seen[x] = mt
		}
	}
	var out bytes.Buffer
	for i, t := range seen {
		if t != 0 {
			fmt.Fprintf(&out, "%02x %d\n", i, t)
		}
	}
	return writeIfChanged(seenPath, out.Bytes())
}

// readBytes is bytesFile's count (0 when absent or unreadable: the next
// whole prune counts again).
func readBytes(store string) int64 {
	b, _ := os.ReadFile(filepath.Join(store, bytesFile))
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

func writeBytes(store string, n int64) error {
	return writeIfChanged(filepath.Join(store, bytesFile), []byte(strconv.FormatInt(max(n, 0), 10)+"\n"))
}

// keepDir keeps the objects of one fan-out directory (sub, named n) in
// the store's directory dd; false when some are left for a later start.
func keepDir(sub *os.File, n, dd string, budget *Budget, c *counts, res *Result) (bool, error) {
	files, err := sub.ReadDir(-1)
	if err != nil {
		return false, nil
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name() < files[j].Name() })
	if keepHook != nil {
		keepHook(sub.Name())
	}
	if err := os.Mkdir(dd, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("gitkeep: %w", err)
	}
	done := true
	for _, f := range files {
		fn := f.Name()
		// Objects only (a name of hex digits, a regular file): git's tmp
		// files are not history.
		if (len(fn) != 38 && len(fn) != 62) || !isHex(fn) || !f.Type().IsRegular() {
			continue
		}
		dst := filepath.Join(dd, fn)
		var have os.FileInfo
		if fi, err := os.Lstat(dst); err == nil {
			if nlink, _, ok := linkInfo(fi); ok && nlink == 1 {
				continue // a copy, kept at an earlier start: objects never change
			}
			have = fi // a link (an older store, or past a budget): copied now
		}
		if budget.Objects <= 0 {
			res.Full = true
			return false, nil
		}
		// Whose object: a run's (its change time in a run's window, or
		// unread) or the user's, each kept against its own bytes. A link
		// made earlier keeps the class it was given then: its change
		// time is the agent's to move now (a chmod).
		run := false
		if have != nil {
			_, run = c.run[n+fn]
		} else if t, ok := ctimeAt(int(sub.Fd()), fn); !ok || budget.Runs.Has(t) {
			run = true
		}
		// A link kept already is copied whatever the counts: it was
		// counted when linked.
		switch {
		case have != nil:
		case run && c.runFull():
			// Why: one run's objects must not spend what keeps the user's
			// (lane keepbudget). Not kept: read again at the next start,
			// and the directory Partial (ForgedLoose reads its files
			// rewritten in place at the end, as past a start's budget).
			res.RunFull = true
			done = false
			continue
		case !run && c.used >= MaxStoreBytes:
			// Neither a copy nor a link (a link too is the store's bytes
			// once the workspace's name goes).
			res.StoreFull = true
			return false, nil
		}
		var delta int64
		k, later, err := keepOne(int(sub.Fd()), fn, n+fn, dst, have, budget, &delta, res.Stamps)
		if k == junk && have != nil {
			c.dropLink(n + fn) // the store's link went (keepOne)
		} else {
			c.add(n+fn, run, delta)
		}
		if err != nil {
			return false, err
		}
		if later {
			done = false // read again at the next start
		}
		switch k {
		case copied:
			res.Copied++
			budget.Objects--
		case linked:
			res.Linked++
			budget.Objects--
		case crossFS:
			res.CrossFS = true
		case junk:
			res.Junk++
		}
	}
	return done, nil
}

type kept int

const (
	skipped kept = iota // gone, unreadable, or an earlier link left as it is
	copied              // a verified copy in the store
	linked              // hard-linked (too large, or past the byte budget)
	junk                // not a git loose object of its name: not kept
	crossFS             // to be linked, but the store is on another file system
)

// keepOne keeps object name (id: the hex id) of the directory dirfd in
// the store at dst: a verified copy, or a link when it is too large or the
// start's copy budget is spent. have is dst when it is a link already.
// later: a later start should try it again (a copy the budget left for
// it; gone or unreadable now). A change to the workspace file's links (a
// link made, the store's link replaced by a copy) is stamped in stamps.
func keepOne(dirfd int, name, id, dst string, have os.FileInfo, budget *Budget, used *int64, stamps *Stamps) (k kept, later bool, err error) {
	if budget.Bytes <= 0 || (budget.copies >= minCopies && time.Now().After(budget.Until)) {
		// Past the copy budget: a link, as cheap as a link can be (not
		// even opened), copied and checked at a later start.
		if have != nil {
			return skipped, true, nil
		}
		k, li := linkOne(dirfd, name, dst, nil)
		if k == linked {
			*used += li.Size()
			stamps.add(id, li)
		}
		return k, true, nil
	}
	// The workspace's file: no link followed, no FIFO waited for, a
	// regular file only.
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return skipped, true, nil
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return skipped, true, nil
	}
	want, err := hex.DecodeString(id)
	if err != nil {
		return junk, false, nil
	}
	notObject := func() (kept, bool, error) {
		// Not the object its name says (junk, or one already written in
		// place): a copy of it would restore nothing, and a link an
		// earlier start made past its budget goes.
		if have != nil {
			os.Remove(dst)
		}
		return junk, false, nil
	}
	tooLarge := func() (kept, bool, error) {
		if have != nil {
			return skipped, false, nil
		}
		k, li := linkOne(dirfd, name, dst, fi)
		if k == linked {
			*used += fi.Size()
			stamps.add(id, li)
		}
		return k, false, nil
	}
	if fi.Size() > MaxCopyObject {
		// Its header only: an object this large is linked, never copied.
		if _, err := looseHeader(f, len(want)); err != nil {
			return notObject()
		}
		return tooLarge()
	}
	// Its size at the stat, read in one buffer (io.ReadAll's growing
	// copies were a tenth of a first start's copying); one that is
	// shorter now is tried again at a later start.
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, fi.Size()), b); err != nil {
		return skipped, true, nil
	}
	// One inflate: the header's declared size decides too large (a
	// small file can declare 16 MiB of zeros) before anything else is.
	n, err := checkLoose(b, want)
	switch {
	case errors.Is(err, errTooLarge):
		return tooLarge()
	case err != nil:
		return notObject()
	}
	budget.Bytes -= n
	budget.copies++
	if err := writeCopy(dst, b); err != nil {
		return skipped, true, err
	}
	if have == nil { // a link replaced was counted when made
		*used += int64(len(b))
	} else if fi, err := f.Stat(); err == nil {
		// The replaced link's going changed the workspace file's
		// change time: stamped after it.
		stamps.add(id, fi)
	}
	return copied, false, nil
}

// linkOne hard-links name of the directory dirfd at dst (linkat relative
// to the directory's descriptor: no link on the way followed, none at the
// end either), then checks dst is a regular file, and fi's inode when fi
// is the file read. linked: with dst's lstat, the file's after the link.
func linkOne(dirfd int, name, dst string, fi os.FileInfo) (kept, os.FileInfo) {
	if err := unix.Linkat(dirfd, name, unix.AT_FDCWD, dst, 0); err != nil {
		if errors.Is(err, syscall.EXDEV) {
			return crossFS, nil
		}
		return skipped, nil // fs.protected_hardlinks, or gone
	}
	li, err := os.Lstat(dst)
	if err != nil || !li.Mode().IsRegular() || (fi != nil && !os.SameFile(li, fi)) {
		os.Remove(dst)
		return skipped, nil
	}
	return linked, li
}

// writeCopy writes b, a verified object, at dst through a temporary file
// and a rename (a link left there by an older store is replaced).
func writeCopy(dst string, b []byte) error {
	if err := replacefile.Write(dst, ".tmp-obj-*", b, false); err != nil { // 0600: no chmod
		return fmt.Errorf("gitkeep: copy: %w", err)
	}
	return nil
}

// openDir opens directory name (relative to dirfd) without following a
// link in its last part, without blocking (a FIFO), a directory only.
func openDir(dirfd int, name string) (*os.File, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// parseSeen reads seenFile's lines ("xx NS"); a line it cannot read is
// a directory read again.
func parseSeen(b []byte, seen *[256]int64) {
	for _, l := range strings.Split(string(b), "\n") {
		n, t, ok := strings.Cut(l, " ")
		if !ok || len(n) != 2 || !isHex(n) {
			continue
		}
		if v, err := strconv.ParseInt(t, 10, 64); err == nil {
			seen[fanout(n)] = v
		}
	}
}

func fanout(n string) int { return hexVal(n[0])<<4 | hexVal(n[1]) }

func hexVal(c byte) int {
	if c <= '9' {
		return int(c - '0')
	}
	return int(c-'a') + 10
}

// Refs returns the refs of git dir gitDir, packed and loose (symbolic ones
// left out), and HEAD's commit ("" when HEAD is gone, unborn or names no
// ref read). At most MaxRefs entries under refs/ and MaxPacked bytes of
// packed-refs are read.
func Refs(gitDir string) (refs map[string]string, head string) {
	refs = map[string]string{}
	// Each file is the agent's to replace: read without following a
	// symlink, only when regular, never blocking and only so much.
	packed, _ := readFile(filepath.Join(gitDir, "packed-refs"), MaxPacked)
	parsePacked(packed, refs)
	n := 0
	root := filepath.Join(gitDir, "refs")
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		// Every entry counts, directories too: a million empty
		// directories under refs/ would otherwise be walked at each start.
		if n++; n > MaxRefs {
			return filepath.SkipAll
		}
		if err != nil || !d.Type().IsRegular() {
			return nil // symlinks are neither walked nor read
		}
		b, err := readFile(p, maxSmall)
		if err != nil {
			return nil
		}
		name := "refs/" + filepath.ToSlash(strings.TrimPrefix(p, root+"/"))
		if id := strings.TrimSpace(string(b)); isID(id) && validRef(name) {
			refs[name] = id
		}
		return nil
	})
	if b, err := readFile(filepath.Join(gitDir, "HEAD"), maxSmall); err == nil {
		h := strings.TrimSpace(string(b))
		if t, ok := strings.CutPrefix(h, "ref: "); ok {
			h = refs[strings.TrimSpace(t)]
		}
		if isID(h) {
			head = h
		}
	}
	return refs, head
}

// Lost compares the refs a start read (Result.Start) with gitDir's now: the
// names gone (sorted), and whether HEAD itself is gone (the git dir
// deleted). A ref that moved is not lost: a commit moves its branch.
func Lost(start map[string]string, gitDir string) (gone []string, headGone bool) {
	now, _ := Refs(gitDir)
	for r := range start {
		if _, ok := now[r]; !ok {
			gone = append(gone, r)
		}
	}
	sort.Strings(gone)
	_, err := os.Lstat(filepath.Join(gitDir, "HEAD"))
	return gone, err != nil
}

// keepRefs records every ref of gitDir and HEAD's commit (as
// refs/jail/HEAD) in store's packed-refs, with the refs recorded at
// earlier starts that are gone now: a branch the agent deleted stays
// recorded. HEAD of the store names that commit.
func keepRefs(store, gitDir string, res *Result) error {
	now, head := Refs(gitDir)
	res.Start = now
	if fi, err := os.Lstat(filepath.Join(gitDir, "packed-refs")); err == nil && fi.Size() > MaxPacked {
		res.PackedUnread = true
	}
	add := make(map[string]string, len(now)+1)
	for r, id := range now {
		add[r] = id
	}
	if head != "" {
		add["refs/jail/HEAD"] = head
	}
	n, err := addPacked(store, add)
	res.Refs = n
	if err != nil {
		return err
	}
	if head == "" {
		head = "ref: refs/heads/main"
	}
	return writeIfChanged(filepath.Join(store, "HEAD"), []byte(head+"\n"))
}

// addPacked adds refs (git's names only: validRef) to store's packed-refs,
// replacing the same names and keeping the rest (a ref recorded at an
// earlier start stays, deleted in the workspace or not), and returns how
// many it holds. The file is jail's own: read whole, never bounded, since
// a bounded read that failed on a record grown past its bound would write
// the new refs alone and forget every earlier one (recordRefs had one).
func addPacked(store string, add map[string]string) (int, error) {
	p := filepath.Join(store, "packed-refs")
	refs := map[string]string{}
	old, _ := os.ReadFile(p)
	parsePacked(old, refs)
	for r, id := range add {
		if validRef(r) {
			refs[r] = id
		}
	}
	names := make([]string, 0, len(refs))
	for r := range refs {
		names = append(names, r)
	}
	sort.Strings(names)
	var out bytes.Buffer
	for _, r := range names {
		out.WriteString(refs[r] + " " + r + "\n")
	}
	return len(names), writeIfChanged(p, out.Bytes())
}

// parsePacked adds the refs of a packed-refs file to refs (peeled lines
// and the header skipped).
func parsePacked(b []byte, refs map[string]string) {
	for _, l := range strings.Split(string(b), "\n") {
		id, name, ok := strings.Cut(strings.TrimSpace(l), " ")
		if ok && isID(id) && validRef(name) {
			refs[name] = id
		}
	}
}

// validRef reports whether name is a ref name git takes (its
// check_refname_format, for names under refs/): the workspace's refs are
// the agent's to name, and one name git refuses in the store's packed-refs
// ("packed refname is dangerous") makes every fetch from the store fail,
// the recovery with it. A name left out here is only not recorded.
func validRef(name string) bool {
	if !strings.HasPrefix(name, "refs/") || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".") ||
		strings.Contains(name, "..") || strings.Contains(name, "@{") || strings.Contains(name, "//") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return false
		}
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part[0] == '.' || strings.HasSuffix(part, ".lock") || part == "@" {
			return false
		}
	}
	return true
}

func isID(s string) bool { return (len(s) == 40 || len(s) == 64) && isHex(s) }

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// writeIfChanged writes b to p through a temporary file and a rename,
// unless p holds b already (most starts: one read).
func writeIfChanged(p string, b []byte) error {
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, b) {
		return nil
	}
	if err := replacefile.Write(p, "", b, false); err != nil {
		return fmt.Errorf("gitkeep: %w", err)
	}
	return nil
}

// writeLines writes a record of the store: lines sorted, one a line (none:
// the record removed).
func writeLines(p string, lines []string) error {
	if len(lines) == 0 {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("gitkeep: %w", err)
		}
		return nil
	}
	sort.Strings(lines)
	return writeIfChanged(p, []byte(strings.Join(lines, "\n")+"\n"))
}

// readFile reads p, a file of the workspace's repository: the agent's, which
// it could have replaced with a FIFO (an open that blocks until a writer
// comes: the start, or the run's end, would hang for good), a symlink to
// /dev/zero or to a file elsewhere, or a sparse file of terabytes. So:
// plainfile's reader (no symlink followed, no blocking open, a regular file
// only, at most max bytes; a larger file is an error).
func readFile(p string, max int64) ([]byte, error) {
	return plainfile.Read(p, max, errNotRegular)
}

// errNotRegular: a repository file that is no regular file is not read.
var errNotRegular = errors.New("gitkeep: not a regular file")
