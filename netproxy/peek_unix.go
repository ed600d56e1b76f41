//go:build unix

package netproxy

import (
	"syscall"
	"unsafe"
)

// peekByte looks at the next byte of the socket fd without taking it and
// without blocking: n is 1 when a byte is there, 0 at the end of the stream;
// EAGAIN when nothing is there yet.
func peekByte(fd uintptr) (int, error) {
	var b [1]byte
	n, _, e := syscall.Syscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1, syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
