package gitkeep

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/dirnames"
)

// linkInfo is a file's link count and ctime (ns): the ctime of a store's
// object is when its link count last changed or a name of it was renamed,
// so, when the store's is its only link, at or after the workspace's own
// link to it went (the store's link was made before); with other links it
// says nothing of when (unlinkedSince). The agent cannot set it back.
func linkInfo(fi os.FileInfo) (nlink uint64, ctime int64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Nlink), st.Ctim.Sec*1e9 + st.Ctim.Nsec, true
}

// inode is fi's inode number, 0 where none is known.
func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// stampOf is fi's device, inode and change time (ns), 0s where none is
// known (Stamps.add stamps nothing then).
func stampOf(fi os.FileInfo) (dev, ino uint64, ctime int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino), st.Ctim.Sec*1e9 + st.Ctim.Nsec
	}
	return 0, 0, 0
}

// touch sets f's times to now, as futimens(fd, NULL) does (utimensat with
// no path), and reads its device and change time back (Stamps.Settle).
func touch(f *os.File) (dev uint64, ctime int64, ok bool) {
	fd := int(f.Fd())
	if _, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(fd), 0, 0, 0, 0, 0); e != 0 {
		return 0, 0, false
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return 0, 0, false
	}
	return uint64(st.Dev), st.Ctim.Nano(), true
}

// birth is when dir was made (statx's btime, ns), where the file system
// keeps one: set by the kernel, no one sets it back.
func birth(dir string) (int64, bool) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, dir, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BTIME, &st); err != nil || st.Mask&unix.STATX_BTIME == 0 {
		return 0, false
	}
	return st.Btime.Sec*1e9 + int64(st.Btime.Nsec), true
}

// repoID is git dir gitDir's identity: its device, inode and birth time
// (where the file system keeps one), "" when it cannot be read. A store is
// named by its repository's path; a repository the agent makes at a path
// a user's repository left (removed in a run) is another directory: a new
// inode, a new birth time (neither set by anyone; an inode number freed
// and taken again differs in its birth time).
func repoID(gitDir string) string {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, gitDir, 0, unix.STATX_INO|unix.STATX_BTIME, &st); err != nil {
		return ""
	}
	id := fmt.Sprintf("%d:%d %d", unix.Mkdev(st.Dev_major, st.Dev_minor), st.Ino, 0)
	if st.Mask&unix.STATX_BTIME != 0 {
		id = fmt.Sprintf("%d:%d %d", unix.Mkdev(st.Dev_major, st.Dev_minor), st.Ino, st.Btime.Sec*1e9+int64(st.Btime.Nsec))
	}
	return id
}

// ctimeAt is the change time (unix ns) of name in directory dirfd, no
// link followed; false when it cannot be read.
func ctimeAt(dirfd int, name string) (int64, bool) {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, false
	}
	return st.Ctim.Nano(), true
}

// fileStat is what the end's look at loose objects needs of a file
// (ForgedLoose), taken without a FileInfo: 800 of them an end in a
// repository of 555 loose objects.
type fileStat struct {
	mode  uint32 // S_IFMT bits
	size  int64
	ctime int64 // ns
	ino   uint64
	dev   uint64
}

func (s fileStat) regular() bool { return s.mode == unix.S_IFREG }
func (s fileStat) dir() bool     { return s.mode == unix.S_IFDIR }

// openDirAt opens dir for lstatAt, following links as a path through it
// is followed (git reaches a linked objects directory's files); -1 when
// it cannot be opened: lstatAt then takes the whole path.
func openDirAt(dir string) int {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return fd
}

func closeDirAt(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}

// lstatAt is lstat(2) of rel in the directory dirfd (openDirAt), or of
// full when dirfd is -1: the same file, its last name not followed,
// without walking the repository's path again for each.
func lstatAt(dirfd int, rel, full string) (fileStat, bool) {
	var st unix.Stat_t
	var err error
	if dirfd >= 0 {
		err = unix.Fstatat(dirfd, rel, &st, unix.AT_SYMLINK_NOFOLLOW)
	} else {
		err = unix.Lstat(full, &st)
	}
	if err != nil {
		return fileStat{}, false
	}
	return fileStat{mode: st.Mode & unix.S_IFMT, size: st.Size, ctime: st.Ctim.Nano(), ino: st.Ino, dev: uint64(st.Dev)}, true
}

// namesAt appends to names the names in directory rel of dirfd (openDirAt;
// full when it is -1), links followed as a path through them is, read by
// raw getdents(2) into buf: an os.ReadDir each (its file's poller check,
// finalizer, entries and sort) was most of the end's listing of a store's
// 256 fan-out directories. false: it cannot be read whole.
func namesAt(dirfd int, rel, full string, buf []byte, names []string) ([]string, bool) {
	var fd int
	var err error
	if dirfd >= 0 {
		fd, err = unix.Openat(dirfd, rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	} else {
		fd, err = unix.Open(full, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return names, false
	}
	defer unix.Close(fd)
	return dirnames.AppendNames(fd, buf, names, 0)
}

// dirStamp is the mtime (ns) and inode of name in dirfd, no link
// followed, and whether it is a directory.
func dirStamp(dirfd int, name string) (mtime int64, ino uint64, isDir bool) {
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return 0, 0, false
	}
	return st.Mtim.Nano(), st.Ino, true
}
