//go:build !linux

package jobstop

import "os"

// Stop does nothing where jail does not run.
func Stop(<-chan os.Signal) {}

// Resumable is false where jail does not run.
func Resumable() bool { return false }
