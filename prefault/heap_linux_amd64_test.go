package prefault

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident counts the pages of b in memory (mincore(2)).
func resident(t *testing.T, b []byte) int {
	t.Helper()
	vec := make([]byte, (len(b)+4095)/4096)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// More leaves the cut-off part of the window while it is reserved but not
// mapped (as the Go runtime reserves its heap: PROT_NONE), makes it once
// it is mapped read and write, and is a no-op after that. Seen failing
// with More dropping the part on a refusal, and with its madvise removed
// (both: the part dropped while it was not mapped).
func TestMoreMakesTheCutPartOnceMapped(t *testing.T) {
	const size = 64 * 4096
	b, err := unix.Mmap(-1, 0, size, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(b)
	old := heapNext.Load()
	defer heapNext.Store(old)
	heapNext.Store(&[2]uintptr{uintptr(unsafe.Pointer(&b[0])), size})

	More() // reserved only: refused, kept for later
	if heapNext.Load() == nil {
		t.Fatal("More dropped the part while it was not mapped")
	}
	if err := unix.Mprotect(b, unix.PROT_READ|unix.PROT_WRITE); err != nil {
		t.Fatal(err)
	}
	if n := resident(t, b); n != 0 {
		t.Fatalf("%d pages resident before More", n)
	}
	More()
	if n := resident(t, b); n != 64 {
		t.Errorf("%d of 64 pages resident after More, want all", n)
	}
	if heapNext.Load() != nil {
		t.Error("More kept the part after making it")
	}
	More() // nothing left: no-op
}
