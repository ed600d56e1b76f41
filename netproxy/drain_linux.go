package netproxy

import (
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxDrain bounds the flows taken from a listener's queue at its end.
const maxDrain = 256

// queued accepts, without waiting, the connections the kernel completed on
// ln that Accept has not taken yet (a client that connected and exited in
// the run's last instant): closing ln would drop them unseen.
func queued(ln net.Listener) []net.Conn {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	var fds []int
	_ = rc.Control(func(fd uintptr) {
		for len(fds) < maxDrain {
			// The listener is non-blocking (Go's): EAGAIN once empty.
			nfd, _, err := unix.Accept4(int(fd), unix.SOCK_CLOEXEC)
			if err != nil {
				return
			}
			fds = append(fds, nfd)
		}
	})
	var out []net.Conn
	for _, fd := range fds {
		f := os.NewFile(uintptr(fd), "queued")
		c, err := net.FileConn(f)
		f.Close()
		if err == nil {
			out = append(out, c)
		}
	}
	return out
}
