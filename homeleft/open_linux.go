package homeleft

import (
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Open opens the directory home (absolute, as the sandbox sees it) in the
// sandbox whose init is pid, through /proc/PID/root. Called once the
// sandbox's mounts are made: the descriptor holds its tmpfs, which List
// can read after every process of the sandbox, init too, is gone.
func Open(pid int, home string) (Dir, error) {
	root, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("homeleft: the sandbox's root: %w", err)
	}
	defer unix.Close(root)
	// Why RESOLVE_IN_ROOT and no symlinks: the home and what lies on its
	// way are the sandbox's, whose agent may have run already; a link
	// there must not take the supervisor's reads outside it.
	fd, err := unix.Openat2(root, home, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, fmt.Errorf("homeleft: open %s: %w", home, err)
	}
	return &fdDir{os.NewFile(uintptr(fd), home)}, nil
}

type fdDir struct{ f *os.File }

func (d *fdDir) Entries(max int) ([]fs.DirEntry, error) { return d.f.ReadDir(max) }

func (d *fdDir) Sub(name string) (Dir, bool) {
	// Why: an entry the agent made; a symlink in its place is not
	// followed (RESOLVE_BENEATH keeps even a ".." inside).
	fd, err := unix.Openat2(int(d.f.Fd()), name, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, false
	}
	return &fdDir{os.NewFile(uintptr(fd), name)}, true
}

func (d *fdDir) Close() error { return d.f.Close() }
