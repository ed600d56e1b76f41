package hostsock

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

const (
	udiagShowName = 0x1 // UDIAG_SHOW_NAME
	unixDiagName  = 0   // UNIX_DIAG_NAME attribute
)

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
	seen := map[string]bool{}
	var out []string
	buf := make([]byte, 32<<10)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("sock_diag reply: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return nil, fmt.Errorf("sock_diag reply: %w", err)
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return out, nil
			case unix.NLMSG_ERROR:
				if len(m.Data) >= 4 {
					if e := int32(binary.NativeEndian.Uint32(m.Data)); e < 0 {
						return nil, fmt.Errorf("sock_diag: %w", syscall.Errno(-e))
					}
				}
				return nil, errors.New("sock_diag: error reply")
			}
			// struct unix_diag_msg (16 bytes), then attributes.
			if len(m.Data) < 16 {
				continue
			}
			a := m.Data[16:]
			for len(a) >= 4 {
				l := int(binary.NativeEndian.Uint16(a))
				if l < 4 || l > len(a) {
					break
				}
				if binary.NativeEndian.Uint16(a[2:]) == unixDiagName {
					add(&out, seen, string(a[4:l]))
				}
				a = a[min((l+3)&^3, len(a)):]
			}
		}
	}
}

// add keeps an absolute path once. Abstract names start with a NUL (or
// '@' in /proc/net/unix): they are per network namespace, and Landlock
// scopes them; a relative path cannot be placed.
func add(out *[]string, seen map[string]bool, p string) {
	if i := strings.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	if !strings.HasPrefix(p, "/") || seen[p] {
		return
	}
	seen[p] = true
	*out = append(*out, p)
}

// fromProc reads the same list from /proc/net/unix: "Num RefCount Protocol
// Flags Type St Inode [Path]"; every line with a path, as diag.
func fromProc(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for first := true; sc.Scan(); first = false {
		line := sc.Text()
		if first || len(strings.Fields(line)) < 8 {
			continue // the header, an unnamed socket
		}
		// The path is what follows the seventh field, spaces and all.
		for range 7 {
			line = strings.TrimLeft(line, " ")
			line = line[strings.IndexByte(line, ' ')+1:]
		}
		add(&out, seen, strings.TrimLeft(line, " "))
	}
	return out, sc.Err()
}
