//go:build !linux

package ns

import (
	"fmt"
	"os"
)

// InitMain is Linux-only.
func InitMain(Hooks) {
	fmt.Fprintln(os.Stderr, "jail: the sandbox needs Linux")
	os.Exit(125)
}

// ProbeMain is Linux-only.
func ProbeMain() { os.Exit(0) }

// IsProbe is Linux-only.
func IsProbe() bool { return false }

// Probe is Linux-only.
func Probe(rootful, netHost bool) error { return fmt.Errorf("the sandbox needs Linux") }

// LoopbackUp is Linux-only.
func LoopbackUp() error { return fmt.Errorf("jail: the sandbox needs Linux") }
