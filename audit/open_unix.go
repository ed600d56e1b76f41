//go:build unix

package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
		case st.Uid != 0 && st.Uid != uid && !unmapped(st.Uid):
			return fmt.Errorf("%s is owned by uid %d: %w; set `audit` to a path in directories of yours", p, st.Uid, ErrReplaceable)
		}
		if p == "/" {
			return nil
		}
	}
}

// unmapped tells whether uid is the overflow uid standing for an owner
// outside this user namespace (jail run in a rootless container: the
// host's root-owned /tmp shows as 65534 there). Those owners are not
// anyone's here and are taken as root is; a real user with that uid (the
// initial namespace's nobody) is mapped, and refused.
func unmapped(uid uint32) bool {
	b, err := os.ReadFile("/proc/sys/kernel/overflowuid")
	if err != nil || strings.TrimSpace(string(b)) != strconv.FormatUint(uint64(uid), 10) {
		return false
	}
	m, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(m), "\n") {
		var in, out, n uint64
		if _, err := fmt.Sscan(line, &in, &out, &n); err == nil && uint64(uid) >= in && uint64(uid)-in < n {
			return false // mapped: a real user of this namespace
		}
	}
	return true
}
