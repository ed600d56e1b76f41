package procnet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// Netlink message types and inet_diag's layout (linux/netlink.h,
// linux/inet_diag.h), spelled out so that the parser builds and is
// fuzzed on every system.
const (
	nlmsgHdrLen = 16
	nlmsgError  = 2
	nlmsgDone   = 3
	// diagMsgLen is struct inet_diag_msg's fixed part: family, state,
	// timer, retrans, then the socket id (sport, dport, src[16], dst[16],
	// if, cookie[2]), expires, rqueue, wqueue, uid, inode.
	diagMsgLen = 72
)

// parseDiag reads one datagram of inet_diag's dump: the listening
// sockets' local addresses it holds, and whether the dump is done. An
// error message from the kernel, or a message that overruns the datagram,
// is an error.
func parseDiag(b []byte) (out []netip.AddrPort, done bool, err error) {
	for len(b) >= nlmsgHdrLen {
		l := int(binary.NativeEndian.Uint32(b[0:]))
		typ := binary.NativeEndian.Uint16(b[4:])
		if l < nlmsgHdrLen || l > len(b) {
			return nil, false, errors.New("sock_diag reply: a message overruns its datagram")
		}
		body := b[nlmsgHdrLen:l]
		switch typ {
		case nlmsgDone:
			return out, true, nil
		case nlmsgError:
			if len(body) >= 4 {
				if e := int32(binary.NativeEndian.Uint32(body)); e != 0 {
					return nil, false, fmt.Errorf("sock_diag reply: error %d", -e)
				}
			}
			return nil, false, errors.New("sock_diag reply: an error message")
		default:
			if len(body) >= diagMsgLen {
				if a, ok := diagAddr(body); ok {
					out = append(out, a)
				}
			}
		}
		// Messages are aligned to 4 bytes.
		next := (l + 3) &^ 3
		if next > len(b) {
			break
		}
		b = b[next:]
	}
	return out, false, nil
}

// diagAddr is the local address of one struct inet_diag_msg: the source
// of its socket id, in network byte order.
func diagAddr(m []byte) (netip.AddrPort, bool) {
	port := binary.BigEndian.Uint16(m[4:6])
	var a netip.Addr
	switch m[0] {
	case 2: // AF_INET
		a = netip.AddrFrom4([4]byte(m[8:12]))
	case 10: // AF_INET6
		a = netip.AddrFrom16([16]byte(m[8:24]))
	default:
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(a, port), true
}
