package hostpath

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// resolve walks p, collecting its links; a name it cannot look up is an
// error unless asNamed.
func resolve(p string, asNamed bool) (string, []Link, error) {
	return resolveBy(p, asNamed, newLookup)
}

// resolveBy is resolve with the lookups of newLook.
func resolveBy(p string, asNamed bool, newLook func() (lookup, error)) (string, []Link, error) {
	var links []Link
	final, err := walk(p, newLook, func(s Step) error {
		if s.Err != nil && !asNamed {
			return fmt.Errorf("resolve %s: %w", p, s.Err)
		}
		if s.Link() {
			links = append(links, Link{Path: s.Path, Target: s.Target})
		}
		return nil
	})
	if err != nil {
		return "", links, err
	}
	return final, links, nil
}

// Abs makes p absolute, against the current directory, without cleaning
// it as text (filepath.Abs would): a ".." after a symlink is the parent of
// the link's target, as the kernel takes it, so the path Walk resolves is
// the one a program opening p reaches.
func Abs(p string) (string, error) {
	if filepath.IsAbs(p) {
		return p, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("make %s absolute: %w", p, err)
	}
	return wd + "/" + p, nil
}

// Step is one name looked up while Walk resolves a path.
type Step struct {
	// Path is where the name is: the symlink-free path resolved so far
	// joined with the name.
	Path string
	// Info is the name's Lstat (nil when Err is set): a directory, a
	// symbolic link (about to be followed) or anything else.
	Info os.FileInfo
	// Target is what a symbolic link says, as read.
	Target string
	// Err is why the name could not be looked up (wrapping
	// os.ErrNotExist when it is missing, syscall.ENOTDIR when what the
	// path led to so far is no directory): the walk ends at this step.
	Err error
}

// Link tells whether the step is a symbolic link.
func (s Step) Link() bool { return s.Info != nil && s.Info.Mode()&os.ModeSymlink != 0 }

// Walk resolves the absolute path p like the kernel does, one name at a
// time, and calls visit with each name it looks up, in order: every
// directory on the way, every symbolic link (before it is followed, its
// target read) and the last name. "." and "" are skipped; ".." is not
// looked up but taken from the symlink-free path so far, as the kernel
// takes it (l/.. is the directory above l's target, not the one holding
// l), so the path p is never cleaned as text. An error visit returns ends
// the walk and Walk returns it as is. A name that cannot be looked up ends
// the walk at that step (Step.Err): when visit returns nil for it, Walk
// returns the path as named from there on (the rest joined to it). Walk
// returns the final path, symlink-free as far as it exists, and an error
// wrapping ErrLoop after more than 40 links.
func Walk(p string, visit func(Step) error) (string, error) {
	return walk(p, newLookup, visit)
}

// walk is Walk with the lookups of newLook.
func walk(p string, newLook func() (lookup, error), visit func(Step) error) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("resolve %s: not an absolute path", p)
	}
	look, err := newLook()
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", p, err)
	}
	defer look.close()
	links := 0
	cur := "/"
	notDir := false // cur is no directory: whatever follows it fails
	rest := strings.Split(p, "/")
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		if notDir {
			// As the kernel: f/.., f/. and f/ are ENOTDIR for a file f, not
			// f's directory or f (".." would otherwise be taken as text).
			next := filepath.Join(cur, c)
			if err := visit(Step{Path: next, Err: &os.PathError{Op: "lstat", Path: next, Err: syscall.ENOTDIR}}); err != nil {
				return "", err
			}
			return filepath.Join(append([]string{next}, rest...)...), nil
		}
		switch c {
		case "", ".":
			continue
		case "..":
			cur = parent(cur) // cur is symlink-free: its parent is its directory's
			if err := look.up(cur); err != nil {
				return "", fmt.Errorf("resolve %s: %w", p, err)
			}
			continue
		}
		next := join(cur, c)
		fi, err := look.stat(next, c)
		if err != nil {
			if err := visit(Step{Path: next, Err: err}); err != nil {
				return "", err
			}
			return filepath.Join(append([]string{next}, rest...)...), nil
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			if err := visit(Step{Path: next, Info: fi}); err != nil {
				return "", err
			}
			cur, notDir = next, !fi.IsDir()
			if !notDir {
				if err := look.enter(next, c); err != nil {
					return "", fmt.Errorf("resolve %s: %w", p, err)
				}
			}
			continue
		}
		if links == maxLinks {
			return "", fmt.Errorf("resolve %s: %w", p, ErrLoop)
		}
		links++
		t, err := look.readlink(next, c)
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", p, err)
		}
		if err := visit(Step{Path: next, Info: fi, Target: t}); err != nil {
			return "", err
		}
		if filepath.IsAbs(t) {
			cur = "/"
			if err := look.root(); err != nil {
				return "", fmt.Errorf("resolve %s: %w", p, err)
			}
		}
		rest = append(strings.Split(t, "/"), rest...)
	}
	return cur, nil
}

// join is filepath.Join of the clean path dir and a plain name, without
// cleaning dir again (Walk's cost stays a name's, however deep dir is).
func join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// parent is filepath.Dir of a clean absolute path, without cleaning it.
func parent(p string) string {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return p[:i]
	}
	return "/"
}

// lookup looks up the names Walk meets, in the directory resolved so far
// (cur: its path is given too, for errors and where a lookup needs it).
type lookup interface {
	stat(path, name string) (os.FileInfo, error) // lstat of name in cur
	readlink(path, name string) (string, error)  // the link name in cur
	enter(path, name string) error               // cur = the directory name in cur
	up(path string) error                        // cur = cur's parent, at path
	root() error                                 // cur = /
	close()
}
