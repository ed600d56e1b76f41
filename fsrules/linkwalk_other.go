//go:build !linux

package fsrules

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

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
