//go:build !linux

package homeleft

import "errors"

// Open is Linux's: the sandbox is.
func Open(pid int, home string) (Dir, error) {
	return nil, errors.ErrUnsupported
}
