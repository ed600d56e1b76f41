// Package sockdiag is the netlink framing of a sock_diag dump
// (NETLINK_SOCK_DIAG): sending one request and reading the kernel's reply
// datagrams message by message until NLMSG_DONE. What a message holds
// (unix_diag's names, inet_diag's addresses) is its caller's to read.
package sockdiag

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
)

// Netlink's framing (linux/netlink.h), spelled out so that Walk builds and
// is fuzzed on every system.
const (
	HdrLen      = 16  // struct nlmsghdr
	MsgDone     = 0x3 // NLMSG_DONE
	MsgError    = 0x2 // NLMSG_ERROR
	errorMinLen = 4   // struct nlmsgerr's error field
)

// Walk reads one datagram of a sock_diag dump and hands each message's
// payload (after its header) to each, but for NLMSG_DONE, which ends the
// dump (done), and NLMSG_ERROR, which is an error, as is a datagram whose
// messages do not add up: the caller falls back or fails rather than
// trust half a list.
func Walk(b []byte, each func(payload []byte)) (done bool, err error) {
	for len(b) > 0 {
		if len(b) < HdrLen {
			return false, fmt.Errorf("sock_diag reply: %d bytes left, less than a message header", len(b))
		}
		l := binary.NativeEndian.Uint32(b)
		if l < HdrLen || l > uint32(len(b)) {
			return false, fmt.Errorf("sock_diag reply: message length %d of %d bytes", l, len(b))
		}
		typ := binary.NativeEndian.Uint16(b[4:])
		data := b[HdrLen:l]
		b = b[min(int(l+3)&^3, len(b)):] // messages are aligned to 4 bytes
		switch typ {
		case MsgDone:
			return true, nil
		case MsgError:
			if len(data) >= errorMinLen {
				if e := int32(binary.NativeEndian.Uint32(data)); e < 0 {
					return false, fmt.Errorf("sock_diag: %w", syscall.Errno(-e))
				}
			}
			return false, errors.New("sock_diag: error reply")
		}
		each(data)
	}
	return false, nil
}
