//go:build !linux

package hostsock

// Bound is unsupported outside Linux.
func Bound() ([]string, error) { return nil, ErrUnsupported }
