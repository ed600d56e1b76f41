//go:build !linux

package fsrules

import (
	"os"
	"syscall"
)

// listNames returns the names in the directory dir, not following a
// symlink at dir itself, and false when it cannot be listed.
func listNames(dir string) (map[string]bool, bool) {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, false
	}
	ns, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return nil, false
	}
	out := make(map[string]bool, len(ns))
	for _, n := range ns {
		out[n] = true
	}
	return out, true
}
