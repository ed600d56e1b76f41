//go:build unix

package audit

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/hostpath"
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

// CheckDirs checks every directory the trail's path goes through, from /
// down to the trail's (as far as it exists), and every symlink on the way:
// each must be root's or this user's. The owner of a directory can rename
// the trail away and put a file of their own, with a chain computed
// afresh, at its name: the chain has no secret, so --verify would pass.
// The owner of a symlink on the way (or of the directory holding it) can
// point it elsewhere after the check, at a directory of theirs holding a
// forged trail: the place the trail was checked in is no longer where its
// path leads. A directory writable by group or others without the sticky
// bit is refused too: whoever may write to it may do what its owner may.
// In a sticky one (/tmp) another user may take the trail's name first,
// which Create's O_EXCL refuses, or make a missing directory on its path,
// which Writer.CheckPlace refuses once the trail exists.
func CheckDirs(path string) error { return checkDirs(path, uint32(os.Geteuid())) }

func checkDirs(path string, uid uint32) error {
	// Not cleaned as text (hostpath.Abs): mine/l/.. is the directory above
	// l's target, as the kernel opening the trail takes it, not mine.
	abs, err := hostpath.Abs(path)
	if err != nil {
		return fmt.Errorf("check the audit trail's directories: %w", err)
	}
	// The trail's directory as named (the text before its last name, not
	// filepath.Dir, which cleans it too).
	dir := abs[:strings.LastIndex(abs, "/")+1]
	owned := func(p string, st *syscall.Stat_t, what string) error {
		if st.Uid != 0 && st.Uid != uid && !unmapped(st.Uid) {
			return fmt.Errorf("%s%s is owned by uid %d: %w; set `audit` to a path in directories of yours", p, what, st.Uid, ErrReplaceable)
		}
		return nil
	}
	var st syscall.Stat_t
	if err := syscall.Lstat("/", &st); err != nil {
		return fmt.Errorf("check the audit trail's directories: %w", err)
	}
	if err := owned("/", &st, ""); err != nil {
		return err
	}
	// Resolved one name at a time (hostpath.Walk, the kernel's way), not
	// by EvalSymlinks: a symlink's owner, and the directories the path goes
	// through to reach it, count as much as the directories it leads to.
	var refused error // the visit's own verdict, returned as is
	_, err = hostpath.Walk(dir, func(s hostpath.Step) error {
		refused = checkStep(s, owned)
		return refused
	})
	if refused != nil {
		return refused
	}
	if err != nil { // the walk's: a loop, an unreadable link
		return fmt.Errorf("check the audit trail's directories: %w", err)
	}
	return nil
}

// checkStep checks one name on the trail's path (checkDirs' rules).
func checkStep(s hostpath.Step, owned func(string, *syscall.Stat_t, string) error) error {
	if errors.Is(s.Err, syscall.ENOENT) {
		return nil // Create makes it and what follows, 0700, in its directory (checked)
	} else if s.Err != nil {
		return fmt.Errorf("check the audit trail's directories: %w", s.Err)
	}
	st, ok := s.Info.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("check the audit trail's directories: %s: no owner to check", s.Path)
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		if err := owned(s.Path, st, ""); err != nil {
			return err
		}
		// Whoever may write to a directory may rename or remove any
		// entry of it (the trail, a directory or symlink on its path)
		// unless the sticky bit keeps that to the entry's owner.
		if st.Mode&0o022 != 0 && st.Mode&syscall.S_ISVTX == 0 {
			return fmt.Errorf("%s is writable by others (mode %#o, not sticky): %w; set `audit` to a path in directories only you can write", s.Path, st.Mode&0o7777, ErrReplaceable)
		}
	case syscall.S_IFLNK:
		// Its directory was checked (the step before): its owner
		// could replace it. Its own owner can point it elsewhere.
		if err := owned(s.Path, st, " (a symlink on the audit trail's path)"); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%s, on the audit trail's path, is not a directory", s.Path)
	}
	return nil
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

// CheckPlace is CheckDirs again once the trail exists, and that its path
// leads to the file w writes: between CheckDirs and the trail's creation,
// another user could make a missing directory of the path (in a shared
// one such as /tmp) or point a name on it elsewhere, and the trail would
// be created in a place of theirs that the first check never saw.
func (w *Writer) CheckPlace() error {
	if err := CheckDirs(w.path); err != nil {
		return err
	}
	var at, own syscall.Stat_t
	if err := syscall.Lstat(w.path, &at); err != nil {
		return fmt.Errorf("check the audit trail: %w", &os.PathError{Op: "lstat", Path: w.path, Err: err})
	}
	if err := syscall.Fstat(int(w.f.Fd()), &own); err != nil {
		return fmt.Errorf("check the audit trail: %w", &os.PathError{Op: "fstat", Path: w.path, Err: err})
	}
	if at.Dev != own.Dev || at.Ino != own.Ino {
		return fmt.Errorf("%s is not the trail jail created: a directory or symlink on its path changed meanwhile: %w", w.path, ErrReplaceable)
	}
	return nil
}
