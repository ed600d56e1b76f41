//go:build !linux

package fsrules

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/jail-sandbox/jail/dircache"
)

// walkLinksFor: see linkwalk_linux.go; here every file is stat'ed.
func walkLinksFor(root string, _ map[uint64]bool, _ []Mount, each func(p string, dev, ino uint64)) int {
	return walkLinks(root, nil, nil, each)
}

// walkLinks: see linkwalk_linux.go (this is the portable, slower walk).
func walkLinks(root string, skip func(dir string) bool, bad func(dir string, top bool, err error), each func(p string, dev, ino uint64)) int {
	n := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && bad != nil {
				bad(p, p == root, err)
			}
			return nil
		}
		n++
		if d.IsDir() {
			if p != root && skip != nil && skip(p) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode().IsRegular() && st.Nlink >= 2 {
			each(p, uint64(st.Dev), uint64(st.Ino))
		}
		return nil
	})
	return n
}

// LinkedSockets: see linkwalk_linux.go (this is the portable, slower walk).
func LinkedSockets(root string, skip func(dir string) bool, all bool, each func(p string, dev, ino uint64)) int {
	n := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		n++
		if d.IsDir() {
			if p != root && skip != nil && skip(p) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSocket == 0 {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode()&fs.ModeSocket != 0 && (st.Nlink >= 2 || all) {
			each(p, uint64(st.Dev), uint64(st.Ino))
		}
		return nil
	})
	return n
}

// walkLinksKeys is walkLinks; seen is not called (no cache here).
func walkLinksKeys(root string, skip func(dir string) bool, bad func(dir string, top bool, err error), _ func(string, dircache.Key), each func(p string, dev, ino uint64)) int {
	return walkLinks(root, skip, bad, each)
}

// filesLinked: true (nothing is cached here, so nothing is concluded).
func filesLinked(string) bool { return true }

// dirKey: none here (nothing is cached).
func dirKey(string) (dircache.Key, bool) { return dircache.Key{}, false }

// fileLinked: true (nothing is concluded here).
func fileLinked(string) bool { return true }

// LinkedSocketsBounded is LinkedSockets reading at most max entries.
func LinkedSocketsBounded(root string, skip func(dir string) bool, all bool, max int, each func(p string, dev, ino uint64)) (n int, over bool) {
	n = LinkedSockets(root, skip, all, each)
	return n, false
}
