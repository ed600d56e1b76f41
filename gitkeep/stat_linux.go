package gitkeep

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
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
