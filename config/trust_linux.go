package config

import (
	"errors"

	"golang.org/x/sys/unix"
)

// noLinksID is the identity of dir opened with no symlink anywhere on the
// way (openat2 RESOLVE_NO_SYMLINKS, O_PATH) and stat'ed through that fd:
// the check and the stat are one lookup, which a concurrent run's agent
// cannot split by swapping a link in between (trustrace). done is false
// only where the kernel has no openat2 (ENOSYS, before 5.6): the caller
// checks the way around a stat instead. Every other error is no identity
// (fail closed: the record is not proven, so not trusted).
func noLinksID(dir string) (id dirID, ok, done bool) {
	stepped("stat", dir) // the same instant as the path's check here
	fd, err := unix.Openat2(unix.AT_FDCWD, dir, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS,
	})
	if errors.Is(err, unix.ENOSYS) {
		return dirID{}, false, false
	}
	if err != nil {
		return dirID{}, false, true
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return dirID{}, false, true
	}
	return dirID{uint64(st.Dev), st.Ino}, true, true //nolint:unconvert // Dev's type differs by arch
}
