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
	return AppendNames(fd, buf[:], nil, max)
}

// AppendNames appends to names the names in the open directory fd
// (without "." and ".."), read by raw getdents(2) into buf: no os.File
// (its poller check, finalizer and close). false: it cannot be read whole,
// or holds more than max entries (max <= 0: no bound).
func AppendNames(fd int, buf []byte, names []string, max int) ([]string, bool) {
	start := len(names)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return names, false
		}
		if n <= 0 {
			return names, true
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
		if max > 0 && len(names)-start > max {
			return names, false
		}
	}
}
