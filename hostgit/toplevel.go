package hostgit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/jail-sandbox/jail/plainfile"
)

// TopLevel returns the top level of the git work tree that contains dir, as
// git would find it from dir: the nearest directory holding a .git entry (a
// repository directory, or a gitdir file of a worktree or submodule), not
// across file systems (git's default without GIT_DISCOVERY_ACROSS_FILESYSTEM).
// dir must be absolute and symlink-free. It returns "" when dir is in no work
// tree, and dir itself when dir is the top level.
//
// home is the user's home, symlink-free: a work tree whose top level is the
// home or contains it (a dotfiles repository in ~, a repository at /) is not
// returned, reason says so; widening the workspace to it would make the
// whole home writable.
func TopLevel(dir, home string) (top, reason string) { return nearest(dir, home, isGitEntry) }

// MarkedTop is TopLevel for a check that a sandbox must not talk out of:
// any .git entry marks a work tree, also one git no longer takes. A command
// run in the work tree can delete .git/HEAD (only .git/config, hooks and
// the like are read-only inside; the .git directory itself stays, as the
// mounts on them keep it), and TopLevel would then see no work tree there.
func MarkedTop(dir, home string) (top, reason string) {
	return nearest(dir, home, func(p string) bool {
		_, err := os.Lstat(p)
		return err == nil
	})
}

// nearest walks up from dir to the first directory whose .git entry is.
func nearest(dir, home string, is func(string) bool) (top, reason string) {
	dev, ok := device(dir)
	if !ok {
		return "", ""
	}
	for d := filepath.Clean(dir); ; {
		if is(filepath.Join(d, ".git")) {
			if d == "/" || (home != "" && (d == home || within(home, d))) {
				return "", "the work tree at " + d + " holds your home"
			}
			return d, ""
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", ""
		}
		if pd, ok := device(parent); !ok || pd != dev {
			return "", "" // git stops at a file system boundary too
		}
		d = parent
	}
}

// within reports whether p lies strictly below dir.
func within(p, dir string) bool {
	if dir == "/" {
		return p != "/"
	}
	return len(p) > len(dir) && p[:len(dir)] == dir && p[len(dir)] == '/'
}

func device(p string) (uint64, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		return 0, false
	}
	return uint64(st.Dev), true
}

// isGitEntry: a .git directory with a HEAD, or a .git file that names a
// git dir ("gitdir: ..."), as git's own discovery accepts.
func isGitEntry(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil {
		return false
	}
	if fi.IsDir() {
		_, err := os.Lstat(filepath.Join(p, "HEAD"))
		return err == nil
	}
	if !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return false
	}
	// Without blocking, bounded: a FIFO swapped in after the Lstat by a
	// sandbox writing this tree would hang the start.
	b, err := plainfile.Read(p, 4096, errNotPlain)
	return err == nil && bytes.HasPrefix(b, []byte("gitdir: "))
}

// errNotPlain: a .git file or repository config that is no regular file
// is not read (a FIFO, a device, a symlink at the last component).
var errNotPlain = errors.New("not a regular file")

// maxConfig bounds a repository config read to decide the identity cache's
// key; a bigger one is not cached (git runs).
const maxConfig = 1 << 20
