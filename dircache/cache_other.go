//go:build !linux

package dircache

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// Elsewhere than Linux nothing is cached: every directory is read.

func lstatKey(string) (Key, bool)              { return Key{}, false }
func (c *Cache) trusted(uint64, string) bool   { return false }
func private(string, int) error                { return errors.New("dircache: Linux only") }
func readPrivate(string, int) ([]byte, error)  { return nil, errors.New("dircache: Linux only") }
func writePrivate(_, _ string, _ []byte) error { return errors.New("dircache: Linux only") }

// readKept reads dir with os.File.ReadDir: its device, no key.
func readKept(dir string, keep func(string, fs.FileMode) bool, nofollow bool) ([]Entry, int, Key, bool, error) {
	if nofollow {
		if fi, err := os.Lstat(dir); err != nil {
			return nil, 0, Key{}, false, err
		} else if !fi.IsDir() {
			return nil, 0, Key{}, false, &fs.PathError{Op: "open", Path: dir, Err: syscall.ENOTDIR}
		}
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, 0, Key{}, false, err
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return nil, 0, Key{}, false, err
	}
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, 0, Key{}, false, err
	}
	var kept []Entry
	for _, e := range ents {
		if t := e.Type(); keep(e.Name(), t) {
			kept = append(kept, Entry{name: e.Name(), typ: t & fs.ModeType, dir: dir})
		}
	}
	return kept, len(ents), Key{Dev: uint64(st.Dev)}, false, nil
}

// readLinkTexts reads each symlink's text with os.Readlink; same is false
// (nothing is cached here).
func readLinkTexts(dir string, ents []Entry, _ Key) ([]Entry, bool, error) {
	out := ents[:0]
	for _, e := range ents {
		l, err := os.Readlink(dir + "/" + e.name)
		if err != nil || l == "" {
			continue
		}
		e.link = l
		out = append(out, e)
	}
	return out, false, nil
}

// DirKey: false (no key is trusted here).
func DirKey(string) (Key, bool) { return Key{}, false }
