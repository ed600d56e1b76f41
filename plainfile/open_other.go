//go:build !linux

package plainfile

import "os"

// openRegular opens path as openPlain does: the caller checks that the
// descriptor is a regular file (no O_PATH here to look before opening).
func openRegular(path string) (*os.File, error) {
	return openPlain(path)
}
