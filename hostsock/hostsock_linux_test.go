package hostsock

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// TestBound: both readers list every path-bound socket: listening stream
// and seqpacket sockets, a bound stream socket that does not listen yet, an
// unbound-peer datagram socket and a datagram server a client connected to
// (the kernel marks it established; it still takes anyone's datagrams); not
// an abstract name; a relative one apart (Bound places it).
//
// Names other local users choose: a newline in a name (the kernel prints it
// as it is in /proc/net/unix, so the record ran over into the next line and
// the fallback listed only the part before it: that socket went unmasked;
// seen failing on main's fromProc, which listed ".../new" for ".../new\nline.sock"
// and ".../x" and "/fake/s" for the name whose tail looks like a record), a name ending in
// a carriage return (bufio's line splitting dropped it: seen failing too), a
// name of sun_path's full 108 bytes without a NUL, an abstract name whose
// tail looks like a record of a path-bound socket.
func TestBound(t *testing.T) {
	// A short directory whatever TMPDIR is: the names below need most of
	// sun_path's 108 bytes.
	d, err := os.MkdirTemp("/tmp", "hs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	sock := func(typ int, name string, listen bool) int {
		fd, err := syscall.Socket(syscall.AF_UNIX, typ|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Close(fd) })
		if !strings.HasPrefix(name, "@") && !strings.HasPrefix(name, "./") && !filepath.IsAbs(name) {
			name = filepath.Join(d, name)
		}
		if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: name}); err != nil {
			t.Fatalf("bind %q: %v", name, err)
		}
		if listen {
			if err := syscall.Listen(fd, 1); err != nil {
				t.Fatal(err)
			}
		}
		return fd
	}
	sock(syscall.SOCK_STREAM, "listen.sock", true)
	sock(syscall.SOCK_SEQPACKET, "seq.sock", true)
	sock(syscall.SOCK_DGRAM, "dgram sock", false)
	sock(syscall.SOCK_STREAM, "bound-only.sock", false)
	peer := sock(syscall.SOCK_DGRAM, "peer.sock", false)
	conn := sock(syscall.SOCK_DGRAM, "connected.sock", false)
	if err := syscall.Connect(conn, &syscall.SockaddrUnix{Name: filepath.Join(d, "peer.sock")}); err != nil {
		t.Fatal(err)
	}
	_ = peer
	sock(syscall.SOCK_STREAM, "@hostsock-test-"+filepath.Base(d), true)
	// An abstract name whose tail looks like a record of a path.
	sock(syscall.SOCK_STREAM, "@"+filepath.Base(d)+"\n0: 00000002 00000000 00010000 0001 01 99 /nonexistent/hostsock.sock", true)
	sock(syscall.SOCK_STREAM, "new\nline.sock", true)
	sock(syscall.SOCK_STREAM, "end\n", true)
	sock(syscall.SOCK_STREAM, "cr.sock\r", true)
	tail := "x\n0000000000000000: 00000002 00000000 00010000 0001 01 9 "
	if err := os.MkdirAll(filepath.Join(d, tail, "fake"), 0o755); err != nil {
		t.Fatal(err)
	}
	sock(syscall.SOCK_STREAM, filepath.Join(tail, "fake", "s"), true)
	long := filepath.Join(d, strings.Repeat("L", maxName-len(d)-1))
	if len(long) != maxName {
		t.Fatalf("the long name has %d bytes, want %d (temporary directory %s too long?)", len(long), maxName, d)
	}
	// Go's Bind refuses a 108-byte path (it wants room for a NUL); the
	// kernel takes it.
	lfd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(lfd) })
	var sa syscall.RawSockaddrUnix
	sa.Family = syscall.AF_UNIX
	for i := range len(long) {
		sa.Path[i] = int8(long[i])
	}
	if _, _, e := syscall.Syscall(syscall.SYS_BIND, uintptr(lfd), uintptr(unsafe.Pointer(&sa)), unsafe.Sizeof(sa)); e != 0 {
		t.Fatalf("bind the %d-byte name: %v", len(long), e)
	}
	t.Chdir(d)
	sock(syscall.SOCK_STREAM, "./rel.sock", true)

	want := []string{filepath.Join(d, "bound-only.sock"), filepath.Join(d, "connected.sock"), filepath.Join(d, "cr.sock\r"),
		filepath.Join(d, "dgram sock"), d + "/end\n", filepath.Join(d, "listen.sock"), filepath.Join(d, "new\nline.sock"),
		filepath.Join(d, "peer.sock"), filepath.Join(d, "seq.sock"), filepath.Join(d, tail, "fake", "s"), long}
	slices.Sort(want)
	mine := func(all []string) []string {
		var out []string
		for _, p := range all {
			if strings.HasPrefix(p, d+"/") {
				out = append(out, p)
			}
		}
		slices.Sort(out)
		return out
	}
	check := func(reader string, got []string) {
		t.Helper()
		seen := map[string]bool{}
		for _, p := range got {
			if !strings.HasPrefix(p, "/") || strings.IndexByte(p, 0) >= 0 {
				t.Errorf("%s: not an absolute path: %q", reader, p)
			}
			if seen[p] {
				t.Errorf("%s: listed twice: %q", reader, p)
			}
			seen[p] = true
		}
		for _, w := range want {
			if !seen[w] {
				t.Errorf("%s: missed %q (a host service there would stay reachable)", reader, w)
			}
		}
		// A reading the fallback cannot tell from a name (the part of
		// a name before its newline) may be listed: it is no socket,
		// and the caller masks only sockets.
		for _, p := range mine(got) {
			if !slices.Contains(want, p) {
				if fi, err := os.Lstat(p); err == nil && fi.Mode().Type() == os.ModeSocket {
					t.Errorf("%s: lists %q, a socket not bound by that name", reader, p)
				}
			}
		}
	}
	got, rel, _, err := diag()
	if err != nil {
		t.Fatalf("sock_diag: %v", err)
	}
	check("sock_diag", got)
	if g := mine(got); !slices.Equal(g, want) {
		t.Errorf("sock_diag:\n got %q\nwant %q", g, want)
	}
	if !slices.Contains(rel, "./rel.sock") {
		t.Errorf("sock_diag: relative names %q lack ./rel.sock", rel)
	}
	got, rel, err = fromProc("/proc/net/unix")
	if err != nil {
		t.Fatal(err)
	}
	check("/proc/net/unix", got)
	if !slices.Contains(rel, "./rel.sock") {
		t.Errorf("/proc/net/unix: relative names %q lack ./rel.sock", rel)
	}
	// Bound places the relative name in the binder's working directory
	// (this process's: d).
	got, err = Bound()
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, filepath.Join(d, "rel.sock"))
	slices.Sort(want)
	check("Bound", got)
}

// TestPlaceRelative: a relative name is looked for in each working
// directory /proc shows and kept where a socket is: not where a file of
// that name is no socket, nor where nothing is; entries that are no
// process, or whose cwd cannot be read, are passed over.
func TestPlaceRelative(t *testing.T) {
	d := t.TempDir()
	proc := filepath.Join(d, "proc")
	dirs := map[string]string{"1": "a", "22": "b", "333": "c", "4": "a", "self": "c"}
	for pid, dir := range dirs {
		if err := os.MkdirAll(filepath.Join(proc, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(d, dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(d, dir), filepath.Join(proc, pid, "cwd")); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(proc, "5"), 0o755) // no cwd: gone, or another user's
	for _, p := range []string{"a/x.sock", "b/sub/y.sock", "c/x.sock", "c/y.sock"} {
		ln, err := net.Listen("unix", filepath.Join(d, p))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
	}
	os.WriteFile(filepath.Join(d, "b/x.sock"), nil, 0o644) // a file, no socket
	got := placeRelative([]string{"x.sock", "./sub/y.sock", "../a/x.sock", "none.sock"}, proc)
	want := []string{filepath.Join(d, "a/x.sock"), filepath.Join(d, "b/sub/y.sock"), filepath.Join(d, "c/x.sock")}
	if !slices.Equal(got, want) {
		t.Errorf("placed:\n got %q\nwant %q", got, want)
	}
	if got := placeRelative(nil, proc); got != nil {
		t.Errorf("nothing to place: %q", got)
	}
}

// BenchmarkBound measures both readers as the namespace is ("few"), then
// with 3,000 more (unnamed) sockets in it, as a busy desktop has.
func BenchmarkBound(b *testing.B) {
	b.Run("few/sock_diag", func(b *testing.B) {
		for b.Loop() {
			if _, _, _, err := diag(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for range 1500 {
		p, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { syscall.Close(p[0]); syscall.Close(p[1]) })
	}
	b.Run("sock_diag", func(b *testing.B) {
		for b.Loop() {
			if _, _, _, err := diag(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("proc", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := fromProc("/proc/net/unix"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Another local user can bind tens of thousands of sockets by relative
// names in a directory of their own, and root's start looks for each in
// every working directory /proc shows: the names placed are kept once
// each, and merged with the listed paths in linear time (review14c: with
// the list searched for each name, 19,000 such names took 7-13 s of every
// root start, at load 13). The merge of 20,000 and 20,000 paths: well
// under a second when linear; seen failing on main's search (over the 3 s
// allowed: 58 s with main's placeRelative too).
func TestPlaceRelativeMany(t *testing.T) {
	d := t.TempDir()
	proc := filepath.Join(d, "proc")
	work := filepath.Join(d, "w")
	for _, pid := range []string{"1", "2"} {
		if err := os.MkdirAll(filepath.Join(proc, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(work, filepath.Join(proc, pid, "cwd")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	const bound = 2000
	var rel []string
	for i := range bound {
		name := fmt.Sprintf("relative-socket-name-%06d", i)
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		err = syscall.Bind(fd, &syscall.SockaddrUnix{Name: filepath.Join(work, name)})
		syscall.Close(fd) // the file stays: a socket to Lstat
		if err != nil {
			t.Fatal(err)
		}
		rel = append(rel, name)
	}
	// Two processes in the one directory: each name placed once.
	if placed := placeRelative(rel, proc); len(placed) != bound {
		t.Errorf("placed %d paths for %d names in one directory", len(placed), bound)
	}
	const n = 20000
	listed, placed := make([]string, 0, n), make([]string, 0, n)
	for i := range n {
		listed = append(listed, fmt.Sprintf("/listed/absolute/socket-%06d", i))
		placed = append(placed, fmt.Sprintf("/w/relative-socket-name-%06d", i))
	}
	start := time.Now()
	all := addPlaced(listed, placed)
	took := time.Since(start)
	t.Logf("merged in %v", took)
	if took > 3*time.Second {
		t.Errorf("merging %d placed paths into %d listed took %v: not linear", n, n, took)
	}
	if len(all) != 2*n {
		t.Errorf("%d paths in all, want %d", len(all), 2*n)
	}
	// One already listed is not added again.
	if again := addPlaced(all, placed[:10]); len(again) != len(all) {
		t.Errorf("a path already listed was added again: %d, want %d", len(again), len(all))
	}
}

// TestBoundFiles (sockets17): sock_diag's UNIX_DIAG_VFS names the file a
// socket was bound to, whatever its name is now: a socket renamed into a
// subdirectory is live by its inode there, and a socket bound at its old
// name after the rename (then closed: a dead file) is not the one the
// kernel lists by that name, nor live.
func TestBoundFiles(t *testing.T) {
	d := t.TempDir()
	bind := func(p string) int {
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: p}); err != nil {
			t.Fatalf("bind %s: %v", p, err)
		}
		return fd
	}
	ino := func(p string) uint64 {
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		return st.Ino
	}
	name, moved := filepath.Join(d, "tool.sock"), filepath.Join(d, "sub", "moved.sock")
	fd := bind(name)
	t.Cleanup(func() { syscall.Close(fd) })
	if err := os.Mkdir(filepath.Join(d, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(name, moved); err != nil {
		t.Fatal(err)
	}
	syscall.Close(bind(name)) // a dead socket file at the old name
	paths, files, err := BoundFiles()
	if err != nil {
		t.Fatal(err)
	}
	if files == nil {
		t.Fatal("sock_diag gave no files (it answered: the list has names)")
	}
	if !slices.Contains(paths, name) {
		t.Errorf("%s not listed: %q", name, paths)
	}
	if !files.Live(ino(moved)) || !files.Holds(name, ino(moved)) {
		t.Errorf("the renamed socket %s (inode %d) is not live by its file", moved, ino(moved))
	}
	if files.Live(ino(name)) || files.Holds(name, ino(name)) {
		t.Errorf("the dead socket file at %s (inode %d) is taken for the live one", name, ino(name))
	}
}
