//go:build linux

package nsnet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The proxy namespace's nf_tables transaction is written and sent here,
// not through github.com/google/nftables, which encodes the same messages
// (TestRulesBatchMatchesLibrary holds the two to the same bytes; the
// library is that test's reference). Its transport (mdlayher/netlink: a
// socket on Go's poller, the poller's first use in init; two recvmsg and a
// fresh 4 KiB buffer for each of ~25 replies, as it asks an echo of every
// rule) took 1.8-3.4 ms of init's network setup at every proxied start
// here, on the path to the agent; one sendto(2) and the acks read into
// one buffer take 0.25-0.55 ms, most of it the kernel's work on the batch.

// Constants of linux/netfilter.h, linux/netfilter_ipv4.h and
// linux/netfilter/nf_tables.h that x/sys/unix does not define.
const (
	nfDrop   = 0 // NF_DROP
	nfAccept = 1 // NF_ACCEPT

	nfIPPriMangle = -150 // NF_IP_PRI_MANGLE
	nfIPPriFilter = 0    // NF_IP_PRI_FILTER

	nftaTProxyFamily  = 1 // NFTA_TPROXY_FAMILY
	nftaTProxyRegAddr = 2 // NFTA_TPROXY_REG_ADDR
	nftaTProxyRegPort = 3 // NFTA_TPROXY_REG_PORT
)

// nftBatch is one nf_tables transaction: NFNL_MSG_BATCH_BEGIN, the
// messages, NFNL_MSG_BATCH_END, in one buffer for one sendto(2). Every
// message between asks for an ack; what each says is kept for errors.
type nftBatch struct {
	buf   []byte
	seq   uint32
	whats map[uint32]string // sequence number -> what the message makes
}

func newNFTBatch() *nftBatch {
	b := &nftBatch{whats: map[uint32]string{}}
	b.message(unix.NFNL_MSG_BATCH_BEGIN, unix.NLM_F_REQUEST, 0, unix.NFNL_SUBSYS_NFTABLES, "", nil)
	return b
}

// message appends one netlink message: its header, the nfgenmsg (family,
// version 0, resource id big-endian) and the attributes attrs writes.
func (b *nftBatch) message(typ, flags uint16, family uint8, resID uint16, what string, attrs func(*nlAttrs)) {
	b.seq++
	start := len(b.buf)
	b.buf = binary.NativeEndian.AppendUint32(b.buf, 0) // nlmsg_len, below
	b.buf = binary.NativeEndian.AppendUint16(b.buf, typ)
	b.buf = binary.NativeEndian.AppendUint16(b.buf, flags)
	b.buf = binary.NativeEndian.AppendUint32(b.buf, b.seq)
	b.buf = binary.NativeEndian.AppendUint32(b.buf, 0) // nlmsg_pid: the kernel's
	b.buf = append(b.buf, family, unix.NFNETLINK_V0)
	b.buf = binary.BigEndian.AppendUint16(b.buf, resID)
	if attrs != nil {
		a := nlAttrs{b: b.buf}
		attrs(&a)
		b.buf = a.b
	}
	binary.NativeEndian.PutUint32(b.buf[start:], uint32(len(b.buf)-start))
	if what != "" {
		b.whats[b.seq] = what
	}
}

// nftMsg is a message of the nf_tables subsystem that asks for an ack.
func (b *nftBatch) nftMsg(msg uint16, extra uint16, family uint8, what string, attrs func(*nlAttrs)) {
	b.message(unix.NFNL_SUBSYS_NFTABLES<<8|msg, unix.NLM_F_REQUEST|unix.NLM_F_ACK|extra, family, 0, what, attrs)
}

// table adds `table FAMILY NAME`.
func (b *nftBatch) table(family uint8, name string) {
	b.nftMsg(unix.NFT_MSG_NEWTABLE, unix.NLM_F_CREATE, family, fmt.Sprintf("table %s %s", familyName(family), name), func(a *nlAttrs) {
		a.str(unix.NFTA_TABLE_NAME, name)
		a.u32(unix.NFTA_TABLE_FLAGS, 0)
	})
}

// baseChain adds a chain of type filter on hook at priority with policy.
func (b *nftBatch) baseChain(family uint8, table, name string, hook, priority int32, policy uint32) {
	b.nftMsg(unix.NFT_MSG_NEWCHAIN, unix.NLM_F_CREATE, family, fmt.Sprintf("chain %s %s %s", familyName(family), table, name), func(a *nlAttrs) {
		a.str(unix.NFTA_CHAIN_TABLE, table)
		a.str(unix.NFTA_CHAIN_NAME, name)
		a.nest(unix.NFTA_CHAIN_HOOK, func(a *nlAttrs) {
			a.u32(unix.NFTA_HOOK_HOOKNUM, uint32(hook))
			a.u32(unix.NFTA_HOOK_PRIORITY, uint32(priority))
		})
		a.u32(unix.NFTA_CHAIN_POLICY, policy)
		a.str(unix.NFTA_CHAIN_TYPE, "filter")
	})
}

// rule appends a rule of exprs to the chain (no NLM_F_ECHO: its handle is
// of no use here, and each echo is a message the kernel builds and sends).
func (b *nftBatch) rule(family uint8, table, chain string, n int, exprs ...nftExpr) {
	b.nftMsg(unix.NFT_MSG_NEWRULE, unix.NLM_F_CREATE|unix.NLM_F_APPEND, family, fmt.Sprintf("rule %d of chain %s %s %s", n, familyName(family), table, chain), func(a *nlAttrs) {
		a.str(unix.NFTA_RULE_TABLE, table)
		a.str(unix.NFTA_RULE_CHAIN, chain)
		a.nest(unix.NFTA_RULE_EXPRESSIONS, func(a *nlAttrs) {
			for _, e := range exprs {
				a.nest(unix.NFTA_LIST_ELEM, func(a *nlAttrs) {
					a.str(unix.NFTA_EXPR_NAME, e.name)
					a.nest(unix.NFTA_EXPR_DATA, e.data)
				})
			}
		})
	})
}

// bytes ends the batch and returns it; called once.
func (b *nftBatch) bytes() []byte {
	b.message(unix.NFNL_MSG_BATCH_END, unix.NLM_F_REQUEST, 0, unix.NFNL_SUBSYS_NFTABLES, "", nil)
	return b.buf
}

func familyName(f uint8) string {
	switch f {
	case unix.NFPROTO_IPV4:
		return "ip"
	case unix.NFPROTO_IPV6:
		return "ip6"
	}
	return fmt.Sprint("family ", f)
}

// nlAttrs appends netlink attributes: a 4-byte header (length, type), the
// payload, padding to 4 bytes. Integers of nf_tables are big-endian.
type nlAttrs struct{ b []byte }

func (a *nlAttrs) attr(typ uint16, data []byte) {
	a.b = binary.NativeEndian.AppendUint16(a.b, uint16(4+len(data)))
	a.b = binary.NativeEndian.AppendUint16(a.b, typ)
	a.b = append(a.b, data...)
	a.pad()
}

func (a *nlAttrs) pad() {
	for len(a.b)%4 != 0 {
		a.b = append(a.b, 0)
	}
}

func (a *nlAttrs) str(typ uint16, s string) { a.attr(typ, append([]byte(s), 0)) }
func (a *nlAttrs) u32(typ uint16, v uint32) { a.attr(typ, binary.BigEndian.AppendUint32(nil, v)) }
func (a *nlAttrs) u8(typ uint16, v uint8)   { a.attr(typ, []byte{v}) }

// nest writes a nested attribute (NLA_F_NESTED) of what inner appends.
func (a *nlAttrs) nest(typ uint16, inner func(*nlAttrs)) {
	start := len(a.b)
	a.b = append(a.b, 0, 0, 0, 0)
	inner(a)
	binary.NativeEndian.PutUint16(a.b[start:], uint16(len(a.b)-start))
	binary.NativeEndian.PutUint16(a.b[start+2:], typ|unix.NLA_F_NESTED)
}

// nftExpr is one expression of a rule: its name and its attributes.
type nftExpr struct {
	name string
	data func(*nlAttrs)
}

// metaLoad: `meta KEY` into register reg.
func metaLoad(key, reg uint32) nftExpr {
	return nftExpr{"meta", func(a *nlAttrs) {
		a.u32(unix.NFTA_META_KEY, key)
		a.u32(unix.NFTA_META_DREG, reg)
	}}
}

// metaSet: `meta KEY set` from register reg.
func metaSet(key, reg uint32) nftExpr {
	return nftExpr{"meta", func(a *nlAttrs) {
		a.u32(unix.NFTA_META_KEY, key)
		a.u32(unix.NFTA_META_SREG, reg)
	}}
}

// cmpEq: register reg equals data.
func cmpEq(reg uint32, data []byte) nftExpr {
	return nftExpr{"cmp", func(a *nlAttrs) {
		a.u32(unix.NFTA_CMP_SREG, reg)
		a.u32(unix.NFTA_CMP_OP, unix.NFT_CMP_EQ)
		a.nest(unix.NFTA_CMP_DATA, func(a *nlAttrs) { a.attr(unix.NFTA_DATA_VALUE, data) })
	}}
}

// immediate: data into register reg.
func immediate(reg uint32, data []byte) nftExpr {
	return nftExpr{"immediate", func(a *nlAttrs) {
		a.u32(unix.NFTA_IMMEDIATE_DREG, reg)
		a.nest(unix.NFTA_IMMEDIATE_DATA, func(a *nlAttrs) { a.attr(unix.NFTA_DATA_VALUE, data) })
	}}
}

// verdict: accept or drop (nfAccept, nfDrop), an immediate into the
// verdict register.
func verdict(code uint32) nftExpr {
	return nftExpr{"immediate", func(a *nlAttrs) {
		a.u32(unix.NFTA_IMMEDIATE_DREG, unix.NFT_REG_VERDICT)
		a.nest(unix.NFTA_IMMEDIATE_DATA, func(a *nlAttrs) {
			a.nest(unix.NFTA_DATA_VERDICT, func(a *nlAttrs) { a.u32(unix.NFTA_VERDICT_CODE, code) })
		})
	}}
}

// tproxy4: `tproxy to` the IPv4 address and port in registers addr, port.
func tproxy4(addr, port uint32) nftExpr {
	return nftExpr{"tproxy", func(a *nlAttrs) {
		a.u32(nftaTProxyFamily, unix.NFPROTO_IPV4)
		a.u32(nftaTProxyRegPort, port) // the library's order, which the kernel does not mind
		a.u32(nftaTProxyRegAddr, addr)
	}}
}

// payloadLoad: len bytes at offset of the header base into register reg.
func payloadLoad(reg, base, offset, length uint32) nftExpr {
	return nftExpr{"payload", func(a *nlAttrs) {
		a.u32(unix.NFTA_PAYLOAD_DREG, reg)
		a.u32(unix.NFTA_PAYLOAD_BASE, base)
		a.u32(unix.NFTA_PAYLOAD_OFFSET, offset)
		a.u32(unix.NFTA_PAYLOAD_LEN, length)
	}}
}

// rejectICMP: `reject with icmp CODE`.
func rejectICMP(code uint8) nftExpr {
	return nftExpr{"reject", func(a *nlAttrs) {
		a.u32(unix.NFTA_REJECT_TYPE, unix.NFT_REJECT_ICMP_UNREACH)
		a.u8(unix.NFTA_REJECT_ICMP_CODE, code)
	}}
}

// nftAckWait bounds the wait for the kernel's acks: they are queued while
// sendto runs (nfnetlink handles a batch in the sender's context), so this
// only ends a wait for an ack that never comes.
const nftAckWait = 2 * time.Second

// sendNFT sends the batch on a netlink socket of the calling thread's
// network namespace and waits until every message is acknowledged. The
// first error the kernel reports ends it, with what the message made.
func sendNFT(b *nftBatch) error {
	batch := b.bytes()
	// Made on this thread: the socket is of its network namespace for good.
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
	if err != nil {
		return os.NewSyscallError("socket(AF_NETLINK, NETLINK_NETFILTER)", err)
	}
	defer unix.Close(fd)
	tv := unix.NsecToTimeval(nftAckWait.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return os.NewSyscallError("setsockopt(SO_RCVTIMEO)", err)
	}
	if err := unix.Sendto(fd, batch, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return os.NewSyscallError("sendto(nf_tables batch)", err)
	}
	want := len(b.whats)
	acked := map[uint32]bool{}
	buf := make([]byte, 64<<10)
	for len(acked) < want {
		n, from, err := unix.Recvfrom(fd, buf, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%d of %d nf_tables messages acknowledged: %w", len(acked), want, os.NewSyscallError("recvfrom", err))
		}
		// Only the kernel's answers (port 0) count, as addLocalRoute's:
		// another process may address this socket's port.
		if sa, ok := from.(*unix.SockaddrNetlink); !ok || sa.Pid != 0 {
			continue
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return fmt.Errorf("nf_tables answer: %w", err)
		}
		for _, m := range msgs {
			if m.Header.Type != unix.NLMSG_ERROR {
				continue // no echo was asked; nothing else is expected
			}
			if len(m.Data) < 4 {
				return errors.New("nf_tables: a short NLMSG_ERROR")
			}
			// An ack carries the sequence number of the message it answers.
			seq := m.Header.Seq
			what, ours := b.whats[seq]
			if errno := int32(binary.NativeEndian.Uint32(m.Data)); errno != 0 {
				if !ours {
					what = fmt.Sprintf("message %d of the batch", seq)
				}
				return fmt.Errorf("%s: %w", what, unix.Errno(-errno))
			}
			if ours {
				acked[seq] = true
			}
		}
	}
	return nil
}
