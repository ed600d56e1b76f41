//go:build !linux

package sandbox

import (
	"fmt"
	"os"

	"jail/policy"
)

// Run is Linux-only: the sandbox is built from Linux kernel features.
func Run(p *policy.Policy) int {
	fmt.Fprintln(os.Stderr, "jail: the sandbox needs Linux (user namespaces, Landlock, seccomp); on macOS or Windows run it in a Linux VM or WSL2")
	return ExitSetup
}
