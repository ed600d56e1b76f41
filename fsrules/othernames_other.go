//go:build !linux

package fsrules

// OtherNamesKept is OtherNames here: every directory is read (the record
// across starts is Linux's, othernames_linux.go).
func OtherNamesKept(roots []string, files map[[2]uint64]string, _ []byte, mounts []Mount, _ DirReader) map[string]string {
	return OtherNames(roots, files, mounts)
}
