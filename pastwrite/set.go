package pastwrite

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Set is the trees earlier runs made writable, as Load read them. A nil
// *Set holds nothing.
type Set struct {
	trees []Tree
	ids   map[id]string // identity -> the tree's path, built by Holds
}

type id struct{ dev, ino uint64 }

// Trees returns the recorded trees, least recently recorded first.
func (s *Set) Trees() []Tree {
	if s == nil {
		return nil
	}
	return s.trees
}

// Load reads the record at file. A missing file is an empty set (no run
// recorded anything yet). A file Parse refuses, or one that cannot be
// read, is an error naming the file and what to do: never a partial set,
// which would let the links of a tree it lost pass for the user's.
func Load(file string) (*Set, error) {
	trees, err := read(file)
	if err != nil {
		return nil, err
	}
	return &Set{trees: trees}, nil
}

func read(file string) ([]Tree, error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("record of trees earlier runs could write: %w", err)
	}
	defer f.Close()
	// Sized by the file's size, as os.ReadFile: one read, one buffer,
	// most times; never more than MaxSize+1 bytes (Parse refuses those).
	size := 512
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 && fi.Size() <= MaxSize {
		size = int(fi.Size()) + 1
	}
	data := make([]byte, 0, size)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("record of trees earlier runs could write: read %s: %w", file, err)
		}
		if len(data) > MaxSize {
			break
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
	trees, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("record of trees earlier runs could write, %s: %w; remove it to start afresh (jail then forgets which trees earlier runs could write)", file, err)
	}
	return trees, nil
}

// Covers reports whether p is one of the trees or lies in one: Holds,
// which answers for what lies below a tree, asked about a name below p.
// The host programs jail runs look up their PATH directories with it (a
// --write path that is itself on PATH).
func (s *Set) Covers(p string) bool {
	_, ok := s.Holds(filepath.Join(p, "x"))
	return ok
}

// Holds reports whether p (absolute) lies strictly inside a recorded
// tree, and which: by path, or by the identity of a directory above it (the
// tree reached by another name, a bind mount of it). A tree's own path is
// not inside it: replacing the tree itself takes write access to its
// parent. By identity only while the tree's own path still leads to that
// directory: a stored identity whose directory is gone may be reused by an
// unrelated new one (ext4 hands inodes out again), whose links are not an
// earlier run's.
func (s *Set) Holds(p string) (string, bool) {
	if s == nil || len(s.trees) == 0 || !filepath.IsAbs(p) {
		return "", false
	}
	p = filepath.Clean(p)
	for _, t := range s.trees {
		if strings.HasPrefix(p, t.Path+"/") {
			return t.Path, true
		}
	}
	if s.ids == nil {
		// Only now: most starts check no link.
		s.ids = make(map[id]string, len(s.trees))
		for _, t := range s.trees {
			s.ids[id{t.Dev, t.Ino}] = t.Path
		}
	}
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if i, ok := idOf(d); ok {
			if t, hit := s.ids[i]; hit {
				if now, ok := idOf(t); ok && now == i {
					return t, true
				}
			}
		}
		if d == "/" {
			return "", false
		}
	}
}

// idOf is the identity of the directory at path (symlinks followed).
func idOf(path string) (id, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return id{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return id{}, false
	}
	return id{uint64(st.Dev), uint64(st.Ino)}, true //nolint:unconvert // Dev is int32 on darwin
}
