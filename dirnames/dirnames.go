// Package dirnames lists a directory's names as a set, for callers that
// answer "is this name absent?" for many names below one directory with
// one listing instead of an lstat(2) each (fsrules' absent paths below a
// home, the sentinel's absent paths). It never follows a symlink at the
// directory itself: a directory swapped for a link fails to list, and the
// caller falls back to its lstats.
//
// It also keeps the getdents(2) buffers of jail's raw directory readers
// (Buffer, Release): one pool for all of them.
package dirnames

// Names returns the names in dir (without "." and ".."), and false when
// dir cannot be listed whole, is not a directory, is a symlink, or holds
// more than max entries (max <= 0: no bound).
func Names(dir string, max int) (map[string]bool, bool) {
	ns, ok := names(dir, max)
	if !ok {
		return nil, false
	}
	out := make(map[string]bool, len(ns))
	for _, n := range ns {
		out[n] = true
	}
	return out, true
}
