package hostsock

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

const udiagShowName = 0x1 // UDIAG_SHOW_NAME

// procNetUnix is the fallback's list (a test seam).
var procNetUnix = "/proc/net/unix"

// Bound returns the absolute paths of the reachable path-bound Unix sockets
// of the calling process's network namespace, each once, as their binders
// gave them (not resolved).
func Bound() ([]string, error) {
	paths, err := diag()
	if err == nil {
		return paths, nil
	}
	paths, ferr := fromProc(procNetUnix)
	if ferr != nil {
		return nil, errors.Join(err, ferr)
	}
	return paths, nil
}

// diag asks unix_diag for every socket with its name. Not filtered by
// state: when a client connect(2)s a datagram socket, the kernel marks both
// ends established, and the server's end still takes anyone's datagrams
// (the journal's and syslog's sockets).
func diag() ([]string, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, fmt.Errorf("sock_diag socket: %w", err)
	}
	defer unix.Close(fd)
	// nlmsghdr (16 bytes) + struct unix_diag_req (24 bytes).
	req := make([]byte, unix.NLMSG_HDRLEN+24)
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(req[8:], 1) // sequence number
	r := req[unix.NLMSG_HDRLEN:]
	r[0] = unix.AF_UNIX
	binary.NativeEndian.PutUint32(r[4:], ^uint32(0))     // udiag_states: all
	binary.NativeEndian.PutUint32(r[12:], udiagShowName) // udiag_show
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("sock_diag request: %w", err)
	}
	var n names
	buf := make([]byte, 32<<10)
	for {
		k, from, err := unix.Recvfrom(fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("sock_diag reply: %w", err)
		}
		// Why: only the kernel's reply is the list. Another process
		// needs CAP_NET_ADMIN to send to this socket (sock_diag does not
		// take unprivileged unicast), so this is a belt to that brace.
		if sa, ok := from.(*unix.SockaddrNetlink); !ok || sa.Pid != 0 {
			return nil, fmt.Errorf("sock_diag reply: from %#v, not the kernel", from)
		}
		done, err := parseDiag(buf[:k], &n)
		if err != nil {
			return nil, err
		}
		if done {
			return n.out, nil
		}
	}
}

// fromProc reads the same list from /proc/net/unix (parseProc). A reading
// of a name over several lines is kept where it is a socket: a name with a
// newline is listed, the many readings that are no name are not.
func fromProc(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	paths, overrun := parseProc(data)
	for _, p := range overrun {
		// Why: the kernel prints a name's newline as it is; the socket
		// of such a name is found only by its joined reading.
		if fi, err := os.Lstat(p); err == nil && fi.Mode().Type() == os.ModeSocket && !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	return paths, nil
}
