package prefault

import (
	"sync/atomic"
	"syscall"
	"unsafe"
)

// The heap's first pages, made ahead. A Go program's heap memory comes
// from the kernel untouched: each 4 KiB page costs a fault the first time
// the program writes it (the allocator's zeroing, a span's header, a
// goroutine's stack), and on a virtual machine a fault costs 10-30 us
// (issue 16). jail's supervisor writes some 2-4 MiB of heap in a start
// (~550 faults, a fifth of its CPU time), the lean init ~600 KiB (~150
// faults, on the path to the agent's start). One madvise(2)
// MADV_POPULATE_WRITE (Linux 5.14) over the window of the heap a start
// writes makes those pages in the kernel, without a fault each.
//
// The window is found from the address of an object this package's init
// allocates (the heap's base is random: the Go runtime leaves a random
// number of pages unused at the start of its first chunk): heapBefore KiB
// below it and heapAfter KiB above, both within its 4 MiB chunk (the
// runtime maps its heap a whole chunk at a time, read and write, so the
// window is always memory of the heap; the next chunk is only reserved
// yet: the part of the window cut off there is made by More, once the
// heap has grown into it). Pages the start would not have written are
// made as well: memory, not behaviour (a few hundred KiB more resident).
//
// heapBefore and heapAfter are set by the program's link
// (-X github.com/jail-sandbox/jail/prefault.heapAfter=2048; the Makefile
// sizes them for jail and for the lean init); unset, or in a program that
// did not start at the entry, nothing is made. Refused (before 5.14: EINVAL)
// the program faults its pages in as before.
var heapBefore, heapAfter string

// heapResult: the window's start and length in bytes, and madvise's errno
// (0 done; the length is 0 when nothing was asked).
var heapResult [3]uintptr

// heapProbe is the object whose address places the window.
var heapProbe *[16]byte

const heapChunk = 4 << 20 // the runtime's pallocChunkBytes

func init() {
	if entryResult[0] == 0 {
		return // not started at the entry: a program that did not opt in
	}
	before, after := kib(heapBefore), kib(heapAfter)
	if before+after == 0 {
		return
	}
	heapProbe = new([16]byte)
	p := uintptr(unsafe.Pointer(heapProbe)) &^ 4095
	chunk := p &^ (heapChunk - 1)
	start := chunk
	if before < p-chunk {
		start = p - before
	}
	end := chunk + heapChunk
	if after < end-p {
		end = p + after
	}
	_, _, e := syscall.RawSyscall(syscall.SYS_MADVISE, start, end-start, madvPopulateWrite)
	heapResult = [3]uintptr{start, end - start, uintptr(e)}
	// The part the chunk's end cut off, for More: in the next chunk, when
	// that is in the same heap arena (the runtime grows its heap upward
	// through an arena's chunks; past an arena's end the next address may
	// be anything). Not where the kernel refused (More would only be
	// refused again).
	const arena = 64 << 20 // the runtime's heapArenaBytes (linux/amd64)
	if cut := p + after - end; e == 0 && p+after > end && end&^(arena-1) == chunk&^(arena-1) {
		heapNext.Store(&[2]uintptr{end, cut})
	}
}

// heapNext points to the start and length of the window's part in the next
// chunk, not made yet (nil: none left).
var heapNext atomic.Pointer[[2]uintptr]

// More makes the part of the heap's window that its chunk's end cut off,
// once the Go runtime has mapped the next chunk (its heap grew there); it
// is a no-op otherwise, and after it once made it. A program calls it at a
// few points of its start (jail: main's start, before and after the
// plan): one madvise(2), refused at once while the chunk is not mapped
// (its reservation is PROT_NONE: EINVAL).
func More() {
	w := heapNext.Load()
	if w == nil {
		return
	}
	_, _, e := syscall.RawSyscall(syscall.SYS_MADVISE, w[0], w[1], madvPopulateWrite)
	if e == syscall.EINVAL || e == syscall.ENOMEM {
		return // not mapped yet (PROT_NONE, or not at all): later
	}
	heapNext.CompareAndSwap(w, nil)
}

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14).
const madvPopulateWrite = 23

// kib parses a count of KiB as the link set it ("" and anything not a
// plain decimal: 0) and returns bytes.
func kib(s string) uintptr {
	n := uintptr(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' || n > 1<<20 {
			return 0
		}
		n = n*10 + uintptr(c-'0')
	}
	return n << 10
}

// HeapWindow says which part of the heap was made ahead at the start
// (start and length in bytes; length 0: none asked for) and the kernel's
// refusal (nil: made).
func HeapWindow() (start, length uintptr, err error) {
	if e := heapResult[2]; e != 0 {
		return heapResult[0], heapResult[1], syscall.Errno(e)
	}
	return heapResult[0], heapResult[1], nil
}
