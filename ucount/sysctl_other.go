//go:build !linux

package ucount

import (
	"os"
	"path/filepath"
)

// sysctls reads each file by path (elsewhere than Linux nothing is read).
type sysctls struct{ dir string }

func openSysctls(dir string) sysctls               { return sysctls{dir} }
func (sysctls) close()                             {}
func (s sysctls) read(name string) (uint64, error) { return readUint(filepath.Join(s.dir, name)) }

// names lists the directory, sorted.
func (s sysctls) names() ([]string, error) {
	ents, err := os.ReadDir(s.dir)
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out, err
}
