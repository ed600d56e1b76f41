//go:build linux

package hostpath

import (
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fdLookup looks names up from a descriptor of the directory resolved so
// far (O_PATH), as the kernel does, one name at a time: each lookup costs
// the same however deep the path is (an lstat of the whole path re-walks
// it: a tree of links 800 directories deep, 40 times, took 12 s where the
// kernel's open took 14 ms), and a directory deeper than PATH_MAX (4096
// bytes), which the kernel reaches through relative links, is still
// looked up (an lstat of its path is ENAMETOOLONG).
type fdLookup struct{ fd int }

func newLookup() (lookup, error) {
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: "/", Err: err}
	}
	return &fdLookup{fd: fd}, nil
}

func (l *fdLookup) stat(path, name string) (os.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(l.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	return newStatInfo(name, &st), nil
}

func (l *fdLookup) readlink(path, name string) (string, error) {
	for n := 256; ; n *= 2 {
		b := make([]byte, n)
		m, err := unix.Readlinkat(l.fd, name, b)
		if err != nil {
			return "", &os.PathError{Op: "readlink", Path: path, Err: err}
		}
		if m < n {
			return string(b[:m]), nil
		}
	}
}

// enter moves into the directory name (just looked up): O_NOFOLLOW and
// O_DIRECTORY, so a name swapped for a link or a file meanwhile fails
// rather than leading elsewhere.
func (l *fdLookup) enter(path, name string) error {
	return l.open(path, name, unix.O_NOFOLLOW)
}

// up moves to the parent: the kernel's "..", which at a mount's root is
// the parent of where it is mounted, as the symlink-free path's text has
// it.
func (l *fdLookup) up(path string) error { return l.open(path, "..", 0) }

func (l *fdLookup) root() error { return l.open("/", "/", 0) }

func (l *fdLookup) open(path, name string, flags int) error {
	fd, err := unix.Openat(l.fd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC|flags, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	unix.Close(l.fd)
	l.fd = fd
	return nil
}

func (l *fdLookup) close() { unix.Close(l.fd) }

// statInfo is an os.FileInfo from an fstatat (Sys is a *syscall.Stat_t,
// as os.Lstat's).
type statInfo struct {
	name string
	st   syscall.Stat_t
}

func newStatInfo(name string, st *unix.Stat_t) *statInfo {
	// The same kernel struct on every architecture, generated twice
	// (package syscall's and x/sys/unix's): copied whole, not field by
	// field (their Go types differ between architectures).
	return &statInfo{name: name, st: *(*syscall.Stat_t)(unsafe.Pointer(st))}
}

// Both Stat_t types are the same size, or this does not compile.
var (
	_ [unsafe.Sizeof(syscall.Stat_t{}) - unsafe.Sizeof(unix.Stat_t{})]byte
	_ [unsafe.Sizeof(unix.Stat_t{}) - unsafe.Sizeof(syscall.Stat_t{})]byte
)

func (fi *statInfo) Name() string       { return fi.name }
func (fi *statInfo) Size() int64        { return fi.st.Size }
func (fi *statInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }
func (fi *statInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *statInfo) Sys() any           { return &fi.st }

// Mode is os.Lstat's mode for the same stat (os's fillFileStatFromSys).
func (fi *statInfo) Mode() os.FileMode {
	m := os.FileMode(fi.st.Mode & 0o777)
	switch fi.st.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= os.ModeDevice
	case syscall.S_IFCHR:
		m |= os.ModeDevice | os.ModeCharDevice
	case syscall.S_IFDIR:
		m |= os.ModeDir
	case syscall.S_IFIFO:
		m |= os.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= os.ModeSymlink
	case syscall.S_IFSOCK:
		m |= os.ModeSocket
	}
	if fi.st.Mode&syscall.S_ISGID != 0 {
		m |= os.ModeSetgid
	}
	if fi.st.Mode&syscall.S_ISUID != 0 {
		m |= os.ModeSetuid
	}
	if fi.st.Mode&syscall.S_ISVTX != 0 {
		m |= os.ModeSticky
	}
	return m
}
