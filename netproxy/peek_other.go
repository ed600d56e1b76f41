//go:build !unix

package netproxy

import "errors"

// peekByte is unix only; elsewhere no destination is learned.
func peekByte(uintptr) (int, error) { return 0, errors.ErrUnsupported }
