package ucount

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// sysctls reads the files of one sysctl directory through a descriptor of
// it: an openat(2), a read and a close per file instead of os.ReadFile's
// path walk through /proc/sys, fstat and second read (a dozen files at
// every start). Without the descriptor (the directory could not be
// opened) each file is read by path.
type sysctls struct {
	dir string
	fd  int
}

func openSysctls(dir string) sysctls {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		fd = -1
	}
	return sysctls{dir, fd}
}

func (s sysctls) close() {
	if s.fd >= 0 {
		unix.Close(s.fd)
	}
}

// read returns the number in the file name of the directory.
func (s sysctls) read(name string) (uint64, error) {
	p := filepath.Join(s.dir, name)
	if s.fd < 0 {
		return readUint(p)
	}
	fd, err := unix.Openat(s.fd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	var buf [64]byte // a uint64 is 20 digits; more is no number
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, &fs.PathError{Op: "read", Path: p, Err: err}
		}
		if m == 0 {
			break
		}
		n += m
		if buf[n-1] == '\n' {
			// A sysctl's handler writes its whole value, newline last,
			// in one read: the read of the end (a second call into the
			// handler per file) is saved. A file whose read ends
			// elsewhere is read to its end.
			break
		}
	}
	return parseUint(p, buf[:n])
}

// names lists the directory through its descriptor, sorted (os.ReadDir's
// order): the directory is opened once for the listing and the reads, not
// once more by path. Without the descriptor it is os.ReadDir's listing,
// and its error.
func (s sysctls) names() ([]string, error) {
	if s.fd < 0 {
		ents, err := os.ReadDir(s.dir)
		if err != nil {
			return nil, err
		}
		out := make([]string, 0, len(ents))
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out, nil
	}
	var out []string
	var buf [4096]byte
	for {
		n, err := unix.Getdents(s.fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: s.dir, Err: err}
		}
		if n <= 0 {
			break
		}
		_, _, out = unix.ParseDirent(buf[:n], -1, out) // no "." and ".."
	}
	slices.Sort(out)
	return out, nil
}
