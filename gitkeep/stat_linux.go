package gitkeep

import (
	"os"
	"syscall"
)

// linkInfo is a file's link count and ctime (ns): the ctime of a store's
// object is when its link count last changed or a name of it was renamed,
// so, when the store's is its only link, at or after the workspace's own
// link to it went (the store's link was made before); with other links it
// says nothing of when (unlinkedSince). The agent cannot set it back.
func linkInfo(fi os.FileInfo) (nlink uint64, ctime int64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Nlink), st.Ctim.Sec*1e9 + st.Ctim.Nsec, true
}
