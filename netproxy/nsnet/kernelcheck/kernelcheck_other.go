//go:build !linux

package kernelcheck

import "runtime"

// Available is false off Linux.
func Available() (ok bool, reason string) {
	return false, "transparent egress needs Linux network namespaces (" + runtime.GOOS + ")"
}
