//go:build linux

package hostpath

import (
	"os"

	"golang.org/x/sys/unix"
)

// maxCachedDirs bounds the directories a Resolver holds open (one
// descriptor each); past it a walk opens and closes its own, as Walk does.
const maxCachedDirs = 512

// maxCachedBytes bounds the path text a Resolver keeps (a path can be
// longer than PATH_MAX through relative links, and 40 links of 4 KiB
// each): past it names are looked up afresh, as Walk does.
var maxCachedBytes = 4 << 20

// dirCache is what a Resolver's walks looked up: directories opened
// (O_PATH, by their symlink-free path), names' lstats and links' targets.
// The key of each is the symlink-free path Walk names the step by: the
// same text is the same name looked up in the same directory.
type dirCache struct {
	dirs  map[string]int
	stats map[string]statResult
	links map[string]string
	bytes int
	calls int // lookups made by system call (the tests count them)
}

type statResult struct {
	fi  os.FileInfo
	err error
}

func newDirCache() *dirCache {
	return &dirCache{dirs: map[string]int{}, stats: map[string]statResult{}, links: map[string]string{}}
}

func (c *dirCache) close() {
	for _, fd := range c.dirs {
		unix.Close(fd)
	}
	c.dirs = map[string]int{}
}

// room says whether key can be kept, and counts it.
func (c *dirCache) room(key string) bool {
	if c.bytes+len(key) > maxCachedBytes {
		return false
	}
	c.bytes += len(key)
	return true
}

// lookup starts a walk at /.
func (c *dirCache) lookup() (lookup, error) {
	l := &cachedLookup{c: c, fd: -1}
	if err := l.root(); err != nil {
		return nil, err
	}
	return l, nil
}

// cachedLookup is fdLookup with its lookups kept in c: the descriptor of
// the directory resolved so far is c's (owned false) or, past c's bounds,
// the walk's own, closed when the walk leaves it.
type cachedLookup struct {
	c     *dirCache
	fd    int
	owned bool
}

func (l *cachedLookup) stat(path, name string) (os.FileInfo, error) {
	if r, ok := l.c.stats[path]; ok {
		return r.fi, r.err
	}
	l.c.calls++
	var st unix.Stat_t
	var r statResult
	if err := unix.Fstatat(l.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		r.err = &os.PathError{Op: "lstat", Path: path, Err: err}
	} else {
		r.fi = newStatInfo(name, &st)
	}
	if l.c.room(path) {
		l.c.stats[path] = r
	}
	return r.fi, r.err
}

func (l *cachedLookup) readlink(path, name string) (string, error) {
	if t, ok := l.c.links[path]; ok {
		return t, nil
	}
	l.c.calls++
	t, err := (&fdLookup{fd: l.fd}).readlink(path, name)
	if err == nil && l.c.room(path+t) {
		l.c.links[path] = t
	}
	return t, err
}

// enter: as fdLookup's (O_NOFOLLOW, O_DIRECTORY).
func (l *cachedLookup) enter(path, name string) error {
	return l.open(path, name, unix.O_NOFOLLOW)
}

// up: the kernel's "..", as fdLookup's; kept under the parent's
// symlink-free path (path), which names the same directory: the walk's
// path so far is symlink-free, so its text parent is where ".." leads (at
// a mount's root too: the parent of where it is mounted).
func (l *cachedLookup) up(path string) error { return l.open(path, "..", 0) }

func (l *cachedLookup) root() error { return l.open("/", "/", 0) }

// open moves to the directory at path (name in the current one), opened
// once for the cache.
func (l *cachedLookup) open(path, name string, flags int) error {
	if fd, ok := l.c.dirs[path]; ok {
		l.set(fd, false)
		return nil
	}
	l.c.calls++
	fd, err := unix.Openat(l.fd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC|flags, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	if len(l.c.dirs) < maxCachedDirs && l.c.room(path) {
		l.c.dirs[path] = fd
		l.set(fd, false)
		return nil
	}
	l.set(fd, true)
	return nil
}

// set makes fd the current directory, closing the one left if the walk
// owned it.
func (l *cachedLookup) set(fd int, owned bool) {
	if l.owned {
		unix.Close(l.fd)
	}
	l.fd, l.owned = fd, owned
}

func (l *cachedLookup) close() {
	if l.owned {
		unix.Close(l.fd)
	}
	l.fd, l.owned = -1, false
}
