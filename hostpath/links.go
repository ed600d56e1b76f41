package hostpath

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Link is one symbolic link met while resolving a path: Path is where it
// is (its parent directories symlink-free), Target what it says, as read.
type Link struct {
	Path   string `json:"path"`
	Target string `json:"target"`
}

// maxLinks bounds the links followed, as the kernel's own (40, ELOOP).
const maxLinks = 40

// ErrLoop is returned for a path with too many links on the way.
var ErrLoop = errors.New("too many levels of symbolic links")

// Resolve resolves the absolute path p like the kernel does and returns the
// final, symlink-free path and every link met on the way, in order. A
// missing component is an error wrapping os.ErrNotExist.
func Resolve(p string) (string, []Link, error) { return resolve(p, false) }

// ResolveAsNamed is Resolve for a path that may not exist yet: from the
// first component that is missing (or no directory) on, the rest is joined
// as named, and that is no error (the caller watches it there).
func ResolveAsNamed(p string) (string, []Link, error) { return resolve(p, true) }

func resolve(p string, asNamed bool) (string, []Link, error) {
	if !filepath.IsAbs(p) {
		return "", nil, fmt.Errorf("resolve %s: not an absolute path", p)
	}
	var links []Link
	cur := "/"
	// Not cleaned as text first: a ".." after a link is taken from the
	// link's target, as the kernel takes it (l/.. is not "." when l is a
	// link), so the path resolved is the one a program opening p reaches.
	rest := strings.Split(p, "/")
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur) // cur is symlink-free: its parent is its directory's
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if asNamed {
				return filepath.Join(append([]string{next}, rest...)...), links, nil
			}
			return "", links, fmt.Errorf("resolve %s: %w", p, err)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if len(links) == maxLinks {
			return "", links, fmt.Errorf("resolve %s: %w", p, ErrLoop)
		}
		t, err := os.Readlink(next)
		if err != nil {
			return "", links, fmt.Errorf("resolve %s: %w", p, err)
		}
		links = append(links, Link{Path: next, Target: t})
		if filepath.IsAbs(t) {
			cur = "/"
		}
		rest = append(strings.Split(t, "/"), rest...)
	}
	return cur, links, nil
}
