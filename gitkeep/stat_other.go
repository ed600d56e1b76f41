//go:build !linux

package gitkeep

import "os"

// linkInfo is not read off Linux: nothing is pruned there.
func linkInfo(fi os.FileInfo) (nlink uint64, ctime int64, ok bool) { return 0, 0, false }

// inode is not read off Linux: every changed directory is read whole.
func inode(fi os.FileInfo) uint64 { return 0 }

// stampOf is not read off Linux: nothing is stamped.
func stampOf(fi os.FileInfo) (dev, ino uint64, ctime int64) { return 0, 0, 0 }

// touch is not made off Linux: no stamp counts.
func touch(f *os.File) (dev uint64, ctime int64, ok bool) { return 0, 0, false }

// birth is not read off Linux: the store's record says.
func birth(dir string) (int64, bool) { return 0, false }

// repoID is not read off Linux: a store keeps its age by its path.
func repoID(gitDir string) string { return "" }

// ctimeAt is not read off Linux: every object is taken for a run's.
func ctimeAt(dirfd int, name string) (int64, bool) { return 0, false }

// fileStat is what the end's look at loose objects needs of a file.
type fileStat struct {
	fi    os.FileInfo
	size  int64
	ctime int64 // 0 off Linux: every file is taken for changed
	ino   uint64
	dev   uint64
}

func (s fileStat) regular() bool { return s.fi.Mode().IsRegular() }
func (s fileStat) dir() bool     { return s.fi.IsDir() }

// openDirAt: -1 off Linux (whole paths).
func openDirAt(dir string) int { return -1 }

func closeDirAt(fd int) {}

// lstatAt is os.Lstat of full.
func lstatAt(_ int, _, full string) (fileStat, bool) {
	fi, err := os.Lstat(full)
	if err != nil {
		return fileStat{}, false
	}
	return fileStat{fi: fi, size: fi.Size()}, true
}

// namesAt appends to names the names in full (os.ReadDir).
func namesAt(_ int, _, full string, _ []byte, names []string) ([]string, bool) {
	ents, err := os.ReadDir(full)
	if err != nil {
		return names, false
	}
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names, true
}

// dirStamp is not read off Linux (0: unknown): the directory is opened
// and its own stat read.
func dirStamp(int, string) (mtime int64, ino uint64, isDir bool) { return 0, 0, true }
