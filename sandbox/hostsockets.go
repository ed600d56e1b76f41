package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/hostsock"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/subid"
)

// boundSockets lists the host's path-bound Unix sockets (a test seam).
var boundSockets = hostsock.Bound

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
// alwaysMasked); another user's up to socketCap each (socketCapAll for
// all other users together), and the rest left with one note naming the
// uids and the counts. Every mask is a
// mount, and the kernel's fs.mount-max (100,000) bounds a namespace's
// mounts: a local user binding 100,000 sockets where the sandbox sees them
// would otherwise fail every start (and slow each one per socket). What is
// left reaches only the processes that user's sockets lead to: that user's
// own services (a socket's file is made by bind(2), owned by the binder).
func hostSocketMasks(mounts []ns.Mount, hostMounts []fsrules.Mount) (masks []ns.Mount, note string) {
	masks, _, note = hostSocketMasksOwned(mounts, hostMounts)
	return masks, note
}

// hostSocketMasksOwned is hostSocketMasks that also says which masked
// paths were another user's socket (capped, not alwaysMasked): a fall
// there ends an --end-if-unmasked run only if the file there then is
// root's, the user's or the agent's own (runner.unmasked); a fall of any
// other socket mask ends it whatever is there by then.
func hostSocketMasksOwned(mounts []ns.Mount, hostMounts []fsrules.Mount) (masks []ns.Mount, theirs map[string]bool, note string) {
	paths, err := boundSockets()
	if errors.Is(err, hostsock.ErrUnsupported) {
		return nil, nil, "" // not Linux: no such sockets to list
	}
	if err != nil {
		return nil, nil, hostSocketsNote + fmt.Sprintf("the host's Unix sockets could not be listed (%v): those outside /run, /tmp and the home are not masked, and a host service listening on one is reachable", err)
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
	var linked []string // sockets with more than one name (hard links)
	self := uint32(hostUID())
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
			if seen[p] || !socketVisible(p, mounts) || named(p, mounts) {
				continue
			}
			seen[p] = true
			fi, err := os.Lstat(p)
			if err != nil || fi.Mode().Type() != os.ModeSocket {
				continue // unlinked or replaced: nothing to reach there
			}
			// Why: another user's sockets must not block or slow the
			// start (one mount each); past the cap they are left, and
			// said. Root's and the user's own are never left: a
			// daemon's or the user's service is what the masks are for.
			// An owner that cannot be read counts as root (masked).
			if uid := socketUID(fi); !alwaysMasked(uid, self) {
				others[uid] = append(others[uid], p)
				continue
			}
			// Why: the kernel lists a socket by the name given at
			// bind(2) only; another name of the same inode (a hard link
			// an earlier run's agent made in the workspace to a socket
			// bound there after that start, or one a host user with
			// write access to it made) is neither listed nor masked.
			// Root's and the user's only: another user's socket is
			// theirs by any name. Where the other name is cannot be
			// found without a walk; that there is one is in the inode,
			// from this lstat, at no cost: said.
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
				linked = append(linked, p)
			}
			// Why: connect(2) and sendto(2) on a socket need no write
			// access to its mount (the host's view is read-only, yet
			// reachable), and Landlock does not mediate them; a mode-0
			// file over it refuses both.
			out = append(out, ns.Mount{Kind: ns.KindMask, Path: p, FD: -1, Why: whyHostSocket})
		}
	}
	masked, left := capOthers(others)
	for _, p := range masked {
		out = append(out, ns.Mount{Kind: ns.KindMask, Path: p, FD: -1, Why: whyHostSocket})
		if theirs == nil {
			theirs = map[string]bool{}
		}
		theirs[p] = true
	}
	return out, theirs, joinNotes(leftNote(left), linkedNote(linked))
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

// linkedNote says the sockets masked at one name whose inode has others
// (hard links): those are not masked ("" if none).
func linkedNote(linked []string) string {
	if len(linked) == 0 {
		return ""
	}
	list := strings.Join(linked[:min(len(linked), 3)], ", ")
	if len(linked) > 3 {
		list += fmt.Sprintf(" and %d more", len(linked)-3)
	}
	return hostSocketsNote + fmt.Sprintf("%s masked, but each has another name (a hard link) that is not: the sandbox can connect to the socket there if it sees it; find it with find / -xdev -samefile %s, and remove the link if it is in a tree a sandbox could write", list, linked[0])
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
	left = map[uint32]int{}
	if len(others) == 0 {
		return nil, left
	}
	// Why: one user's 65,536 subordinate uids were 65,536 owners, each
	// with its own cap: that user's containers could take the whole
	// total (ranked after login users', they still pushed another
	// user's containers' sockets out). Grouped under their owner, one
	// user's sockets, whatever the uid, are capped as one.
	ranges := subOwners()
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
// owner ("" if none).
func leftNote(left map[uint32]int) string {
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
	var parts []string
	total, rest, restN := 0, 0, 0
	for i, u := range uids {
		total += left[u]
		if i >= 5 {
			rest, restN = rest+1, restN+left[u]
			continue
		}
		parts = append(parts, fmt.Sprintf("uid %d: %d", u, left[u]))
	}
	if rest > 0 {
		parts = append(parts, fmt.Sprintf("%d more uids: %d", rest, restN))
	}
	return hostSocketsNote + fmt.Sprintf("%d of other users' sockets are not masked (%s): one mount each, at most %d of one user's and %d of all other users' together, so that sockets another user binds cannot fail or slow the start; the sandbox can connect to those, which lead only to their owners' own processes", total, strings.Join(parts, ", "), socketCap, socketCapAll)
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
