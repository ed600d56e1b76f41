package nsnet

import (
	"encoding/binary"
	"net/netip"
)

// This file: what a reset watch (Result.Resets) reads. Under --net none a
// connect to a refused name's fake address at a port no refusal listener
// has is reset by the sandbox's own loopback: the client says "connection
// refused", which reads as a server that is down, and jail never saw the
// flow. The kernel's answer, a RST|ACK from the fake address, is what the
// watch receives (its filter passes nothing else); ParseReset names the
// flow it refused, for the supervisor to say. So are the loopback's
// refusals of a connect to a port where nothing inside listens, which the
// supervisor names when the host's loopback has a server at that port
// (--allow-host-port makes it the sandbox's).

// tcpRST and tcpACK are TCP header flag bits (RFC 9293 3.1).
const (
	tcpRST = 0x04
	tcpACK = 0x10
)

// ParseReset reads one IPv4 packet as the reset watch receives it (from
// its IP header on) and returns the flow the reset refused: the address
// and port the client dialled, which are the reset's source. ok is false
// for anything else: not IPv4 TCP, a fragment, a header cut short, not
// RST|ACK, a loopback reset with a sequence number other than 0. The
// watch's filter checks the same in the kernel; this is the supervisor's
// own check of what it is handed.
func ParseReset(p []byte) (dialled netip.AddrPort, ok bool) {
	if len(p) < 20 || p[0]>>4 != 4 {
		return netip.AddrPort{}, false
	}
	ihl := int(p[0]&0x0f) * 4
	if ihl < 20 || p[9] != 6 || binary.BigEndian.Uint16(p[6:8])&0x1fff != 0 || len(p) < ihl+14 {
		return netip.AddrPort{}, false
	}
	tcp := p[ihl:]
	if tcp[13]&(tcpRST|tcpACK) != tcpRST|tcpACK {
		return netip.AddrPort{}, false
	}
	src := netip.AddrFrom4([4]byte(p[12:16]))
	if src.IsLoopback() && binary.BigEndian.Uint32(tcp[4:8]) != 0 {
		// The loopback's resets the watch takes are the kernel's refusals
		// of a SYN, sequence number 0 (filterResets).
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(src, binary.BigEndian.Uint16(tcp[0:2])), true
}
