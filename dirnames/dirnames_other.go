//go:build !linux

package dirnames

import (
	"os"
	"syscall"
)

func names(dir string, max int) ([]string, bool) {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	ns, err := f.Readdirnames(-1)
	if err != nil || (max > 0 && len(ns) > max) {
		return nil, false
	}
	return ns, true
}
