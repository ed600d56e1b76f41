package sandbox

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/dirnames"
)

// symlinksIn calls each for every symlink directly in dir, with its text:
// one getdents64 per 32 KiB of entries into one buffer and a readlinkat
// per symlink, relative to the directory (no path walk per name, no
// allocation per entry). An entry of unknown type (a file system without
// d_type) is lstat'ed.
func symlinksIn(dir string, each func(name, target string)) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	bp := dirnames.Buffer()
	defer dirnames.Release(bp)
	buf := *bp
	link := make([]byte, unix.PathMax)
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil || n <= 0 {
			return
		}
		for off := 0; off+19 <= n; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(*(*uint16)(unsafe.Pointer(&buf[off+16])))
			if reclen < 19 || off+reclen > n {
				return
			}
			typ := buf[off+18]
			nameb := buf[off+19 : off+reclen]
			for i, c := range nameb {
				if c == 0 {
					nameb = nameb[:i]
					break
				}
			}
			off += reclen
			if typ != unix.DT_LNK && typ != unix.DT_UNKNOWN {
				continue
			}
			name := string(nameb)
			if typ == unix.DT_UNKNOWN {
				var st unix.Stat_t
				if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
					continue
				}
			}
			m, err := unix.Readlinkat(fd, name, link)
			if err != nil || m >= len(link) {
				continue
			}
			each(name, string(link[:m]))
		}
	}
}
