//go:build linux

package sockdiag

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Dump sends one SOCK_DIAG_BY_FAMILY dump request whose body (after the
// netlink header, which Dump writes) is req, on a socket of its own, and
// hands each reply datagram to read until read says the dump is done.
func Dump(req []byte, read func(datagram []byte) (done bool, err error)) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return fmt.Errorf("sock_diag socket: %w", err)
	}
	defer unix.Close(fd)
	msg := make([]byte, HdrLen+len(req))
	binary.NativeEndian.PutUint32(msg[0:], uint32(len(msg)))
	binary.NativeEndian.PutUint16(msg[4:], unix.SOCK_DIAG_BY_FAMILY)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(msg[8:], 1) // sequence number
	copy(msg[HdrLen:], req)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("sock_diag request: %w", err)
	}
	buf := make([]byte, 32<<10)
	for {
		k, from, err := unix.Recvfrom(fd, buf, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("sock_diag reply: %w", err)
		}
		// Why: only the kernel's reply is the list. Another process
		// needs CAP_NET_ADMIN to send to this socket (sock_diag does not
		// take unprivileged unicast), so this is a belt to that brace.
		if sa, ok := from.(*unix.SockaddrNetlink); !ok || sa.Pid != 0 {
			return fmt.Errorf("sock_diag reply: from %#v, not the kernel", from)
		}
		done, err := read(buf[:k])
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}
