package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// This file: filepath.EvalSymlinks for the many paths one programRoots call
// resolves (each PATH directory, each symlink's target, the command), with
// one lstat and one readlink per path for the whole call.
//
// The PATH entries share their prefixes (/root, /root/.pyenv, /usr,
// /usr/local: 13 entries took 37 lstats here, 21 of them a path already
// lstat'ed for an earlier entry) and the candidates' targets lead through
// the same /bin and /usr/bin. The algorithm is filepath's walkSymlinks for
// Unix paths, step for step (its ".." after a symlink is the target's
// parent, not lexical), with os.Lstat and os.Readlink answered from what
// this resolver already asked: its answers are EvalSymlinks' for the file
// system as it was at each path's first look (TestSymResolverSameAsEval).
// A resolver lives for one call: a snapshot of microseconds, as each
// EvalSymlinks is a walk of its own; what the plan shows is mounted by
// path later either way.

// symResolver resolves symlinks as filepath.EvalSymlinks, remembering the
// lstat and readlink of each path it looked at.
type symResolver struct {
	lstats map[string]symLstat
	links  map[string]symLink
}

type symLstat struct {
	mode fs.FileMode
	err  error
}

type symLink struct {
	text string
	err  error
}

func newSymResolver() *symResolver {
	return &symResolver{lstats: map[string]symLstat{}, links: map[string]symLink{}}
}

func (r *symResolver) lstat(p string) (fs.FileMode, error) {
	if e, ok := r.lstats[p]; ok {
		return e.mode, e.err
	}
	var e symLstat
	fi, err := os.Lstat(p)
	if err != nil {
		e.err = err
	} else {
		e.mode = fi.Mode()
	}
	r.lstats[p] = e
	return e.mode, e.err
}

func (r *symResolver) readlink(p string) (string, error) {
	if e, ok := r.links[p]; ok {
		return e.text, e.err
	}
	t, err := os.Readlink(p)
	r.links[p] = symLink{t, err}
	return t, err
}

// eval is filepath.EvalSymlinks(path) (Unix: no volume names).
func (r *symResolver) eval(path string) (string, error) {
	volLen := 0
	if len(path) > 0 && path[0] == '/' {
		volLen = 1
	}
	vol := path[:volLen]
	dest := vol
	linksWalked := 0
	for start, end := volLen, volLen; start < len(path); start = end {
		for start < len(path) && path[start] == '/' {
			start++
		}
		end = start
		for end < len(path) && path[end] != '/' {
			end++
		}
		switch {
		case end == start:
			// No more components.
		case path[start:end] == ".":
			continue
		case path[start:end] == "..":
			// Back to the previous component of what is resolved so far.
			var i int
			for i = len(dest) - 1; i >= volLen; i-- {
				if dest[i] == '/' {
					break
				}
			}
			if i < volLen || dest[i+1:] == ".." {
				if len(dest) > volLen {
					dest += "/"
				}
				dest += ".."
			} else {
				dest = dest[:i]
			}
			continue
		}
		if end == start {
			break
		}
		if len(dest) > 0 && dest[len(dest)-1] != '/' {
			dest += "/"
		}
		dest += path[start:end]
		mode, err := r.lstat(dest)
		if err != nil {
			return "", err
		}
		if mode&fs.ModeSymlink == 0 {
			if !mode.IsDir() && end < len(path) {
				return "", syscall.ENOTDIR
			}
			continue
		}
		linksWalked++
		if linksWalked > 255 {
			return "", errors.New("EvalSymlinks: too many links")
		}
		link, err := r.readlink(dest)
		if err != nil {
			return "", err
		}
		path = link + path[end:]
		if len(link) > 0 && link[0] == '/' {
			dest = "/"
			end = 1
			vol = "/"
			volLen = 1
		} else {
			// Relative: in place of the link's own name.
			var i int
			for i = len(dest) - 1; i >= volLen; i-- {
				if dest[i] == '/' {
					break
				}
			}
			if i < volLen {
				dest = vol
			} else {
				dest = dest[:i]
			}
			end = 0
		}
	}
	return filepath.Clean(dest), nil
}
