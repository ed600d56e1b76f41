//go:build unix

package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// CheckDirs checks every directory from the trail's (as far as it exists,
// symlinks resolved) up to /: each must be root's or this user's. The
// owner of a directory can rename the trail away and put a file of their
// own, with a chain computed afresh, at its name: the chain has no secret,
// so --verify would pass. (A directory writable by others without the
// sticky bit allows the same; it is not refused, see docs/audit-schema.md.)
func CheckDirs(path string) error { return checkDirs(path, uint32(os.Geteuid())) }

func checkDirs(path string, uid uint32) error {
	p, err := resolve(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("check the audit trail's directories: %w", err)
	}
	for ; ; p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) && p != "/" {
			continue // Create makes it, 0700
		}
		if err != nil {
			return fmt.Errorf("check the audit trail's directories: %w", err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		switch {
		case !fi.IsDir() || !ok:
			return fmt.Errorf("%s, on the audit trail's path, is not a directory", p)
		case st.Uid != 0 && st.Uid != uid:
			return fmt.Errorf("%s is owned by uid %d: %w; set `audit` to a path in directories of yours", p, st.Uid, ErrReplaceable)
		}
		if p == "/" {
			return nil
		}
	}
}
