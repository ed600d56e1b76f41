//go:build unix

package audit

import (
	"errors"
	"os"
	"syscall"
)

const oNoFollow = syscall.O_NOFOLLOW

// lockLive takes a shared lock on a trail for as long as its writer holds
// it open: Prune leaves every trail it cannot lock exclusively alone. A
// file system without flock just goes without (then only the keep list
// and the newest-trail rule protect a live trail).
func lockLive(fd uintptr) { _ = syscall.Flock(int(fd), syscall.LOCK_SH|syscall.LOCK_NB) }

// live tells whether a writer holds path open (its lock).
func live(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}
