package procnet

import (
	"encoding/binary"
	"net/netip"

	"github.com/jail-sandbox/jail/internal/sockdiag"
)

// diagMsgLen is struct inet_diag_msg's fixed part (linux/inet_diag.h):
// family, state, timer, retrans, then the socket id (sport, dport,
// src[16], dst[16], if, cookie[2]), expires, rqueue, wqueue, uid, inode.
const diagMsgLen = 72

// parseDiag reads one datagram of inet_diag's dump (sockdiag.Walk): the
// listening sockets' local addresses it holds, and whether the dump is
// done. An error message from the kernel, or a datagram whose messages do
// not add up, is an error.
func parseDiag(b []byte) (out []netip.AddrPort, done bool, err error) {
	done, err = sockdiag.Walk(b, func(body []byte) {
		if len(body) < diagMsgLen {
			return
		}
		if a, ok := diagAddr(body); ok {
			out = append(out, a)
		}
	})
	if err != nil {
		return nil, false, err
	}
	return out, done, nil
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
