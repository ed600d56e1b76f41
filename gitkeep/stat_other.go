//go:build !linux

package gitkeep

import "os"

// linkInfo is not read off Linux: nothing is pruned there.
func linkInfo(fi os.FileInfo) (nlink uint64, ctime int64, ok bool) { return 0, 0, false }

// inode is not read off Linux: every changed directory is read whole.
func inode(fi os.FileInfo) uint64 { return 0 }

// birth is not read off Linux: the store's record says.
func birth(dir string) (int64, bool) { return 0, false }

// repoID is not read off Linux: a store keeps its age by its path.
func repoID(gitDir string) string { return "" }

// ctimeAt is not read off Linux: every object is taken for a run's.
func ctimeAt(dirfd int, name string) (int64, bool) { return 0, false }
