//go:build !linux

package ucount

import "path/filepath"

// sysctls reads each file by path (elsewhere than Linux nothing is read).
type sysctls struct{ dir string }

func openSysctls(dir string) sysctls               { return sysctls{dir} }
func (sysctls) close()                             {}
func (s sysctls) read(name string) (uint64, error) { return readUint(filepath.Join(s.dir, name)) }
