//go:build !linux

package landlock

import (
	"errors"
	"fmt"
)

// errNotLinux is returned by Apply on systems without Landlock.
var errNotLinux = errors.New("landlock: Landlock is a Linux feature; run jail on Linux 5.13 or newer")

// ABI returns 0: Landlock exists only on Linux.
func ABI() int { return 0 }

// Supported reports false: Landlock exists only on Linux.
func Supported() bool { return false }

// Apply fails: there is no Landlock outside Linux.
func (r Rules) Apply() (Report, error) {
	rep := Report{Missing: missing(r, 0)}
	if err := checkRequire(r, 0); err != nil {
		return rep, err
	}
	return rep, fmt.Errorf("apply: %w", errNotLinux)
}

// ApplyAfterNoNewPrivs fails as Apply does.
func (r Rules) ApplyAfterNoNewPrivs() (Report, error) { return r.Apply() }
