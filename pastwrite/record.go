package pastwrite

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/jail-sandbox/jail/internal/replacefile"
)

// Record adds trees (absolute, symlink-free directories a run is about to
// make writable) to the record at file, creating it (0600) and its
// directory (0700) as needed. Nothing is written when every tree is
// recorded already with its identity now, which is most starts: in seen
// (what the caller loaded from file, nil: read it), else in the file. When it
// writes, it keeps the file bounded: trees whose directory is gone are
// dropped (one whose path leads to another directory is kept, its
// identity renewed), the ones recorded
// now go last, and only the last MaxTrees stay. Writers are serialized by
// a lock beside the file, and the file is replaced whole (a reader sees
// the old record or the new one). A record Parse refuses is an error,
// left as it is.
func Record(file string, seen *Set, trees []string) error {
	var add []Tree
	for _, p := range trees {
		if validPath(p) != nil {
			continue
		}
		if i, ok := idOf(p); ok {
			add = append(add, Tree{Path: p, Dev: i.dev, Ino: i.ino})
		}
	}
	if len(add) == 0 {
		return nil
	}
	if seen != nil && known(seen.trees, add) {
		return nil
	}
	old, err := read(file)
	if err != nil {
		return err
	}
	if known(old, add) {
		return nil
	}
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("record of trees earlier runs could write: %w", err)
	}
	lock, err := os.OpenFile(file+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("record of trees earlier runs could write: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("record of trees earlier runs could write: lock %s: %w", lock.Name(), err)
	}
	// Again under the lock: another run may have written since.
	if old, err = read(file); err != nil {
		return err
	}
	if known(old, add) {
		return nil
	}
	return write(file, merge(old, add))
}

// known reports whether every tree of add is in old with the same
// identity. A scan, not a map: add is a run's few trees.
func known(old, add []Tree) bool {
	for _, t := range add {
		if !slices.Contains(old, t) {
			return false
		}
	}
	return true
}

// merge is old without the trees gone or replaced and without add's paths,
// then add, trimmed to the last MaxTrees.
func merge(old, add []Tree) []Tree {
	adding := make(map[string]bool, len(add))
	for _, t := range add {
		adding[t.Path] = true
	}
	out := make([]Tree, 0, len(old)+len(add))
	for _, t := range old {
		if adding[t.Path] {
			continue
		}
		// Why: a tree whose directory is gone holds no link an earlier
		// run made; dropping it bounds the file. One whose path leads to
		// another directory now is kept, with that one's identity: a
		// device numbered anew (btrfs at each mount) is the same tree,
		// and keeping a replaced one refuses more links, never fewer.
		i, ok := idOf(t.Path)
		if !ok {
			continue
		}
		t.Dev, t.Ino = i.dev, i.ino
		out = append(out, t)
	}
	seen := map[string]bool{}
	for _, t := range add {
		if !seen[t.Path] {
			seen[t.Path] = true
			out = append(out, t)
		}
	}
	if len(out) > MaxTrees {
		out = out[len(out)-MaxTrees:]
	}
	// And within MaxSize, which Parse refuses past (long quoted paths).
	size := len(Header) + 1
	for _, t := range out {
		size += len(Format([]Tree{t})) - len(Header) - 1
	}
	for size > MaxSize && len(out) > 0 {
		size -= len(Format(out[:1])) - len(Header) - 1
		out = out[1:]
	}
	return out
}

// write replaces file with trees, through a temporary file in its
// directory, synced before the rename.
func write(file string, trees []Tree) error {
	if err := replacefile.Write(file, "", Format(trees), true); err != nil {
		return fmt.Errorf("record of trees earlier runs could write: %w", err)
	}
	return nil
}
