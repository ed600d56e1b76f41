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
