package seccomp

import (
	"os"
	"strings"
)

func readFileString(p string) (string, error) {
	b, err := os.ReadFile(p)
	return strings.TrimSpace(string(b)), err
}
