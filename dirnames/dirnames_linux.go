package dirnames

import "golang.org/x/sys/unix"

// names reads dir by raw getdents(2) into a buffer on the stack: os.File's
// poller registration, finalizer and close were most of a small
// directory's listing.
func names(dir string, max int) ([]string, bool) {
	// O_NOFOLLOW: a symlink at dir fails (ELOOP), as does a file.
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	var buf [8192]byte
	var ns []string
	for {
		n, err := unix.Getdents(fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if n <= 0 {
			return ns, true
		}
		_, _, ns = unix.ParseDirent(buf[:n], -1, ns)
		if max > 0 && len(ns) > max {
			return nil, false
		}
	}
}
