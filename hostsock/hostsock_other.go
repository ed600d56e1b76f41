//go:build !linux

package hostsock

// Bound is unsupported outside Linux.
func Bound() ([]string, error) { return nil, ErrUnsupported }

// BoundFiles is unsupported outside Linux.
func BoundFiles() ([]string, *Files, error) { return nil, nil, ErrUnsupported }
