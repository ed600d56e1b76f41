package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/hostsock"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/subid"
)

// boundSockets lists the host's path-bound Unix sockets and, where
// sock_diag answered, the files they were bound to (a test seam).
var boundSockets = hostsock.BoundFiles

// whyHostSocket is the Why of a host socket's mask: degraded mode, which
// refuses socket(AF_UNIX) with seccomp instead, leaves these masks out of
// its Landlock rules (degradedRules).
const whyHostSocket = "a host process's Unix socket"

// hostSocketMasks returns a mask for each host Unix socket bound to a path
// that mounts would leave visible in the sandbox. The list is the kernel's
// (package hostsock, in the supervisor's network namespace: the host's):
// every socket a host process has bound to a path, without a walk of the
// trees. What it cannot list (a socket bound after the start, or in another
// network namespace, or by a relative name it cannot place) is said in
// README (Threat model). A socket in a place the mounts hide (the private /run, /tmp and
// HOME, a masked directory) needs no mask.
//
// A socket is masked at every place the host's mount table shows it
// (hostMounts, fsrules.Views): a second mount of its directory (a host bind
// of /var/lib/mysql at /srv/mysql) reaches the same inode by another path,
// and a mask at the listed path alone leaves it reachable there.
//
// Without the kernel's list (neither sock_diag nor /proc/net/unix answers)
// nothing is masked, and note says so: the private /run, /tmp and HOME
// still hide the usual places, but a socket elsewhere would be reachable
// without a word.
//
// Each socket file's owner (the uid of its inode: the binder's, which no
// other user can change) decides its cap: root's and the user's own are
// always masked (and nobody's, started by root: the agent's own there,
// alwaysMasked; and the user's subordinate uids', its rootless
// containers': owners.of); another user's up to socketCap each (socketCapAll for
// all other users together), and the rest left with one note naming the
// uids and the counts. Every mask is a
// mount, and the kernel's fs.mount-max (100,000) bounds a namespace's
// mounts: a local user binding 100,000 sockets where the sandbox sees them
// would otherwise fail every start (and slow each one per socket). What is
// left reaches only the processes that user's sockets lead to: that user's
// own services (a socket's file is made by bind(2), owned by the binder).
func hostSocketMasks(mounts []ns.Mount, hostMounts []fsrules.Mount) (masks []ns.Mount, note string) {
	masks, _, note, once, _ := hostSocketMasksOwned(mounts, hostMounts, nil)
	return masks, joinNotes(note, once)
}

// hostSocketMasksOwned is hostSocketMasks that also says which masked
// paths were another user's socket (capped, not alwaysMasked): a fall
// there ends an --end-if-unmasked run only if the file there then is
// root's, the user's or the agent's own (runner.unmasked); a fall of any
// other socket mask ends it whatever is there by then.
//
// roots are the trees the start walks (the workspace, --read and --write
// paths: fsrules' roots): the other names (hard links) of root's and the
// user's sockets are looked for there and masked too (linkedMasks), then
// those not found there, and the listed sockets not at their names, in the
// rest of the sandbox's view of their file systems (farMasks); an error
// is a start that cannot be made safe that way (too many names).
func hostSocketMasksOwned(mounts []ns.Mount, hostMounts []fsrules.Mount, roots []string) (masks []ns.Mount, theirs map[string]bool, note, onceNote string, err error) {
	return hostSocketMasksRecorded(mounts, hostMounts, roots, "")
}

// hostSocketMasksRecorded is hostSocketMasksOwned with the far search's
// record (farRecord) in stateDir ("": none, every search made).
func hostSocketMasksRecorded(mounts []ns.Mount, hostMounts []fsrules.Mount, roots []string, stateDir string) (masks []ns.Mount, theirs map[string]bool, note, onceNote string, err error) {
	paths, files, err := boundSockets()
	if errors.Is(err, hostsock.ErrUnsupported) {
		return nil, nil, "", "", nil // not Linux: no such sockets to list
	}
	if err != nil {
		return nil, nil, hostSocketsNote + fmt.Sprintf("the host's Unix sockets could not be listed (%v): those outside /run, /tmp and the home are not masked, and a host service listening on one is reachable", err), "", nil
	}
	var out []ns.Mount
	seen := map[string]bool{}
	dirs := map[string]string{} // a socket's directory -> its symlink-free path ("" if gone)
	// A socket's symlink-free directory -> whether another mount shows it
	// or a part of it (then each of its sockets' views is asked for): one
	// look at the mount table for each directory, not each socket.
	shown := map[string]bool{}
	// Masks made for each other owner, and the sockets left past the cap.
	// Other owners' sockets, by uid, decided after the walk (capOthers).
	others := map[uint32][]string{}
	// Root's and the user's sockets with more than one name (hard links),
	// by inode: their other names are looked for in roots (linkedMasks).
	linked := map[[2]uint64]*linkedSocket{}
	hid := hiddenLinks{roots: roots}
	moved := false // a listed socket in roots is not at its name
	// Listed sockets not at their names, to look for outside roots too
	// (farMasks), by name.
	lost := map[string]*farSocket{}
	addLost := func(name, from string) bool {
		if files == nil {
			return false
		}
		if lost[name] != nil {
			return true
		}
		// Why not where nothing of the name's place is left but "/",
		// or it is hidden: an agent renames only in its --write trees,
		// whose tops it cannot rename (mount points in its sandbox) and
		// whose files stay on their file system, so such a name was
		// given in another mount namespace (a service's private /tmp,
		// a container sharing the host's network), or is in a place
		// this run hides whole. Looked for, it would cost every start
		// a walk of the host's root.
		// Symlink-free: /var/run/x is in the private /run.
		from = existingDir(from)
		if r, err := filepath.EvalSymlinks(from); err == nil {
			from = r
		}
		// Why a hidden place's nearest seen parent: a socket renamed
		// out of a place this run hides (a tmpfs or masked directory
		// over it, seen whole by the earlier run whose --write tree
		// held it) into one this run sees is reachable at its new
		// name (sockets20); it stays on its file system, so it is
		// looked for from there outward as a visible place's is.
		hidden := false
		if !socketVisible(from, mounts) && holdsIn(from, name, files) {
			// Why: still in its hidden directory by another name (ssh's
			// ControlMaster binds a temporary name, links the final one
			// and unlinks the first): out of reach, and a search from
			// the nearest seen parent at every start while it lives
			// would cost up to maxFarDirs for nothing. One read of that
			// directory.
			return false
		}
		for from != "/" && !socketVisible(from, mounts) {
			from, hidden = filepath.Dir(from), true
		}
		if from == "/" {
			return false
		}
		lost[name] = &farSocket{from: from, name: name, hidden: hidden}
		return true
	}
	own := owners{self: uint32(hostUID())}
	for _, path := range paths {
		// The socket's inode is where the path leads on the host: through
		// /var/run -> /run into the private /run (hidden), or through a
		// link out of a hidden place into a visible one (masked there).
		// Its directory is resolved once for all its sockets.
		dir := filepath.Dir(filepath.Clean(path))
		real, ok := dirs[dir]
		if !ok {
			if r, err := filepath.EvalSymlinks(dir); err == nil {
				real = r
			}
			dirs[dir] = real
		}
		if real == "" {
			// Why: its directory renamed (or removed): the socket may
			// live on under another name, in roots or outside.
			far := addLost(path, dir) // first: || would skip it once moved
			moved = moved || underAny(dir, roots) || far
			continue // gone since it was bound
		}
		sock := filepath.Join(real, filepath.Base(path))
		places := []string{sock}
		s, ok := shown[real]
		if !ok {
			s = len(fsrules.Views(hostMounts, real)) > 0
			shown[real] = s
		}
		if s {
			// Why: the same socket at another mount of its file system
			// (its directory, a parent, or the socket itself bound
			// elsewhere) takes connect(2) there as well.
			for _, v := range fsrules.Views(hostMounts, sock) {
				places = append(places, v.Path)
			}
		}
		for _, p := range places {
			if seen[p] || named(p, mounts) {
				continue
			}
			if !socketVisible(p, mounts) {
				// Why: the mask is per path, connect(2) goes to the
				// inode: a socket of root's or the user's in a place the
				// sandbox hides (the workspace's .ssh/, the private HOME)
				// is reached through another name of it where the
				// sandbox sees one (a hard link on the same file system).
				// Looked at only on the devices of the walked trees,
				// where such a name can be found.
				st, onRoots := hid.linkedSocket(real, p)
				if st != nil && st.Nlink > 1 && own.of(st.Uid) {
					noteLinked(linked, p, st)
				}
				// Why: renamed from a hidden place into a walked tree on
				// its file system (an earlier run's --write path in the
				// home, private in this run), the socket is reachable at
				// its new name: not at its listed name any more (gone, or
				// another file there) is looked for by its inode, as in
				// a place the sandbox sees. Only with the kernel's
				// inodes: without them the walk masks every socket file.
				//
				// Why off the roots' devices too: renamed out of the
				// hidden place into one the sandbox sees outside the
				// roots (sockets20), it is looked for outward from
				// there (farMasks). One lstat per hidden listed socket.
				if files != nil {
					if !onRoots {
						st = lstatSocket(p)
					}
					if st == nil || !files.Holds(path, st.Ino) {
						moved = moved || onRoots
						addLost(path, real)
					}
				}
				continue
			}
			seen[p] = true
			fi, err := os.Lstat(p)
			gone := err != nil || fi.Mode().Type() != os.ModeSocket
			if gone || files != nil && !files.Holds(path, statIno(fi)) {
				// Why: the bound socket may live on under another name
				// (a rename by an earlier run's agent, of it or of its
				// directory: the kernel keeps the bind(2) name), and
				// connect(2) there reaches its listener. A socket file
				// at the name that is not the one the kernel lists by
				// it (sock_diag's inode) is such a case too: another
				// was bound there after the rename (a dead file, or the
				// agent's own). With the kernel's inodes only the
				// bound files are masked (linkedMasks), so a name gone
				// anywhere the sandbox sees is looked for: an earlier
				// run's --write path is no root now, and its agent
				// could rename a socket from there into the workspace.
				// Without them (/proc/net/unix) every socket file of
				// root's or the user's in the roots is masked: only a
				// name gone in the roots makes that walk.
				moved = moved || files != nil || underAny(p, roots)
				addLost(path, real)
			}
			if gone {
				continue // unlinked or replaced: nothing to reach there
			}
			// Why: another user's sockets must not block or slow the
			// start (one mount each); past the cap they are left, and
			// said. Root's and the user's own are never left: a
			// daemon's or the user's service is what the masks are for.
			// An owner that cannot be read counts as root (masked).
			if uid := socketUID(fi); !own.of(uid) {
				others[uid] = append(others[uid], p)
				continue
			}
			// Why: the kernel lists a socket by the name given at
			// bind(2) only; another name of the same inode (a hard link
			// an earlier run's agent made in the workspace to a socket
			// bound there after that start, or one a host user with
			// write access to it made) is neither listed nor masked.
			// Root's and the user's only: another user's socket is
			// theirs by any name. That there is one is in the inode,
			// from this lstat, at no cost; where it is takes a walk
			// (linkedMasks).
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
				noteLinked(linked, p, st)
			}
			// Why: connect(2) and sendto(2) on a socket need no write
			// access to its mount (the host's view is read-only, yet
			// reachable), and Landlock does not mediate them; a mode-0
			// file over it refuses both.
			out = append(out, ns.Mount{Kind: ns.KindMask, Path: p, FD: -1, Why: whyHostSocket})
		}
	}
	var masked []string
	left := map[uint32]int{}
	if len(others) > 0 { // /etc/subuid is read only then (and by own.of)
		masked, left = capOthersIn(others, own.subOwners())
	}
	for _, p := range masked {
		out = append(out, ns.Mount{Kind: ns.KindMask, Path: p, FD: -1, Why: whyHostSocket})
		if theirs == nil {
			theirs = map[string]bool{}
		}
		theirs[p] = true
	}
	far := make([]*farSocket, 0, len(lost))
	for _, f := range lost {
		far = append(far, f)
	}
	sort.Slice(far, func(i, j int) bool { return far[i].name < far[j].name })
	// Why: a socket not found at an earlier start is not searched for
	// again while no start could write on its file system (farRecord).
	// Still looked for in the walked roots (linkedMasks, below).
	recFile := farRecordFile(stateDir)
	skip, gens := farBegin(recFile, far, files)
	lm, err := linkedMasks(linked, moved, files, &own, roots, mounts, hostMounts, seen, far)
	if err != nil {
		return nil, nil, "", "", err
	}
	// Why: names the walked trees did not hold may be anywhere the
	// sandbox sees on the socket's file system (farMasks).
	for _, ls := range sortedLinked(linked) {
		if ls.found+1 < ls.nlink {
			far = append(far, &farSocket{from: filepath.Dir(ls.path), linked: ls, key: ls.key})
		}
	}
	var skipped []string
	far = slices.DeleteFunc(far, func(f *farSocket) bool {
		if f.linked == nil && skip[f.name] && !f.done() {
			skipped = append(skipped, f.name)
			return true
		}
		return false
	})
	fm, unfound, err := farMasks(far, files, &own, roots, mounts, hostMounts, seen, maxLinkedMasks-len(lm))
	if err != nil {
		return nil, nil, "", "", err
	}
	farEnd(recFile, lost, unfound, gens, files)
	unfound = append(unfound, skipped...)
	sort.Strings(unfound)
	isLost := map[string]bool{}
	for name := range lost {
		isLost[name] = true
	}
	unfound = slices.DeleteFunc(unfound, func(p string) bool {
		f := lost[p]
		// Why not said, a lost name not found where the sandbox sees:
		// hidden, in a place this run hides, it is out of the sandbox's
		// reach (still in the hidden place, or gone): nothing there for
		// the user to act on. Behind a directory of another user's that
		// this user cannot search (another user's run's control socket
		// in that user's home), the supervisor cannot look there, nor
		// can the sandbox: still looked for where the sandbox sees (its
		// owner may have renamed it out), but not found, it is out of
		// reach, and the line was noise at every start on a shared
		// machine. Asked of the names not found only.
		return f != nil && (f.hidden || behindOthersWall(p, own.self))
	})
	linkedN, movedN := farNote(unfound, isLost)
	return append(append(out, lm...), fm...), theirs, joinNotes(leftNote(left, own.ranges), linkedN), movedN, nil
}

// sortedLinked is linked's sockets in their listed names' order.
func sortedLinked(linked map[[2]uint64]*linkedSocket) []*linkedSocket {
	out := make([]*linkedSocket, 0, len(linked))
	for _, ls := range linked {
		out = append(out, ls)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// linkedSocket is a socket of root's or the user's with other names: its
// name as the kernel lists it, its link count, and how many of its other
// names linkedMasks found.
type linkedSocket struct {
	path  string
	key   [2]uint64 // its device and inode
	nlink uint64
	found uint64
}

// noteLinked records the socket at p (st its lstat) in linked, by inode.
func noteLinked(linked map[[2]uint64]*linkedSocket, p string, st *syscall.Stat_t) {
	key := [2]uint64{uint64(st.Dev), uint64(st.Ino)}
	if linked[key] == nil {
		linked[key] = &linkedSocket{path: p, key: key, nlink: uint64(st.Nlink)}
	}
}

// maxLinkedMasks bounds the masks over other names of sockets (one mount
// each, under fs.mount-max like the rest; a test lowers it).
var maxLinkedMasks = 1024

// linkedMasks masks every other name of the linked sockets found in
// roots (the trees the start walks: the workspace, --read and --write
// paths), where the sandbox sees it (not in a hidden place, not a path
// the user named: that socket is given). The walk is fsrules'
// (LinkedSockets: one getdents per directory, an fstatat per socket
// entry), over trees fsrules has just walked within its entry bound, and
// made only when one of root's or the user's sockets has another name.
// It counts the names it finds (linkedSocket.found, and far's found for
// the listed sockets not at their names) for farMasks to look for the
// rest outside roots; more than maxLinkedMasks names refuse the start.
//
// moved (a socket the kernel lists in roots is not at its name: renamed,
// or its directory) masks every socket file of own's in roots that is a
// bound socket's file (files: sock_diag's inodes), wherever it is and
// whatever its name: a dead socket file (the agent's thousand, left from
// earlier runs) reaches no listener and is left alone. Without files (the
// list came from /proc/net/unix, which has no file inode) every socket
// file of own's in roots is masked: which one is the listed socket is
// not said by its name, and a stale one needs no more than a mask.
func linkedMasks(linked map[[2]uint64]*linkedSocket, moved bool, files *hostsock.Files, own *owners, roots []string, mounts []ns.Mount, hostMounts []fsrules.Mount, seen map[string]bool, far []*farSocket) (out []ns.Mount, err error) {
	if len(linked) == 0 && !moved {
		return nil, nil
	}
	skipDirs := unwalkedDirs(mounts, roots)
	skip := func(dir string) bool { return skipDirs[dir] }
	for _, r := range roots {
		if err != nil {
			break
		}
		fsrules.LinkedSockets(r, skip, moved, func(p string, dev, ino uint64) {
			ls := linked[[2]uint64{dev, ino}]
			if ls == nil && !moved || ls != nil && p == ls.path || err != nil {
				return
			}
			if seen[p] {
				return // a place of it masked already (a view through another mount)
			}
			if ls == nil {
				// Why: moved, and a bound socket's file (by its inode:
				// the kernel's, not a name the agent chose), or, with no
				// inodes known, any socket file: of root's or the
				// user's.
				if files != nil && !files.Live(ino) {
					return
				}
				var st syscall.Stat_t
				if syscall.Lstat(p, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFSOCK || !own.of(st.Uid) {
					return
				}
				// A listed socket not at its name, found here: not
				// looked for again outside roots (farMasks).
				for _, f := range far {
					if files != nil && files.Holds(f.name, ino) {
						f.found++
						f.nlink = uint64(st.Nlink)
					}
				}
			}
			seen[p] = true
			if ls != nil {
				ls.found++
			}
			var add []ns.Mount
			if !named(p, mounts) && socketVisible(p, mounts) {
				// Why: a hard link is the socket itself by another name:
				// connect(2) there reaches the process listening on it.
				add = append(add, ns.Mount{Kind: ns.KindMask, Path: p, FD: -1, Why: whyHostSocket})
			}
			// Why: hidden here or not, it may still show where the host
			// mounts the tree again.
			add = append(add, viewMasks(p, hostMounts, mounts, seen)...)
			// Why the views count: each is a mount too; a name's views
			// left out of the bound made it maxLinkedMasks times the
			// host's second mounts of the tree (leftovers19).
			if len(out)+len(add) > maxLinkedMasks {
				what := ""
				if ls != nil {
					what = " (a name of " + ls.path + ")"
				}
				err = tooManySocketNames(p+what, r)
				return
			}
			out = append(out, add...)
		})
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// tooManySocketNames is the refusal past maxLinkedMasks masks over other
// names of sockets (at: the name found past it; in: where to look).
func tooManySocketNames(at, in string) error {
	return fmt.Errorf("host sockets: more than %d other names (hard links or renamed sockets, and the other mounts that show them) of root's or your sockets, as %s: each would be a mount; not starting; remove them (find %s -type s)", maxLinkedMasks, at, in)
}

// viewMasks masks the other places the host's mount table (hostMounts,
// fsrules.Views) shows the socket found at p by a walk, where the sandbox
// sees a socket there and the user did not name it.
//
// Why: as for a listed socket, a second mount of its directory (or a
// parent) reaches the same inode by another path, and the walks never
// enter a mount point (a socket's name is on its own file system), so
// the name found at p alone left it reachable there (sockets19).
func viewMasks(p string, hostMounts []fsrules.Mount, mounts []ns.Mount, seen map[string]bool) (out []ns.Mount) {
	for _, v := range fsrules.Views(hostMounts, p) {
		if seen[v.Path] || named(v.Path, mounts) || !socketVisible(v.Path, mounts) {
			continue
		}
		var st syscall.Stat_t
		if syscall.Lstat(v.Path, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
			continue // nothing to reach there
		}
		seen[v.Path] = true
		out = append(out, ns.Mount{Kind: ns.KindMask, Path: v.Path, FD: -1, Why: whyHostSocket})
	}
	return out
}

// unwalkedDirs are the directories the socket walks leave out: those
// the sandbox replaces (a tmpfs) or masks whole show nothing of the
// host's, and each root is walked on its own (once).
func unwalkedDirs(mounts []ns.Mount, roots []string) map[string]bool {
	skip := map[string]bool{}
	for _, m := range mounts {
		if m.Kind == ns.KindTmpfs || m.Kind == ns.KindMask && m.Dir {
			skip[m.Path] = true
		}
	}
	for _, r := range roots {
		skip[r] = true
	}
	return skip
}

// statIno is fi's inode number (0 if fi has none: then it holds no
// listed socket's file and the start looks for that by its inode).
func statIno(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// underAny reports whether p is one of roots or below one.
func underAny(p string, roots []string) bool {
	for _, r := range roots {
		if pathUnder(p, r) {
			return true
		}
	}
	return false
}

// hiddenLinks answers, for a socket the sandbox does not see by its
// listed name, whether it could have another name in the walked trees:
// only on a device one of roots is on (a hard link never leaves its file
// system), one stat per directory and one lstat per such socket.
type hiddenLinks struct {
	roots   []string
	devs    map[uint64]bool // the roots' devices (nil: not yet stat'ed)
	dirDevs map[string]uint64
}

// linkedSocket lstats the socket p in the symlink-free directory dir if
// dir is on a root's device (onRoots), and returns it if it is a socket
// (nil if it is gone or no socket).
func (h *hiddenLinks) linkedSocket(dir, p string) (st *syscall.Stat_t, onRoots bool) {
	if len(h.roots) == 0 {
		return nil, false
	}
	if h.devs == nil {
		h.devs, h.dirDevs = map[uint64]bool{}, map[string]uint64{}
		for _, r := range h.roots {
			var st syscall.Stat_t
			if syscall.Stat(r, &st) == nil {
				h.devs[uint64(st.Dev)] = true
			}
		}
	}
	dev, ok := h.dirDevs[dir]
	if !ok {
		var st syscall.Stat_t
		if syscall.Stat(dir, &st) == nil {
			dev = uint64(st.Dev)
		}
		h.dirDevs[dir] = dev
	}
	if !h.devs[dev] {
		return nil, false
	}
	return lstatSocket(p), true
}

// holdsIn reports whether a socket file in dir (not below it) is the one
// the kernel lists as bound by name.
func holdsIn(dir, name string, files *hostsock.Files) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.Type()&os.ModeSocket == 0 {
			continue
		}
		if st := lstatSocket(filepath.Join(dir, e.Name())); st != nil && files.Holds(name, st.Ino) {
			return true
		}
	}
	return false
}

// lstatSocket lstats p and returns it if it is a socket (nil if it is
// gone or no socket).
func lstatSocket(p string) *syscall.Stat_t {
	var s syscall.Stat_t
	if syscall.Lstat(p, &s) != nil || s.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
		return nil
	}
	return &s
}

// joinNotes makes hostSocketMasks's notes one note (its caller shows one).
func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + strings.TrimPrefix(b, hostSocketsNote)
}

// linkedNote says the sockets of root's or the user's with another name
// (a hard link) neither linkedMasks nor farMasks found: those names are
// not masked ("" if none).
func linkedNote(linked []string) string {
	if len(linked) == 0 {
		return ""
	}
	list := strings.Join(linked[:min(len(linked), 3)], ", ")
	if len(linked) > 3 {
		list += fmt.Sprintf(" and %d more", len(linked)-3)
	}
	has := "has another name"
	if len(linked) > 1 {
		has = "each have another name"
	}
	return hostSocketsNote + fmt.Sprintf("%s %s (a hard link) not masked: not found where the sandbox sees its file system within %d directories of it (the rest of that file system, or a place the sandbox hides, or one the supervisor cannot read): the sandbox can connect to the socket by that name if it sees it; find it with find / -xdev -samefile %s, and remove the link if it is in a tree a sandbox could write", list, has, maxFarDirs, linked[0])
}

// capOthers picks which of other users' sockets (by owner) are masked:
// at most socketCap of one owner's and socketCapAll of all together. An
// owner is a user with the subordinate uids /etc/subuid gives them
// (subOwners): a rootless container's sockets are owned by its user's
// subordinate uids on the host, and count as that user's. System uids
// come first, then login users', then uids no range names (uidTier);
// within each, the owners with fewest sockets (then the lower uid): one
// user binding many, under many uids, must not push a system service's
// or a third user's few sockets out of the total. left counts the rest,
// by uid.
func capOthers(others map[uint32][]string) (masked []string, left map[uint32]int) {
	if len(others) == 0 {
		return nil, map[uint32]int{}
	}
	return capOthersIn(others, subOwners())
}

// capOthersIn is capOthers with /etc/subuid's ranges as read.
func capOthersIn(others map[uint32][]string, ranges subid.Ranges) (masked []string, left map[uint32]int) {
	left = map[uint32]int{}
	if len(others) == 0 {
		return nil, left
	}
	// Why: one user's 65,536 subordinate uids were 65,536 owners, each
	// with its own cap: that user's containers could take the whole
	// total (ranked after login users', they still pushed another
	// user's containers' sockets out). Grouped under their owner, one
	// user's sockets, whatever the uid, are capped as one.
	groups := map[uint32][]uint32{} // owner -> its uids with sockets
	count := map[uint32]int{}       // owner -> its sockets
	for u, ps := range others {
		o := u
		if r, ok := ranges.Owner(u); ok {
			o = r
		}
		groups[o] = append(groups[o], u)
		count[o] += len(ps)
	}
	owners := make([]uint32, 0, len(groups))
	for o := range groups {
		owners = append(owners, o)
	}
	sort.Slice(owners, func(i, j int) bool {
		// Why: fewest-first alone let one user's subordinate uids (one
		// socket under each of 4,096) take the whole total and leave a
		// system service's sockets (postfix's dozens) and a third user's
		// unmasked (review14g). System uids first, then login users',
		// then the rest: a flood under uids no range names competes only
		// with those.
		if ti, tj := uidTier(owners[i]), uidTier(owners[j]); ti != tj {
			return ti < tj
		}
		a, b := count[owners[i]], count[owners[j]]
		return a < b || a == b && owners[i] < owners[j]
	})
	budget := socketCapAll
	for _, o := range owners {
		uids := groups[o]
		sort.Slice(uids, func(i, j int) bool { return uids[i] < uids[j] })
		n := min(count[o], socketCap, budget)
		budget -= n
		for _, u := range uids {
			ps := others[u]
			k := min(len(ps), n)
			masked = append(masked, ps[:k]...)
			n -= k
			if k < len(ps) {
				left[u] = len(ps) - k
			}
		}
	}
	return masked, left
}

// subOwners reads /etc/subuid's ranges (a test sets its own). Read only
// when another user's socket is visible: most starts do not read it.
var subOwners = func() subid.Ranges { return subid.Load("/etc/subuid") }

// uidTier orders other owners for the total: 0 for system accounts
// (below 1000: login.defs' SYS_UID_MAX 999, the daemons' uids, made only
// by root), 1 for login users (below 100000: login.defs' SUB_UID_MIN, where
// useradd's subordinate ranges begin), 2 for the rest (subordinate uids
// /etc/subuid does not name, containers' mapped uids: capOthers groups
// those it names under their owner).
func uidTier(uid uint32) int {
	switch {
	case uid < 1000:
		return 0
	case uid < 100000:
		return 1
	}
	return 2
}

// alwaysMasked reports whether a socket owned by uid is masked whatever
// the caps, for a run started by host uid self: root's, the user's own,
// and, started by root, nobody's (ns.NobodyID).
func alwaysMasked(uid, self uint32) bool {
	// Why: started by root, the agent is host uid 65534 (ns.NobodyID, the
	// user namespace maps its root there), so a socket nobody owns is the
	// agent's own on the host: one of mode 0700 that no other user can
	// connect to takes the agent's connect(2). Any process of any user
	// started as nobody (a daemon's dropped privileges, a NFS squash)
	// binds as it; capped with other users', its sockets past the cap
	// were reachable by the sandbox with the owner's rights.
	return uid == 0 || uid == self || self == 0 && uid == ns.NobodyID
}

// owners decides which sockets are the run's starter's own (self's):
// alwaysMasked, and those of self's subordinate uids (/etc/subuid, read
// once, only when a socket of another uid is seen).
type owners struct {
	self   uint32
	ranges subid.Ranges
	read   bool
}

// of reports whether a socket owned by uid is masked whatever the caps.
func (o *owners) of(uid uint32) bool {
	if alwaysMasked(uid, o.self) {
		return true
	}
	// Why: a socket a rootless container of the user's binds (podman's
	// under a volume of the workspace, a dev container's database) is
	// owned on the host by one of the user's subordinate uids. It is the
	// user's own service: the user runs it, reaches it from outside
	// (podman unshare, the container's own mapping) and it holds what the
	// user gave it. Capped as another user's, 1,024 of them were masked
	// and the rest reachable. No other user can make a file of those uids
	// (only the user's newuidmap'd namespaces and root), so masking all of
	// them is no lever for other users' floods: the user's own sockets
	// are masked however many, these likewise.
	r, ok := o.subOwners().Owner(uid)
	return ok && r == o.self
}

// subOwners is /etc/subuid's ranges, read at the first ask.
func (o *owners) subOwners() subid.Ranges {
	if !o.read {
		o.ranges, o.read = subOwners(), true
	}
	return o.ranges
}

// behindOthersWall reports whether looking up p fails on a directory
// that is not self's and refuses self the search (EACCES): a wall self's
// processes, the sandbox's included, can neither pass nor have made (a
// directory of self's own made unsearchable, as an earlier run's agent
// could, is no such wall).
func behindOthersWall(p string, self uint32) bool {
	const xOK = 1 // access(2): search permission
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); !errors.Is(err, syscall.EACCES) {
		return false
	}
	for q := filepath.Dir(p); ; q = filepath.Dir(q) {
		err := syscall.Lstat(q, &st)
		if err == nil {
			return st.Mode&syscall.S_IFMT == syscall.S_IFDIR && st.Uid != self && syscall.Access(q, xOK) != nil
		}
		if !errors.Is(err, syscall.EACCES) || q == "/" || q == "." {
			return false
		}
	}
}

// hostUID is the uid that starts the run (a test poses as root).
var hostUID = os.Getuid

// socketCap is how many of one other user's sockets are masked, and
// socketCapAll how many of all other users' together (a test lowers
// them): far below fs.mount-max (100,000), whatever the count of owners.
var socketCap, socketCapAll = 1024, 4096

// socketUID is the uid of a socket file's inode (0 if it cannot be read:
// then the socket is masked as root's). A test as a user without the
// right to chown stubs it.
var socketUID = func(fi os.FileInfo) uint32 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid
	}
	return 0
}

// leftNote says the sockets left unmasked past the cap, one clause per
// owner ("" if none), each uid with its user's name (passwdNames) or, for
// a subordinate uid, its range's owner's (ranges: /etc/subuid as read).
func leftNote(left map[uint32]int, ranges subid.Ranges) string {
	if len(left) == 0 {
		return ""
	}
	uids := make([]uint32, 0, len(left))
	for u := range left {
		uids = append(uids, u)
	}
	sort.Slice(uids, func(i, j int) bool { return uids[i] < uids[j] })
	// One line, however many owners (a user's subordinate uids can be
	// 65,536): the first few named, the others counted.
	shown := uids[:min(len(uids), 5)]
	ask := append([]uint32{}, shown...)
	for _, u := range shown {
		if o, ok := ranges.Owner(u); ok {
			ask = append(ask, o)
		}
	}
	names := passwdNames(passwdPath, ask)
	var parts []string
	total, rest, restN := 0, 0, 0
	for i, u := range uids {
		total += left[u]
		if i >= len(shown) {
			rest, restN = rest+1, restN+left[u]
			continue
		}
		who := ""
		if n, ok := names[u]; ok {
			who = " (" + n + ")"
		} else if o, ok := ranges.Owner(u); ok {
			on := fmt.Sprintf("uid %d", o)
			if n, ok := names[o]; ok {
				on = n
			}
			who = " (" + on + "'s subordinate uid)"
		}
		parts = append(parts, fmt.Sprintf("uid %d%s: %d", u, who, left[u]))
	}
	if rest > 0 {
		parts = append(parts, fmt.Sprintf("%d more uids: %d", rest, restN))
	}
	return hostSocketsNote + fmt.Sprintf("%d of other users' sockets are not masked (%s): one mount each, at most %d of one user's and %d of all other users' together, so that sockets another user binds cannot fail or slow the start; the sandbox can connect to those, which lead only to their owners' own processes", total, strings.Join(parts, ", "), socketCap, socketCapAll)
}

// passwdPath is the user database passwdNames reads (a test sets its own).
var passwdPath = "/etc/passwd"

// maxPasswd bounds how much of the user database passwdNames reads.
const maxPasswd = 4 << 20

// passwdNames returns the login names of uids from the passwd file at
// path ("name:x:uid:..." lines), read once and at most maxPasswd bytes:
// no cgo (getpwuid), no NSS (a directory service's users are named by
// uid). A name that is not a plain login name (letters, digits, '.',
// '_', '-', a trailing '$', at most 32 bytes) is left out: it goes into
// a line on the user's terminal. The first line of a uid wins.
func passwdNames(path string, uids []uint32) map[uint32]string {
	names := map[uint32]string{}
	if len(uids) == 0 {
		return names
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return names
	}
	defer f.Close()
	// Why regular only: a FIFO or device at the path would hang or flood
	// the start.
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return names
	}
	data, _ := io.ReadAll(io.LimitReader(f, maxPasswd))
	return parsePasswdNames(data, uids)
}

// parsePasswdNames is passwdNames's parse of the file's text.
func parsePasswdNames(data []byte, uids []uint32) map[uint32]string {
	want := map[uint32]bool{}
	for _, u := range uids {
		want[u] = true
	}
	names := map[uint32]string{}
	for len(data) > 0 && len(names) < len(want) {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		f := bytes.SplitN(line, []byte(":"), 4)
		if len(f) < 4 || !loginName(f[0]) {
			continue
		}
		u, err := strconv.ParseUint(string(f[2]), 10, 32)
		if err != nil || !want[uint32(u)] {
			continue
		}
		if _, ok := names[uint32(u)]; !ok {
			names[uint32(u)] = string(f[0])
		}
	}
	return names
}

// loginName reports whether b is a plain login name (shadow-utils'
// default rule, with upper case, which some sites use).
func loginName(b []byte) bool {
	if len(b) == 0 || len(b) > 32 || b[0] == '-' {
		return false
	}
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		case c == '$' && i == len(b)-1:
		default:
			return false
		}
	}
	return true
}

// hostSocketsNote begins hostSocketMasks's note (shownNote shows it).
const hostSocketsNote = "host sockets: "

// socketVisible reports whether path would be reachable in the sandbox: the
// deepest mount holding it is neither a private tmpfs nor a masked
// directory (no mount at all: the host's read-only view shows it).
func socketVisible(path string, mounts []ns.Mount) bool {
	deepest := deepestMount(path, mounts)
	return deepest == nil || !(deepest.Kind == ns.KindTmpfs || deepest.Kind == ns.KindMask && deepest.Dir)
}

// named reports whether path is itself a read or write path of the policy
// (`--write /run/docker.sock`): the user gave the sandbox that very socket.
// A directory holding it is no such grant.
func named(path string, mounts []ns.Mount) bool {
	for _, m := range mounts {
		if m.Path == path && !m.Dir && (m.Kind == ns.KindBind || m.Kind == ns.KindROBind) {
			return true
		}
	}
	return false
}
