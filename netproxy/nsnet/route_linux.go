//go:build linux

package nsnet

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// localRouteMsg is the rtnetlink request `ip route add local FAKE dev lo table
// local scope host proto boot` (what netlink.Handle.RouteAdd sends for that
// route: TestLocalRouteMsgAsNetlinkLibrary compares the bytes), with seq.
func localRouteMsg(lo int, fake netip.Prefix, seq uint32) []byte {
	const hdr = unix.SizeofNlMsghdr
	const rtm = unix.SizeofRtMsg
	const attr = unix.SizeofRtAttr + 4 // both attributes carry 4 bytes
	b := make([]byte, hdr+rtm+2*attr)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(len(b)))
	ne.PutUint16(b[4:], unix.RTM_NEWROUTE)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	ne.PutUint32(b[8:], seq)
	// pid 0: the kernel's
	m := b[hdr:]
	m[0] = unix.AF_INET
	m[1] = byte(fake.Bits()) // dst_len
	m[4] = unix.RT_TABLE_LOCAL
	m[5] = unix.RTPROT_BOOT
	m[6] = unix.RT_SCOPE_HOST
	m[7] = unix.RTN_LOCAL
	a := b[hdr+rtm:]
	ne.PutUint16(a[0:], attr)
	ne.PutUint16(a[2:], unix.RTA_DST)
	dst := fake.Masked().Addr().As4()
	copy(a[4:], dst[:])
	a = a[attr:]
	ne.PutUint16(a[0:], attr)
	ne.PutUint16(a[2:], unix.RTA_OIF)
	ne.PutUint32(a[4:], uint32(lo))
	return b
}

// addLocalRoute adds `local FAKE dev lo` to the local table of the calling
// thread's network namespace with one rtnetlink request on a socket of its
// own. The netlink library's RouteAdd does the same with a fresh 64 KiB
// receive buffer (16 pages zeroed, each a first touch at 18-30 µs on a
// paravirtualized VM) on every --net none start; the answer here is one
// nlmsgerr, read into a small buffer.
func addLocalRoute(lo int, fake netip.Prefix) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return os.NewSyscallError("socket(netlink)", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return os.NewSyscallError("bind(netlink)", err)
	}
	const seq = 1
	if err := unix.Sendto(fd, localRouteMsg(lo, fake, seq), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return os.NewSyscallError("sendto(netlink)", err)
	}
	var buf [512]byte
	for {
		n, from, err := unix.Recvfrom(fd, buf[:], 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return os.NewSyscallError("recvfrom(netlink)", err)
		}
		// Only the kernel's answer (port 0) counts: another process may
		// address this socket's port.
		if sa, ok := from.(*unix.SockaddrNetlink); !ok || sa.Pid != 0 {
			continue
		}
		return routeAck(buf[:n], seq)
	}
}

// routeAck reads the kernel's answer to request seq: nil for an ack, the
// errno it carries, or an error saying what was malformed.
func routeAck(b []byte, seq uint32) error {
	msgs, err := syscall.ParseNetlinkMessage(b)
	if err != nil {
		return fmt.Errorf("netlink answer: %w", err)
	}
	for _, m := range msgs {
		if m.Header.Seq != seq {
			continue
		}
		if m.Header.Type != unix.NLMSG_ERROR || len(m.Data) < 4 {
			return fmt.Errorf("netlink answer: type %d, want an ack", m.Header.Type)
		}
		if e := int32(binary.NativeEndian.Uint32(m.Data)); e != 0 {
			return unix.Errno(-e)
		}
		return nil
	}
	return fmt.Errorf("netlink answer: no ack for request %d", seq)
}
