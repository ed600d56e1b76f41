package fsrules

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/dircache"
	"github.com/jail-sandbox/jail/dirnames"
)

// walkLinks calls each for every regular file under root (root included
// when it is one) that has other hard links (st_nlink >= 2), with its
// device and inode, in no particular order. Symlinks are not followed;
// other file systems mounted inside are walked (as filepath.WalkDir and
// lstat(2) by path do). skip, when set, is asked of every directory below
// root: true leaves it out. bad is told of every directory that cannot be
// listed or searched, root included (top reports which): the files in it
// are not checked. It returns how many entries it saw.
//
// This is the check's whole cost on a home whose protected directories
// hold tens of thousands of files (a browser profile, Python's user site):
// each directory is read with getdents(2) into one reused buffer, and each
// regular file is stat'ed with fstatat(2) relative to its directory's
// descriptor (no path resolution, no path string, no object per entry); a
// path is made only for the rare file that has other links. One
// descriptor is open at a time: a directory's subdirectories are opened
// by path after it is closed (a tree deeper than the descriptor limit is
// walked all the same).
func walkLinks(root string, skip func(dir string) bool, bad func(dir string, top bool, err error), each func(p string, dev, ino uint64)) int {
	return walkLinksKeys(root, skip, bad, nil, each)
}

// LinkedSockets calls each for every Unix socket file under root (root
// included when it is one) that has other hard links, with its device and
// inode: walkLinks's walk (symlinks not followed, skip asked of every
// directory below root, one getdents per directory), with an fstatat for
// each socket entry only. Package sandbox finds with it the other names of
// the host sockets it masks. It returns how many entries it saw.
//
// With all, every socket file is reported, whatever its link count.
func LinkedSockets(root string, skip func(dir string) bool, all bool, each func(p string, dev, ino uint64)) int {
	return (&linkWalk{skip: skip, each: each, sockets: true, allSockets: all}).walk(root)
}

// LinkedSocketsBounded is LinkedSockets reading at most max entries
// (max > 0); over says it stopped there. Why: a directory of millions of
// names (an agent's --write tree seen read-only by a later start) would
// make each start's search as slow as the agent likes.
func LinkedSocketsBounded(root string, skip func(dir string) bool, all bool, max int, each func(p string, dev, ino uint64)) (n int, over bool) {
	lw := &linkWalk{skip: skip, each: each, sockets: true, allSockets: all, max: max}
	n = lw.walk(root)
	return n, lw.over
}

// walkLinksFor is walkLinks looking for the inode numbers inos only:
// where a directory's entries carry their files' inode numbers (d_ino)
// the walk trusts, a regular file's entry of another number is not
// stat'ed, which leaves a getdents(2) per directory and an fstat(2) of it
// of a walk that stat'ed every file (OtherNames over a workspace of 50,000
// files: 150 ms a start, for a pack hard-linked by a local clone). Trusted
// are the devices mounts shows with a file system dinoFS trusts, in
// directories that hold no mount point of mounts (a file mounted over an
// entry is another inode than the entry's). mounts nil: every file is
// stat'ed.
func walkLinksFor(root string, inos map[uint64]bool, mounts []Mount, each func(p string, dev, ino uint64)) int {
	lw := newLinkWalkFor(inos, mounts, each)
	return lw.walk(root)
}

// newLinkWalkFor is the walk of walkLinksFor.
func newLinkWalkFor(inos map[uint64]bool, mounts []Mount, each func(p string, dev, ino uint64)) *linkWalk {
	lw := &linkWalk{each: each}
	if mounts == nil {
		return lw
	}
	lw.inos, lw.dinoDevs, lw.mountDirs = inos, map[uint64]bool{}, map[string]bool{}
	seen := map[uint64]bool{}
	for _, m := range mounts {
		var maj, min uint32
		if _, err := fmt.Sscanf(m.Dev, "%d:%d", &maj, &min); err == nil {
			// Trusted when every mount of the device says so.
			dev := unix.Mkdev(maj, min)
			lw.dinoDevs[dev] = dinoFS(m.FSType) && (!seen[dev] || lw.dinoDevs[dev])
			seen[dev] = true
		}
		if m.Point != "/" {
			lw.mountDirs[filepath.Dir(m.Point)] = true
		}
	}
	return lw
}

// dinoFS reports whether the file system of mountinfo's type t is one
// whose directory entries carry the inode number stat(2) gives their file.
// overlayfs is not one (its merged directories' d_ino may differ from
// st_ino without xino), nor are network and FUSE file systems (what a
// server says). A switch, not a map: nothing allocated at the program's
// start (tests' TestPackageInitIsLight).
func dinoFS(t string) bool {
	switch t {
	case "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs":
		return true
	}
	return false
}

// linkWalkStats counts the walks' fstatat(2)s of entries (a test seam).
var linkWalkStats atomic.Int64

// walkLinksKeys is walkLinks, telling seen of every directory it reads,
// with its key as fstat(2) gave it on the descriptor it then listed.
func walkLinksKeys(root string, skip func(dir string) bool, bad func(dir string, top bool, err error), seen func(dir string, k dircache.Key), each func(p string, dev, ino uint64)) int {
	return (&linkWalk{skip: skip, bad: bad, seen: seen, each: each}).walk(root)
}

// walk walks root: root itself when it is the kind of file lw reports (a
// regular file, or a socket with sockets), else the tree below it when it
// is a directory. It returns how many entries it saw.
func (lw *linkWalk) walk(root string) int {
	var st unix.Stat_t
	if err := unix.Lstat(root, &st); err != nil {
		return 0
	}
	want := uint32(unix.S_IFREG)
	if lw.sockets {
		want = unix.S_IFSOCK
	}
	switch st.Mode & unix.S_IFMT {
	case want:
		if st.Nlink >= 2 || lw.allSockets {
			lw.each(root, st.Dev, st.Ino)
		}
		return 1
	case unix.S_IFDIR:
	default:
		return 1
	}
	if lw.buf == nil {
		buf := dirnames.Buffer()
		defer dirnames.Release(buf)
		lw.buf = *buf
		defer func() { lw.buf = nil }()
	}
	lw.dir(root, true)
	return lw.n + 1
}

type linkWalk struct {
	// inos, when set, are the only inode numbers the walk looks for: in a
	// directory on a device of dinoDevs that holds no mount point
	// (mountDirs), a regular file's entry whose d_ino is not one of them
	// is not stat'ed (walkLinksFor).
	inos      map[uint64]bool
	dinoDevs  map[uint64]bool
	mountDirs map[string]bool
	skip      func(string) bool
	bad       func(string, bool, error)
	seen      func(string, dircache.Key)
	each      func(string, uint64, uint64)
	buf       []byte
	n         int
	// sockets: report Unix socket files with other links instead of
	// regular files (LinkedSockets).
	sockets bool
	// allSockets: every socket file, whatever its link count.
	allSockets bool
	// max bounds the entries read (0: no bound); over says it was reached.
	max  int
	over bool
}

// dir checks the files of dir, then walks its subdirectories.
func (lw *linkWalk) dir(dir string, top bool) {
	subs, err := lw.read(dir)
	if err != nil {
		if lw.bad != nil {
			lw.bad(dir, top, err)
		}
		return
	}
	for _, s := range subs {
		if lw.over {
			return
		}
		p := join(dir, s)
		if lw.skip != nil && lw.skip(p) {
			continue
		}
		lw.dir(p, false)
	}
}

// read lists dir, fstatat's its regular files (and the entries whose type
// getdents does not say), reports those with other links, and returns the
// names of its subdirectories.
func (lw *linkWalk) read(dir string) ([]string, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var subs []string
	var st unix.Stat_t
	byIno := false // entries of a regular file judged by their d_ino
	if lw.seen != nil || lw.inos != nil {
		if err := unix.Fstat(fd, &st); err != nil {
			return nil, err
		}
		if lw.seen != nil {
			lw.seen(dir, dircache.Key{Dev: st.Dev, Ino: st.Ino, Ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec})
		}
		// Why a d_ino may stand for the file's inode here: on these file
		// systems a directory entry holds the inode number stat(2) gives
		// (overlayfs, network and FUSE ones are not trusted so); only a
		// mount over the entry shows another file at its name, and a
		// directory holding a mount point has every file stat'ed.
		byIno = lw.inos != nil && lw.dinoDevs[st.Dev] && !lw.mountDirs[dir]
	}
	for {
		n, err := unix.Getdents(fd, lw.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return subs, nil
		}
		for b := lw.buf[:n]; len(b) > 0; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			if len(b) < 19 {
				return nil, unix.EIO
			}
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return nil, unix.EIO
			}
			rec := b[:reclen]
			b = b[reclen:]
			raw := rec[19:]
			if i := bytes.IndexByte(raw, 0); i >= 0 {
				raw = raw[:i]
			}
			if binary.NativeEndian.Uint64(rec[0:8]) == 0 || len(raw) == 0 || string(raw) == "." || string(raw) == ".." {
				continue
			}
			if lw.max > 0 && lw.n >= lw.max {
				lw.over = true
				return subs, nil
			}
			lw.n++
			name := unsafe.String(&raw[0], len(raw)) // valid while the buffer is
			switch rec[18] {
			case unix.DT_DIR:
				subs = append(subs, string(raw))
				continue
			case unix.DT_UNKNOWN:
			case unix.DT_REG:
				if lw.sockets || byIno && !lw.inos[binary.NativeEndian.Uint64(rec[0:8])] {
					continue
				}
			case unix.DT_SOCK:
				if !lw.sockets {
					continue
				}
			default:
				continue // a symlink, device or fifo: no file's other name
			}
			linkWalkStats.Add(1)
			if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				if err == unix.ENOENT {
					continue // gone since the listing
				}
				// Listed but not searchable (mode r without x): none of
				// its files can be checked, which the caller must hear.
				return nil, err
			}
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFDIR:
				subs = append(subs, string(raw))
			case unix.S_IFREG:
				if st.Nlink >= 2 && !lw.sockets {
					lw.each(join(dir, name), st.Dev, st.Ino)
				}
			case unix.S_IFSOCK:
				if lw.sockets && (st.Nlink >= 2 || lw.allSockets) {
					lw.each(join(dir, name), st.Dev, st.Ino)
				}
			}
		}
	}
}

// filesLinked reports whether a regular file directly in dir has other
// hard links (or dir cannot be listed, or a file in it stat'ed: the
// caller must not conclude there is none).
func filesLinked(dir string) bool {
	found := false
	buf := dirnames.Buffer()
	defer dirnames.Release(buf)
	lw := linkWalk{each: func(string, uint64, uint64) { found = true }, buf: *buf}
	if _, err := lw.read(dir); err != nil {
		return true
	}
	return found
}

// dirKey returns the key of the directory p (lstat(2): no symlink
// followed); false when p is no directory.
func dirKey(p string) (dircache.Key, bool) {
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return dircache.Key{}, false
	}
	return dircache.Key{Dev: st.Dev, Ino: st.Ino, Ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec}, true
}

// fileLinked reports whether p is a regular file with other hard links
// (or cannot be stat'ed: the caller must not conclude it has none).
func fileLinked(p string) bool {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return true
	}
	return st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink >= 2
}
