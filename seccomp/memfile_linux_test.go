package seccomp

import (
	"errors"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// memFile reads /proc/PID/mem as os.File.ReadAt does: the same bytes, the
// same short read and error at an unmapped page, and readString/readArgv
// answer the same through either.
func TestMemFileReadsAsOSFile(t *testing.T) {
	// Two pages, the second unmapped: a string that runs into it is cut
	// there, with an error.
	m, err := unix.Mmap(-1, 0, 2*pageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	start := uintptr(unsafe.Pointer(&m[0]))
	defer unix.Syscall(unix.SYS_MUNMAP, start, pageSize, 0)
	if _, _, e := unix.Syscall(unix.SYS_MUNMAP, start+pageSize, pageSize, 0); e != 0 {
		t.Fatal(e)
	}
	page := m[:pageSize]
	copy(page, "/bin/true\x00")
	tail := pageSize - 5
	copy(page[tail:], "abcde") // no NUL before the hole
	base := uint64(uintptr(unsafe.Pointer(&page[0])))

	f, err := os.Open("/proc/self/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd, err := unix.Open("/proc/self/mem", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	mf := memFile{fd: fd, path: "/proc/self/mem"}

	for _, c := range []struct {
		name string
		addr uint64
		n    int
	}{
		{"mapped", base, 16},
		{"into the hole", base + uint64(tail), 64},
		{"in the hole", base + pageSize, 8},
	} {
		a, b := make([]byte, c.n), make([]byte, c.n)
		na, ea := f.ReadAt(a, int64(c.addr))
		nb, eb := mf.ReadAt(b, int64(c.addr))
		if na != nb || string(a[:na]) != string(b[:nb]) || (ea == nil) != (eb == nil) {
			t.Errorf("%s: os.File %d %q %v; memFile %d %q %v", c.name, na, a[:na], ea, nb, b[:nb], eb)
		}
		if ea != nil && eb != nil && !errors.Is(eb, unix.EIO) && !errors.Is(eb, unix.EFAULT) {
			t.Errorf("%s: memFile error %v is not the kernel's", c.name, eb)
		}
	}
	for _, addr := range []uint64{base, base + uint64(tail)} {
		sa, ea := readString(f, addr, maxPathLen)
		sb, eb := readString(mf, addr, maxPathLen)
		if sa != sb || (ea == nil) != (eb == nil) {
			t.Errorf("readString at %#x: os.File %q %v; memFile %q %v", addr, sa, ea, sb, eb)
		}
	}
	if s, err := readString(mf, base, maxPathLen); s != "/bin/true" || err != nil {
		t.Errorf("readString = %q, %v", s, err)
	}
}
