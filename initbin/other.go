//go:build !linux

package initbin

import "os"

// Own is what Open's answer says when jail's own binary is to be init.
const Own = "jail's own binary"

// Embedded reports whether this binary carries the lean init.
func Embedded() bool { return false }

// Open is Linux-only: there is no init elsewhere.
func Open(string) (*os.File, string, func() string) { return nil, Own, nil }

// HasEntry is Linux-only.
func HasEntry() bool { return false }
