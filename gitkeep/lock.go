package gitkeep

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockFile, in a store, is flocked shared by every run using the store,
// from its start's Keep to its end, and exclusive by a prune: a prune
// while another run's agent is alive could drop a copy because of a pack
// that agent made after its start (not read-only in its sandbox) and can
// still delete.
const lockFile = "lock"

// Lock takes store's lock, shared (waiting for a prune that holds it),
// creating the store's directory. The caller keeps the file open for the
// run (close-on-exec: no sandbox process inherits it) and gives it to
// Prune at the end.
func Lock(store string) (*os.File, error) {
	if err := os.MkdirAll(store, 0o700); err != nil {
		return nil, fmt.Errorf("gitkeep: %w", err)
	}
	p := filepath.Join(store, lockFile)
	for try := 0; ; try++ {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return nil, fmt.Errorf("gitkeep: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
			f.Close()
			return nil, fmt.Errorf("gitkeep: lock %s: %w", p, err)
		}
		// A sweep may have removed the store while we waited: the lock
		// then is of a file no longer there.
		a, err1 := f.Stat()
		b, err2 := os.Lstat(p)
		if err1 == nil && err2 == nil && os.SameFile(a, b) {
			return f, nil
		}
		f.Close()
		if try == 2 {
			return nil, fmt.Errorf("gitkeep: lock %s: removed while waiting", p)
		}
		if err := os.MkdirAll(store, 0o700); err != nil {
			return nil, fmt.Errorf("gitkeep: %w", err)
		}
	}
}

// exclusive makes f's shared lock exclusive, without waiting: false when
// another run holds the store (its lock may be lost then: the caller is
// done with it).
func exclusive(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
