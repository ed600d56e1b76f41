package getrandom

import (
	"crypto/rand"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Read fills b with random bytes from the kernel's pool.
func Read(b []byte) error {
	for len(b) > 0 {
		// Flags 0: the urandom pool, blocking only until it is
		// initialised (never after), as crypto/rand reads it.
		n, err := unix.Getrandom(b, 0)
		switch {
		case errors.Is(err, unix.EINTR):
			continue // a signal while the pool was not yet initialised
		case err != nil:
			// ENOSYS (before Linux 3.17), or anything else: crypto/rand's
			// way (/dev/urandom), which fails the process rather than
			// give bytes it did not read.
			if _, err := rand.Read(b); err != nil {
				return fmt.Errorf("getrandom: %w", err)
			}
			return nil
		}
		b = b[n:]
	}
	return nil
}
