package fsrules

import (
	"golang.org/x/sys/unix"
)

// listNames returns the names in the directory dir, not following a
// symlink at dir itself (O_NOFOLLOW: a symlink fails, as does a file), and
// false when it cannot be listed. Raw getdents(2) into a buffer on the
// stack: os.File's poller registration, finalizer and close were most of
// a small directory's listing.
func listNames(dir string) (map[string]bool, bool) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	var buf [8192]byte
	var names []string
	for {
		n, err := unix.Getdents(fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if n <= 0 {
			break
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out, true
}
