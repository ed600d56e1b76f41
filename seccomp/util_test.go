package seccomp

import (
	"os"
	"strings"
)

func readFileString(p string) (string, error) {
	b, err := os.ReadFile(p)
	return strings.TrimSpace(string(b)), err
}

// nativeArch is archNative with its AUDIT_ARCH value.
func nativeArch() (*archInfo, uint32, error) {
	a, err := archNative()
	if err != nil {
		return nil, 0, err
	}
	return a, a.Audit, nil
}

// mustNr is the number of a syscall the tables must have (0 if missing:
// the test's comparison then fails).
func (a *archInfo) mustNr(name string) int {
	n, _ := a.nr(name)
	return n
}
