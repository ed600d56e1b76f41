//go:build !linux

package getrandom

import "crypto/rand"

// Read fills b with random bytes: crypto/rand's.
func Read(b []byte) error {
	_, err := rand.Read(b)
	return err
}
