package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/hostsock"
	"github.com/jail-sandbox/jail/ns"
)

// farSocket is a socket file the start looks for outside the walked
// trees: another name of a linked socket (linked set), or the file of a
// socket the kernel lists by a name that does not hold it any more (name:
// the bound name; renamed, or its directory, outside the walked trees).
type farSocket struct {
	from   string        // the directory looked through first (then its parents)
	linked *linkedSocket // the linked socket whose other names are wanted
	key    [2]uint64     // linked: its device and inode
	name   string        // lost: the name the kernel lists it by
	found  uint64        // lost: names found
	nlink  uint64        // lost: the found file's link count
	hidden bool          // lost: name in a place this run hides (from: its nearest seen parent)
	dev    uint64        // lost: from's device (farRecord's; 0 unknown)
}

// done reports whether every name of f has been found.
func (f *farSocket) done() bool {
	if f.linked != nil {
		return f.linked.found+1 >= f.linked.nlink
	}
	return f.found > 0 && f.found >= f.nlink
}

// maxFarDirs bounds the directories farMasks reads for one start (a test
// lowers it): a socket whose file was unlinked while it still listens
// (its directory removed under a running server) is found nowhere, and
// each start looks for it again.
var maxFarDirs = 1000

// maxFarEntries bounds the directory entries farMasks reads for one start
// (a test lowers it). Why: maxFarDirs alone let one directory of millions
// of names (made by an earlier run's agent in its --write tree) make every
// later start as slow as the agent chose.
var maxFarEntries = 100000

// farMasks looks for the sockets of far through the parts of their file
// systems the sandbox sees, outside roots (walked already): from each one's
// directory outward, a parent at a time up to its file system's mount
// point, in no other file system (a name never leaves its own) and in no
// place the sandbox hides; it stops when every name is found or past
// maxFarDirs directories. Each name found where the sandbox sees it is
// masked. left says the sockets not wholly found (their names are past
// the bound, or in places the sandbox hides or the supervisor cannot
// read). More than room masks (what maxLinkedMasks leaves after
// linkedMasks's) refuse the start.
//
// Why: the mask is per path and connect(2) goes to the inode. A host-made
// hard link of root's or the user's socket in the host's read-only view
// (the agent cannot make one: protected_hardlinks links only a regular
// file of another's, and that view is read-only), and a socket or its
// directory renamed outside the walked trees (by an earlier run's agent
// in its --write path, which this run sees read-only), reached the host
// service from the sandbox.
func farMasks(far []*farSocket, files *hostsock.Files, own *owners, roots []string, mounts []ns.Mount, hostMounts []fsrules.Mount, seen map[string]bool, room int) (out []ns.Mount, left []string, err error) {
	if len(far) == 0 {
		return nil, nil, nil
	}
	skipDirs := unwalkedDirs(mounts, roots)
	points := map[string]bool{}
	for _, m := range hostMounts {
		points[m.Point] = true
	}
	budget := maxFarDirs
	entries := maxFarEntries
	all := func() bool {
		if err != nil {
			return true
		}
		for _, f := range far {
			if !f.done() {
				return false
			}
		}
		return true
	}
	each := func(p string, dev, ino uint64) {
		var st *syscall.Stat_t
		for _, f := range far {
			if f.done() {
				continue
			}
			if f.linked != nil {
				if f.key != [2]uint64{dev, ino} || p == f.linked.path {
					continue
				}
			} else if files == nil || !files.Holds(f.name, ino) {
				continue
			}
			if st == nil {
				st = new(syscall.Stat_t)
				// Why the owner: as the walked trees' moved sockets,
				// root's or the user's (another user's socket is
				// theirs by any name).
				if syscall.Lstat(p, st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFSOCK || uint64(st.Ino) != ino || !own.of(st.Uid) {
					return
				}
			}
			if f.linked != nil {
				f.linked.found++
			} else {
				f.found++
				f.nlink = uint64(st.Nlink)
			}
		}
		if st == nil || seen[p] || err != nil {
			return
		}
		seen[p] = true
		add := viewMasks(p, hostMounts, mounts, seen)
		if !named(p, mounts) && socketVisible(p, mounts) {
			add = append(add, ns.Mount{Kind: ns.KindMask, Path: p, FD: -1, Why: whyHostSocket})
		}
		// Why: each is a mount; the names found here were bounded only by
		// the entries read (100,000), their views by nothing (leftovers19).
		if len(out)+len(add) > room {
			err = tooManySocketNames(p, filepath.Dir(p))
			return
		}
		out = append(out, add...)
	}
	for _, f := range far {
		prev := ""
		for d := f.from; !f.done() && budget > 0 && entries > 0 && err == nil; d = filepath.Dir(d) {
			if socketVisible(d, mounts) && !underAny(d, roots) {
				n, _ := fsrules.LinkedSocketsBounded(d, func(dir string) bool {
					budget--
					// Why each: the child walked in the step before,
					// the places the sandbox hides or the start walked,
					// and other file systems (no name of this file
					// there).
					return budget < 0 || dir == prev || skipDirs[dir] || points[dir] || all()
				}, true, entries, each)
				entries -= n
			}
			if d == "/" || points[d] {
				break
			}
			prev = d
		}
	}
	for _, f := range far {
		if !f.done() {
			if f.linked != nil {
				left = append(left, f.linked.path)
			} else {
				left = append(left, f.name)
			}
		}
	}
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(left)
	return out, left, nil
}

// existingDir is the deepest directory of p (p itself or a parent) that
// exists: where a renamed directory was.
func existingDir(p string) string {
	for {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
		if p == "/" || p == "." {
			return p
		}
		p = filepath.Dir(p)
	}
}

// farNote says the sockets farMasks did not wholly find ("" if none):
// linked, those with another name not found (said at every start), and
// moved, those gone from their listed name and not found (said once: a
// socket whose file was deleted while its server runs is no rename, and
// its line at every start of every run, the same each time, was noise on
// the agent's screen the user could not act on; session 18).
func farNote(left []string, lost map[string]bool) (linked, moved string) {
	var linkedP, movedP []string
	for _, p := range left {
		if lost[p] {
			movedP = append(movedP, p)
		} else {
			linkedP = append(linkedP, p)
		}
	}
	linked = linkedNote(linkedP)
	if len(movedP) > 0 {
		list := strings.Join(movedP[:min(len(movedP), 3)], ", ")
		if len(movedP) > 3 {
			list += fmt.Sprintf(" and %d more", len(movedP)-3)
		}
		moved = hostSocketsNote + fmt.Sprintf("a live socket bound at %s is not at that name, and was not found within %d directories or %d entries of it where the sandbox sees: if it was renamed there the sandbox can connect to it; if its server no longer needs it, restart the server", list, maxFarDirs, maxFarEntries)
	}
	return linked, moved
}
