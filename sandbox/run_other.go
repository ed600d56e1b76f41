//go:build !linux

package sandbox

import (
	"fmt"
	"io"
	"os"

	"github.com/jail-sandbox/jail/policy"
)

// Run is Linux-only: the sandbox is built from Linux kernel features.
func Run(p *policy.Policy) int {
	fmt.Fprintln(os.Stderr, "jail: the sandbox needs Linux (user namespaces, Landlock, seccomp); on macOS or Windows run it in a Linux VM or WSL2")
	return ExitSetup
}

// RunChecked is Linux-only, as Run.
func RunChecked(p *policy.Policy) int { return Run(p) }

// Doctor is Linux-only.
func Doctor(w io.Writer) int {
	fmt.Fprintln(w, "jail needs Linux")
	return 1
}

// PS is Linux-only.
func PS(w io.Writer) int { return Doctor(w) }

// Kill is Linux-only.
func Kill(ids []string, now bool, w io.Writer) int { return Doctor(w) }

// AppArmorProfile is Linux-only.
func AppArmorProfile(w, errw io.Writer) int { return Doctor(errw) }

// GC is Linux-only.
func GC(w io.Writer) int { return Doctor(w) }

// runningTrail knows no running sandbox outside Linux.
func runningTrail(string) string { return "" }

// KillWhy is Linux-only.
func KillWhy(ids []string, now bool, reason string, w io.Writer) int { return Doctor(w) }

// Entry is Linux-only.
type Entry struct {
	ID, Name, Log string
	Pid           int
}

// Find is Linux-only.
func Find(name string) (Entry, error) { return Entry{}, fmt.Errorf("the sandbox needs Linux") }

// Alive is Linux-only.
func Alive(pid int, id string) bool { return false }

// ValidName is Linux-only.
func ValidName(name string) error { return nil }

// TerminalFilter is Linux-only.
func TerminalFilter(allow []string, w io.Writer) (io.Writer, error) { return w, nil }

// RunDir is Linux-only.
func RunDir() (string, error) { return "", fmt.Errorf("the sandbox needs Linux") }
