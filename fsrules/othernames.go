package fsrules

import "slices"

// OtherNames walks roots for the other names of the files in files (by
// device and inode: the name already protected) and returns each one
// found with that protected name. A protection that is a bind over a
// name covers that name only: the same file under another name in a
// writable tree is written there (a hard link made before the file was
// protected). Nested roots are walked once; symlinks are not followed.
// The cost is a walk of the trees (a getdents per directory; an fstatat per
// regular file, but, with mounts the host's mount table, only per file
// whose directory entry names one of files' inode numbers where the file
// system's entries carry them: walkLinksFor): callers ask only when a
// protected file has more than one link.
func OtherNames(roots []string, files map[[2]uint64]string, mounts []Mount) map[string]string {
	out := map[string]string{}
	if len(files) == 0 {
		return out
	}
	inos := make(map[uint64]bool, len(files))
	for k := range files {
		inos[k[1]] = true
	}
	for _, r := range outerRoots(roots) {
		walkLinksFor(r, inos, mounts, func(p string, dev, ino uint64) {
			if orig, ok := files[[2]uint64{dev, ino}]; ok && p != orig {
				out[p] = orig
			}
		})
	}
	return out
}

// outerRoots are roots less those inside another (walked with it).
func outerRoots(roots []string) []string {
	var out []string
	for _, r := range roots {
		nested := false
		for _, o := range roots {
			if o != r && under(r, o) {
				nested = true
			}
		}
		if !nested && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}
