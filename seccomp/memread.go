package seccomp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Limits for what Serve copies out of an exec'ing process. The kernel's own
// limits are larger (MAX_ARG_STRLEN 128 KiB per string, ARG_MAX total);
// past these the event says "truncated" and the Guard sees the prefix.
const (
	maxPathLen  = 4096      // PATH_MAX
	maxArgLen   = 128 << 10 // MAX_ARG_STRLEN
	maxArgs     = 16384
	maxArgBytes = 512 << 10
	pageSize    = 4096 // chunking unit only: reads never cross a 4 KiB boundary
)

var (
	errTruncated = errors.New("truncated")
	errBadAddr   = errors.New("bad address")
)

// readString reads a NUL-terminated string at addr from r (the target's
// /proc/PID/mem), at most max bytes. Reads stop at 4 KiB boundaries so a
// string that ends just before an unmapped page is still read. On overflow
// it returns the first max bytes and errTruncated.
func readString(r io.ReaderAt, addr uint64, max int) (string, error) {
	if addr == 0 {
		return "", fmt.Errorf("read string at 0x0: %w", errBadAddr)
	}
	var out []byte
	buf := make([]byte, pageSize)
	for len(out) < max {
		if addr > 1<<63-1 {
			return string(out), fmt.Errorf("read string at %#x: %w", addr, errBadAddr)
		}
		n := pageSize - int(addr%pageSize)
		if rest := max - len(out); n > rest {
			n = rest
		}
		got, err := r.ReadAt(buf[:n], int64(addr))
		if i := bytes.IndexByte(buf[:got], 0); i >= 0 {
			return string(append(out, buf[:i]...)), nil
		}
		out = append(out, buf[:got]...)
		if err != nil || got < n {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return string(out), fmt.Errorf("read string at %#x: %w", addr, err)
		}
		addr += uint64(n)
	}
	return string(out), errTruncated
}

// readArgv reads a NULL-terminated array of little-endian 64-bit pointers
// at addr and the strings they point to. A NULL array is an empty argv
// (Linux accepts execve(path, NULL, ...)). On a limit it returns what it
// has and errTruncated.
func readArgv(r io.ReaderAt, addr uint64) ([]string, error) {
	if addr == 0 {
		return nil, nil
	}
	var argv []string
	total := 0
	var ptrs [pageSize]byte
	for {
		if addr > 1<<63-1 {
			return argv, fmt.Errorf("read argv at %#x: %w", addr, errBadAddr)
		}
		n := pageSize - int(addr%pageSize)
		n -= n % 8
		if n == 0 { // pointer straddles a page: read it alone
			n = 8
		}
		got, err := r.ReadAt(ptrs[:n], int64(addr))
		got -= got % 8
		for i := 0; i < got; i += 8 {
			p := binary.LittleEndian.Uint64(ptrs[i:])
			if p == 0 {
				return argv, nil
			}
			if len(argv) >= maxArgs || total >= maxArgBytes {
				return argv, errTruncated
			}
			s, serr := readString(r, p, min(maxArgLen, maxArgBytes-total))
			argv = append(argv, s)
			total += len(s) + 1
			if serr != nil {
				return argv, serr
			}
		}
		if err != nil || got < n {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return argv, fmt.Errorf("read argv at %#x: %w", addr, err)
		}
		addr += uint64(n)
	}
}
