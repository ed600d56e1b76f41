package dircache

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/dirnames"
)

// ctimeFS are the file systems whose directories' ctime changes with every
// entry added, removed or renamed, from the kernel's clock (statfs f_type).
// Network and FUSE file systems report what a server says; overlayfs and
// vfat are left out too: their directories are read each time.
var ctimeFS = map[int64]bool{
	0xEF53:     true, // ext2/3/4
	0x58465342: true, // xfs
	0x9123683E: true, // btrfs
	0x01021994: true, // tmpfs
	0xF2F52010: true, // f2fs
	0x2FC12FC1: true, // zfs
	0xCA451A4E: true, // bcachefs
}

func keyOf(st *unix.Stat_t) Key {
	// The ctime, never the mtime: an agent can set a directory's mtime back
	// with utimes(2) after planting a file in it, but not its ctime (see the
	// package doc).
	return Key{Dev: st.Dev, Ino: st.Ino, Ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec}
}

// lstatKey returns dir's key, and whether it is a directory (no symlink
// followed). Two passes a run take one per directory (5,600 on the bench's
// tree): the path goes to the kernel from a buffer on the stack, not from a
// fresh heap copy each (unix.Lstat's): on this kind of VM the first touch
// of a page costs 18-30 us, and those copies were some 40 fresh pages a run.
func lstatKey(dir string) (Key, bool) {
	var st unix.Stat_t
	var buf [512]byte
	if sysFstatat == 0 || len(dir) >= len(buf) || strings.IndexByte(dir, 0) >= 0 {
		if unix.Lstat(dir, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return Key{}, false
		}
		return keyOf(&st), true
	}
	copy(buf[:], dir)      // NUL-terminated: buf is zero past dir
	fdcwd := unix.AT_FDCWD // a variable: -100 as a uintptr
	_, _, errno := unix.Syscall6(sysFstatat, uintptr(fdcwd), uintptr(unsafe.Pointer(&buf[0])),
		uintptr(unsafe.Pointer(&st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
	if errno != 0 || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return Key{}, false
	}
	return keyOf(&st), true
}

// trusted reports whether device dev (dir is on it) has a file system whose
// directories' ctimes are trusted. c.mu is held.
func (c *Cache) trusted(dev uint64, dir string) bool {
	ok, known := c.fsOK[dev]
	if !known {
		var sf unix.Statfs_t
		ok = unix.Statfs(dir, &sf) == nil && ctimeFS[int64(sf.Type)]
		c.fsOK[dev] = ok
	}
	return ok
}

// private checks that dir is a directory of the user's, writable by no one
// else (no symlink followed).
func private(dir string, uid int) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return fmt.Errorf("dircache: %w", err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("dircache: %s is not a directory: cache off", dir)
	case int(st.Uid) != uid:
		return fmt.Errorf("dircache: %s is owned by uid %d, not %d: cache off", dir, st.Uid, uid)
	case st.Mode&0o022 != 0:
		return fmt.Errorf("dircache: %s is writable by others (mode %#o): cache off", dir, st.Mode&0o777)
	}
	return nil
}

// readPrivate reads a cache file that is a regular file of the user's,
// with one link, writable by no one else, and not too big. On the
// descriptor itself: an *os.File of an O_NONBLOCK descriptor asks the
// runtime's poller for it (fcntl, and epoll_ctl, which a regular file
// refuses) and carries a cleanup, at each of the start's 4-5 cache files
// (issue 16).
func readPrivate(p string, uid int) ([]byte, error) {
	// O_NONBLOCK: a FIFO put at p does not block the open (fstat below
	// refuses it); O_NOFOLLOW: no symlink is followed to another file.
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "fstat", Path: p, Err: err}
	}
	// Fail closed: a file someone else could have written decides nothing.
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != uid || st.Mode&0o022 != 0 || st.Nlink != 1 || st.Size > MaxFile {
		return nil, fmt.Errorf("dircache: %s: not a private regular file of uid %d", p, uid)
	}
	// One read of the size fstat gave (a file that grew since is cut there,
	// and its checksum fails), in as many reads as it takes; a file that
	// shrank since fails, as io.ReadFull did.
	b := make([]byte, st.Size)
	for got := 0; got < len(b); {
		n, err := unix.Read(fd, b[got:])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: p, Err: err}
		case n == 0:
			return nil, &os.PathError{Op: "read", Path: p, Err: io.ErrUnexpectedEOF}
		}
		got += n
	}
	return b, nil
}

// writePrivate replaces p with data (a new file, 0600, renamed over it).
func writePrivate(dir, p string, data []byte) error {
	tmp := filepath.Join(dir, ".tmp-"+strconv.FormatInt(time.Now().UnixNano(), 36)+"-"+strconv.Itoa(os.Getpid()))
	fd, err := unix.Open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("dircache: %w", err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("dircache: %w", err)
	}
	return nil
}

// readKept reads dir with getdents(2) into a reused buffer: only the
// entries keep selects become strings (the walk of a large tree keeps a
// few of each directory's entries and would otherwise make an object of
// every one, under the start's hold on garbage collection). It returns
// them, how many entries dir has in all, dir's key as fstat gives it, and
// whether dir is a directory (ok).
func readKept(dir string, keep func(string, fs.FileMode) bool, nofollow bool) (kept []Entry, total int, key Key, ok bool, err error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC | unix.O_NONBLOCK
	if nofollow {
		flags |= unix.O_NOFOLLOW // ELOOP at a symlink: never its target's names
	}
	fd, err := unix.Open(dir, flags, 0)
	if err != nil {
		return nil, 0, Key{}, false, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, 0, Key{}, false, &fs.PathError{Op: "fstat", Path: dir, Err: err}
	}
	key, ok = keyOf(&st), st.Mode&unix.S_IFMT == unix.S_IFDIR
	bp := dirnames.Buffer()
	defer dirnames.Release(bp)
	buf := *bp
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, 0, Key{}, false, &fs.PathError{Op: "readdirent", Path: dir, Err: err}
		}
		if n <= 0 {
			break
		}
		for b := buf[:n]; len(b) > 0; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			if len(b) < 19 {
				return nil, 0, Key{}, false, &fs.PathError{Op: "readdirent", Path: dir, Err: unix.EIO}
			}
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return nil, 0, Key{}, false, &fs.PathError{Op: "readdirent", Path: dir, Err: unix.EIO}
			}
			rec := b[:reclen]
			b = b[reclen:]
			ino := binary.NativeEndian.Uint64(rec[0:8])
			raw := rec[19:]
			if i := bytes.IndexByte(raw, 0); i >= 0 {
				raw = raw[:i]
			}
			if ino == 0 || len(raw) == 0 || string(raw) == "." || string(raw) == ".." {
				continue // as os.File.ReadDir: no deleted entries, no . and ..
			}
			// The name lives in the buffer only while keep looks at it;
			// a kept one is copied.
			name := unsafe.String(&raw[0], len(raw))
			t, known := dtType[rec[18]]
			if !known {
				// DT_UNKNOWN (some file systems): the type from the inode.
				var est unix.Stat_t
				if err := unix.Fstatat(fd, name, &est, unix.AT_SYMLINK_NOFOLLOW); err != nil {
					if err == unix.ENOENT {
						continue // gone since the listing
					}
					return nil, 0, Key{}, false, &fs.PathError{Op: "lstat", Path: filepath.Join(dir, name), Err: err}
				}
				t = modeType(est.Mode)
			}
			total++
			if keep(name, t) {
				kept = append(kept, Entry{name: strings.Clone(name), typ: t, dir: dir})
			}
		}
	}
	return kept, total, key, ok, nil
}

// dtType maps getdents' d_type to fs.FileMode type bits (DT_UNKNOWN is not
// in it).
var dtType = map[byte]fs.FileMode{
	unix.DT_REG:  0,
	unix.DT_DIR:  fs.ModeDir,
	unix.DT_LNK:  fs.ModeSymlink,
	unix.DT_FIFO: fs.ModeNamedPipe,
	unix.DT_SOCK: fs.ModeSocket,
	unix.DT_CHR:  fs.ModeDevice | fs.ModeCharDevice,
	unix.DT_BLK:  fs.ModeDevice,
}

func modeType(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}

// readLinkTexts reads the text of each symlink in ents (entries of dir)
// with readlinkat(2) through one descriptor of dir. It drops an entry that
// is no longer a symlink (or gone) and then says same false; same is also
// false when that descriptor's directory is not the one with key want.
func readLinkTexts(dir string, ents []Entry, want Key) (out []Entry, same bool, err error) {
	if len(ents) == 0 {
		return ents, true, nil
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, false, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, false, &fs.PathError{Op: "fstat", Path: dir, Err: err}
	}
	same = keyOf(&st) == want
	buf := make([]byte, unix.PathMax)
	out = ents[:0]
	for _, e := range ents {
		n, err := unix.Readlinkat(fd, e.name, buf)
		if err != nil || n >= len(buf) || n == 0 {
			same = false // changed since the listing
			continue
		}
		e.link = string(buf[:n])
		out = append(out, e)
	}
	return out, same, nil
}

// DirKey returns dir's key (device, inode, ctime), and false when dir is
// no directory (no symlink followed): what a caller keeping its own
// answer about a directory across runs compares (see the package doc).
func DirKey(dir string) (Key, bool) { return lstatKey(dir) }
