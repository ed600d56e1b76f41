package initbin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Own is what Open's answer says when jail's own binary is to be init.
const Own = "jail's own binary"

// geteuid is the owner a trusted copy must have (tests fake another one
// where they cannot chown).
var geteuid = os.Geteuid

// chainTop is the last directory openDir checks above the state
// directory: "/" but in tests, whose temporary directories may sit in a
// /tmp that is writable by all and not sticky.
var chainTop = "/"

// tmpSeq tells apart the temporary names of one process's extractions.
var tmpSeq atomic.Uint64

// Embedded reports whether this binary carries the lean init.
func Embedded() bool {
	_, ok := fileName()
	return ok
}

// HasEntry reports whether the embedded program has its own ELF entry
// (make build links it on amd64), which starts init without a fork of the
// supervisor: ns.Config.Entry.
func HasEntry() bool {
	return Embedded() && runtime.GOARCH == "amd64" && strings.TrimSpace(entry) == "main.entry"
}

// fileName is the copy's name in the state directory: init- and the first
// 16 hex digits of the program's sha256 (from the build), so that two
// builds never share a copy.
func fileName() (string, bool) {
	s := strings.TrimSpace(sum)
	if len(program) == 0 || len(s) != 64 || strings.Trim(s, "0123456789abcdef") != "" {
		return "", false
	}
	return "init-" + s[:16], true
}

// refusedError is a copy that fails a check: never exec'd, replaced.
type refusedError struct{ why string }

func (e *refusedError) Error() string { return e.why }

// Open returns the lean init's copy in dir (jail's state directory, made
// 0700 when missing) to exec as init: an O_PATH descriptor, checked (see
// the package doc), to exec as /proc/self/fd/N. When it returns nil, init
// is to be jail's own binary (/proc/self/exe), and how says why; otherwise
// how names the copy.
//
// When the copy is missing or was refused, extract is not nil: the caller
// runs it once init has started (writing 4.5 MB and syncing them is not
// to delay this run's init) and adds what it returns to how. This run's
// init is jail's own binary then: the new copy will have been open for
// writing an instant before, and a fork of this process meanwhile may hold
// that descriptor until its exec (ETXTBSY). The next runs exec the copy.
func Open(dir string) (f *os.File, how string, extract func() string) {
	name, ok := fileName()
	if !ok {
		return nil, Own + " (built without the lean init: make build embeds it)", nil
	}
	own := func(format string, a ...any) (*os.File, string, func() string) {
		return nil, Own + " (" + fmt.Sprintf(format, a...) + ")", nil
	}
	if !filepath.IsAbs(dir) {
		return own("no state directory")
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		// 0700, as statedir.Ensure makes it: it names what the agent did.
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return own("make the state directory: %v", err)
		}
	}
	dfd, err := openDir(dir)
	if err != nil {
		return own("%v", err)
	}
	path := filepath.Join(dir, name)
	f, err = openChecked(dfd, name, path)
	if err == nil {
		unix.Close(dfd)
		return f, "the lean init " + path, nil
	}
	var refused *refusedError
	if !errors.As(err, &refused) && !errors.Is(err, fs.ErrNotExist) {
		unix.Close(dfd)
		return own("%v", err) // e.g. a noexec mount: replacing would not help
	}
	return nil, Own + " (" + err.Error() + ")", func() string {
		defer unix.Close(dfd)
		if err := writeCopy(dfd, name); err != nil {
			return fmt.Sprintf("extract the lean init to %s: %v", path, err)
		}
		prune(dfd, name)
		return "extracted the lean init to " + path + " for the next runs"
	}
}

// openDir opens the state directory after checking every directory up to
// it (resolved: symlinks in $HOME or $XDG_STATE_HOME are followed, and
// where they lead is what is checked). Only its owner may rename or
// replace an entry of a directory that is not writable by others (or is
// sticky): so nobody but root and the euid can put another file under
// the copy's path.
func openDir(dir string) (int, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return -1, fmt.Errorf("resolve the state directory: %w", err)
	}
	euid := uint32(geteuid())
	for p := filepath.Dir(real); ; p = filepath.Dir(p) {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return -1, fmt.Errorf("check %s: %w", p, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR || (st.Uid != 0 && st.Uid != euid) ||
			(st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0) {
			return -1, fmt.Errorf("%s, above the state directory, is writable by others or owned by uid %d", p, st.Uid)
		}
		if p == chainTop || p == "/" {
			break
		}
	}
	// O_NOFOLLOW: the resolved path has no symlink left; one planted since
	// is not followed.
	fd, err := unix.Open(real, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open the state directory %s: %w", real, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("stat the state directory %s: %w", real, err)
	}
	if st.Uid != euid || st.Mode&0o022 != 0 {
		unix.Close(fd)
		return -1, fmt.Errorf("the state directory %s is owned by uid %d or writable by others (mode %#o)", real, st.Uid, st.Mode&0o7777)
	}
	return fd, nil
}

// openChecked opens name in the directory dfd without following a symlink
// (O_PATH: a FIFO does not block, nothing is read) and checks that very
// descriptor, the one to be exec'd: no window between check and exec.
func openChecked(dfd int, name, path string) (*os.File, error) {
	fd, err := unix.Openat(dfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ENOENT {
			return nil, fmt.Errorf("no lean init at %s yet: %w", path, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	var why string
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		why = "not a regular file" // a symlink (O_NOFOLLOW), a directory, a FIFO
	case st.Uid != uint32(geteuid()):
		// Only this user (or root) can have made a file of theirs: another
		// owner may have planted it.
		why = fmt.Sprintf("owned by uid %d", st.Uid)
	case st.Mode&0o7777 != 0o755:
		// Group or other write would let someone else change it; a
		// setuid or setgid bit was never ours.
		why = fmt.Sprintf("mode %#o, not 0755", st.Mode&0o7777)
	case st.Nlink != 1:
		// A second name elsewhere is a second way to it we never made.
		why = fmt.Sprintf("%d links", st.Nlink)
	case st.Size != int64(len(program)):
		// Truncated, appended to, or another build's.
		why = fmt.Sprintf("%d bytes, not %d", st.Size, len(program))
	}
	if why != "" {
		unix.Close(fd)
		return nil, &refusedError{fmt.Sprintf("refused the lean init at %s: %s", path, why)}
	}
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil || sfs.Flags&unix.ST_NOEXEC != 0 {
		unix.Close(fd)
		return nil, fmt.Errorf("the state directory's file system does not allow exec (noexec) or cannot say: %s", path)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// writeCopy writes the program under a temporary name and renames it over
// name: the final name only ever holds a whole copy (or the refused one it
// replaces), and two first runs at once each rename a whole copy.
func writeCopy(dfd int, name string) (err error) {
	tmp := fmt.Sprintf("%s.tmp-%d-%d", name, os.Getpid(), tmpSeq.Add(1))
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o700)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), tmp)
	defer func() {
		if err != nil {
			f.Close()
			_ = unix.Unlinkat(dfd, tmp, 0)
		}
	}()
	if err = writeBig(f, program); err != nil {
		return err
	}
	// On disk before its name is: a crash never leaves a copy of the
	// right size with blocks that were not written.
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Chmod(0o755); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return unix.Renameat(dfd, tmp, dfd, name)
}

// bigChunk is the size of writeBig's writes: a huge page's on amd64 and
// arm64 (with 4 KiB pages), the size of folio a file system with large
// folios then gives the page cache.
const bigChunk = 2 << 20

// writeBig writes data to f from offset 0 in writes of bigChunk bytes, each
// copied first into a buffer of this process's own memory, so that the page
// cache holds the copy in 2 MiB folios where the kernel and the file system
// have them (ext4 since Linux 6.16, xfs): every start of the lean init then
// maps its code and read-only data by 2 MiB page-table entries where a
// segment holds a whole 2 MiB (package prefault's populate;
// docs/performance.md, initfolio rows). One Write of the whole embedded
// program, straight from jail's writable data that no start has faulted
// in, left the copy's second 2 MiB in 4 KiB folios (Linux 6.18, ext4: six
// extractions of six), as cp's copy_file_range leaves all of a file; dd
// bs=2M, like this, gives 2 MiB ones. The bytes are the same either way:
// only the page cache's shape differs.
func writeBig(f *os.File, data []byte) error {
	buf := make([]byte, min(bigChunk, len(data)))
	for off := 0; off < len(data); {
		n := copy(buf, data[off:])
		if _, err := f.Write(buf[:n]); err != nil {
			return err
		}
		off += n
	}
	return nil
}

// prune removes other builds' copies (and temporary files older than a
// minute: a concurrent extraction's are younger) after an extraction.
func prune(dfd int, keep string) {
	d, err := unix.Dup(dfd)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(d), "statedir")
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	for _, n := range names {
		if !strings.HasPrefix(n, "init-") || n == keep {
			continue
		}
		if strings.Contains(n, ".tmp-") {
			var st unix.Stat_t
			if unix.Fstatat(dfd, n, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || time.Since(time.Unix(st.Mtim.Unix())) < time.Minute {
				continue
			}
		}
		_ = unix.Unlinkat(dfd, n, 0)
	}
}
