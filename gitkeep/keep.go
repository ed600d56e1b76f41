// Package gitkeep keeps, in jail's state directory, what the read-only packs
// (package gitguard, Plan.History) leave the agent able to delete from a
// workspace's repository: its loose objects (the commits made since the last
// gc, often the unpushed ones) and its refs and HEAD (where each branch
// pointed when the run started).
//
// Each repository gets a store: a bare repository under the state directory
// whose objects are hard links to the workspace's loose objects (same inode:
// no copy, a few microseconds an object, and only objects new since the last
// start are linked), whose objects/info/alternates names the workspace's
// objects directory (the packs, which the sandbox cannot delete), and whose
// packed-refs records every ref the repository had at each start (a ref
// that later goes stays recorded). After any run, the user gets the start's
// history back with
//
//	git fetch STORE '+refs/*:refs/jail-kept/*'
//
// Nothing is ever written into the workspace: the recovery is the user's
// command. The store is out of the sandbox's reach (the whole state directory
// is hidden), so the agent can neither delete nor unlink what it holds. It
// can write a kept object in place (chmod, then write the same inode): git
// hashes each object it reads against its name, so such an object is found
// corrupt (git fsck, or the fetch), never silently taken. Loose objects and
// a state directory on different file systems cannot be linked: the caller
// says so (Result.CrossFS).
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
	"syscall"
	"time"
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

// Result is what one Keep did.
type Result struct {
	Linked  int  // objects linked at this start
	Full    bool // the budget ran out: some objects are kept at a later start
	CrossFS bool // the store is on another file system: no object kept
	Refs    int  // refs recorded (with those recorded before)
	// PackedUnread: packed-refs is larger than MaxPacked, so its refs are
	// not recorded (the loose ones and the objects are).
	PackedUnread bool
	// Start are the refs gitDir had at this start (Lost's start).
	Start map[string]string
	// Mtimes are the mtimes (ns) of gitDir's objects/xx directories at
	// this start, -1 for one absent (Prune's look).
	Mtimes [256]int64
}

// Keep brings store, the store of git dir gitDir, up to date: every loose
// object hard-linked (budget is what is left of MaxLinks for this start,
// lowered by what is linked), every ref and HEAD's commit recorded. An
// objects/xx directory whose mtime is the one recorded when the store last
// kept it whole (seenFile) is not read: nothing was added to it since.
func Keep(store, gitDir string, budget *int) (Result, error) {
	var res Result
	objs := filepath.Join(store, "objects")
	if err := os.MkdirAll(filepath.Join(objs, "info"), 0o700); err != nil {
		return res, fmt.Errorf("gitkeep: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(store, "refs"), 0o700); err != nil {
		return res, fmt.Errorf("gitkeep: %w", err)
	}
	wide := objectFormat(gitDir) == "sha256"
	cfg := "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
	if wide {
		cfg = "[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tobjectformat = sha256\n"
	}
	if err := writeIfChanged(filepath.Join(store, "config"), []byte(cfg)); err != nil {
		return res, err
	}
	// The packs stay in the workspace (read-only inside): the store reads
	// them there.
	alt := filepath.Join(gitDir, "objects") + "\n"
	if err := writeIfChanged(filepath.Join(objs, "info", "alternates"), []byte(alt)); err != nil {
		return res, err
	}
	if err := keepObjects(gitDir, store, budget, &res); err != nil {
		return res, err
	}
	err := keepRefs(store, gitDir, &res)
	return res, err
}

func objectFormat(gitDir string) string {
	b, _ := readFile(filepath.Join(gitDir, "config"), maxSmall)
	if bytes.Contains(bytes.ToLower(b), []byte("objectformat = sha256")) {
		return "sha256"
	}
	return "sha1"
}

// seenFile, in a store, holds the mtime (ns) of each of the workspace's
// objects/xx directories as it was when the store last kept it whole: one
// read a start instead of a stat a directory in the store.
const seenFile = "fanout-mtimes"

func keepObjects(gitDir, store string, budget *int, res *Result) error {
	src, objs := filepath.Join(gitDir, "objects"), filepath.Join(store, "objects")
	for i := range res.Mtimes {
		res.Mtimes[i] = -1
	}
	// A symlinked objects directory leads out of the repository, and one
	// that is a FIFO would block the read: only a real directory is read.
	ents, err := readDir(src) // the dirent's type: no stat per entry
	if err != nil {
		return nil // no objects directory: nothing to keep
	}
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
		sd, dd := filepath.Join(src, n), filepath.Join(objs, n)
		si, err := os.Lstat(sd)
		if err != nil || !si.IsDir() {
			continue
		}
		mt := si.ModTime().UnixNano()
		res.Mtimes[x] = mt
		if seen[x] == mt {
			continue // unchanged since the last start
		}
		seen[x] = 0
		files, err := readDir(sd)
		if err != nil {
			continue
		}
		if err := os.Mkdir(dd, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("gitkeep: %w", err)
		}
		done := true
		for _, f := range files {
			fn := f.Name()
			// Objects only (a name of hex digits, a regular file): link(2)
			// never follows a symlink, and git's tmp files are not history.
			if (len(fn) != 38 && len(fn) != 62) || !isHex(fn) || !f.Type().IsRegular() {
				continue
			}
			if *budget <= 0 {
				res.Full, done = true, false
				break
			}
			err := os.Link(filepath.Join(sd, fn), filepath.Join(dd, fn))
			switch {
			case err == nil:
				res.Linked++
				*budget--
			case errors.Is(err, fs.ErrExist):
				// Kept at an earlier start: objects never change.
			case errors.Is(err, syscall.EXDEV):
				res.CrossFS = true
				return nil
			default:
				// Not ours to link (fs.protected_hardlinks: another owner's
				// file), or gone since the read: the rest still count.
				done = false
			}
		}
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
	refs := map[string]string{}
	old, _ := os.ReadFile(filepath.Join(store, "packed-refs"))
	parsePacked(old, refs)
	for r, id := range now {
		refs[r] = id
	}
	if head != "" {
		refs["refs/jail/HEAD"] = head
	}
	names := make([]string, 0, len(refs))
	for r := range refs {
		names = append(names, r)
	}
	sort.Strings(names)
	var out bytes.Buffer
	for _, r := range names {
		fmt.Fprintf(&out, "%s %s\n", refs[r], r)
	}
	res.Refs = len(names)
	if err := writeIfChanged(filepath.Join(store, "packed-refs"), out.Bytes()); err != nil {
		return err
	}
	if head == "" {
		head = "ref: refs/heads/main"
	}
	return writeIfChanged(filepath.Join(store, "HEAD"), []byte(head+"\n"))
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
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("gitkeep: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("gitkeep: %w", err)
	}
	return nil
}

// readFile reads p, a file of the workspace's repository: the agent's, which
// it could have replaced with a FIFO (an open that blocks until a writer
// comes: the start, or the run's end, would hang for good), a symlink to
// /dev/zero or to a file elsewhere, or a sparse file of terabytes. So: no
// symlink followed (O_NOFOLLOW), no blocking open (O_NONBLOCK), a regular
// file only, and at most max bytes (a larger file is an error).
func readFile(p string, max int64) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("gitkeep: %s: not a regular file", p)
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("gitkeep: %s: larger than %d bytes", p, max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("gitkeep: %s: larger than %d bytes", p, max)
	}
	return b, err
}

// readDir lists directory p, refusing a symlink (it leads out of the
// repository) and anything not a directory (a FIFO would block the open).
func readDir(p string) ([]fs.DirEntry, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	return ents, err
}
