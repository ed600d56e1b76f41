//go:build linux

package nsnet

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// installRules loads, in the namespace fdP, the ip table NFTTable and the
// ip6 table of the same name:
//
//	table ip jail {
//	  chain pre   { type filter hook prerouting priority mangle; policy accept;
//	    iifname veth0 meta l4proto tcp meta mark set 1 tproxy to 127.0.0.1:PORT accept
//	    iifname veth0 meta l4proto udp meta mark set 1 accept
//	    iifname veth0 meta l4proto icmp drop }
//	  chain input { type filter hook input priority filter; policy accept;
//	    iifname veth0 meta l4proto tcp accept
//	    iifname veth0 ip daddr GW udp dport 53 accept
//	    iifname veth0 meta l4proto udp reject with icmp port-unreachable
//	    iifname veth0 drop }
//	  chain fwd   { type filter hook forward priority filter; policy drop; } }
//	table ip6 jail {
//	  chain pre   { type filter hook prerouting priority mangle; policy accept;
//	    iifname veth0 drop } }
//
// in one netlink batch (atomic: all or nothing). Two tables, not one inet
// table, for the same packets' fate: an inet table hooks every chain for
// IPv6 too, and each hook the kernel registers where no other namespace has
// one is a patch of its text (a static key, synchronised on every CPU: about
// 0.3 ms each here, most of this batch, on a host without netfilter rules of
// its own). IPv6 from the sandbox meets one hook, the drop before routing,
// so its input and forward hooks were never reached (this is the second
// layer: S and P have IPv6 disabled, and an IPv6 packet on veth0 is dropped
// by the kernel before any hook).
func installRules(fdP int, gw netip.Addr, port uint16) error {
	// This runs on the locked thread that is in P, so a plain netlink socket
	// is P's. WithNetNSFd would make the library enter the namespace through
	// /proc/self/task/<tid>/ns/net, which does not exist when the caller is in
	// a new pid namespace with the host's /proc still mounted (init's case).
	_ = fdP
	c, err := nftables.New()
	if err != nil {
		return fmt.Errorf("nftables: open netlink in proxy namespace: %w", err)
	}
	accept, drop := nftables.ChainPolicyAccept, nftables.ChainPolicyDrop
	t := c.AddTable(&nftables.Table{Family: nftables.TableFamilyIPv4, Name: NFTTable})
	pre := c.AddChain(&nftables.Chain{Name: "pre", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityMangle, Policy: &accept})
	in := c.AddChain(&nftables.Chain{Name: "input", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookInput, Priority: nftables.ChainPriorityFilter, Policy: &accept})
	// Nothing is ever forwarded through P; P has no uplink, and this makes it not
	// depend on net.ipv4.conf.all.forwarding either.
	c.AddChain(&nftables.Chain{Name: "fwd", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookForward, Priority: nftables.ChainPriorityFilter, Policy: &drop})
	t6 := c.AddTable(&nftables.Table{Family: nftables.TableFamilyIPv6, Name: NFTTable})
	pre6 := c.AddChain(&nftables.Chain{Name: "pre", Table: t6, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityMangle, Policy: &accept})

	fromVeth := []expr.Any{
		&expr.Meta{Key: expr.MetaKeyIIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ifname(ProxyIface)},
	}
	rule := func(ch *nftables.Chain, e ...expr.Any) {
		c.AddRule(&nftables.Rule{Table: ch.Table, Chain: ch, Exprs: append(append([]expr.Any{}, fromVeth...), e...)})
	}
	l4proto := func(p byte) []expr.Any {
		return []expr.Any{&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{p}}}
	}
	cat := func(parts ...[]expr.Any) []expr.Any {
		var out []expr.Any
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	verdict := func(k expr.VerdictKind) []expr.Any { return []expr.Any{&expr.Verdict{Kind: k}} }

	// IPv6 from the sandbox is dropped before routing: S has IPv6 disabled on eth0,
	// this is the second layer ("never leave IPv6 to chance").
	rule(pre6, verdict(expr.VerdictDrop)...)
	lo := [4]byte{127, 0, 0, 1}
	mark := make([]byte, 4)
	binary.NativeEndian.PutUint32(mark, TProxyMark) // meta mark is host-endian
	pbe := make([]byte, 2)
	binary.BigEndian.PutUint16(pbe, port)
	rule(pre, cat(l4proto(unix.IPPROTO_TCP), []expr.Any{
		&expr.Immediate{Register: 1, Data: mark},
		&expr.Meta{Key: expr.MetaKeyMARK, SourceRegister: true, Register: 1},
		&expr.Immediate{Register: 1, Data: lo[:]},
		&expr.Immediate{Register: 2, Data: pbe},
		&expr.TProxy{Family: unix.NFPROTO_IPV4, TableFamily: unix.NFPROTO_IPV4, RegAddr: 1, RegPort: 2},
	}, verdict(expr.VerdictAccept))...)
	// UDP is marked too, so that every datagram (whatever its destination) is
	// delivered locally and meets the input chain: DNS to GW:53 is accepted, the
	// rest rejected. Unmarked, a datagram to a remote address would be dropped
	// silently by the routing code (ip_error sends no ICMP when forwarding is off)
	// and the sandbox would wait for a timeout instead of failing fast.
	rule(pre, cat(l4proto(unix.IPPROTO_UDP), []expr.Any{
		&expr.Immediate{Register: 1, Data: mark},
		&expr.Meta{Key: expr.MetaKeyMARK, SourceRegister: true, Register: 1},
	}, verdict(expr.VerdictAccept))...)
	// ICMP from the sandbox (ping, crafted errors) goes nowhere.
	rule(pre, cat(l4proto(unix.IPPROTO_ICMP), verdict(expr.VerdictDrop))...)

	rule(in, cat(l4proto(unix.IPPROTO_TCP), verdict(expr.VerdictAccept))...)
	g := gw.As4()
	rule(in, cat(l4proto(unix.IPPROTO_UDP), []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: g[:]},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{0, 53}},
	}, verdict(expr.VerdictAccept))...)
	// Other UDP fails fast in the sandbox (ICMP port unreachable -> ECONNREFUSED on
	// a connected socket) instead of timing out; it is never forwarded.
	rule(in, cat(l4proto(unix.IPPROTO_UDP), []expr.Any{
		&expr.Reject{Type: unix.NFT_REJECT_ICMP_UNREACH, Code: icmpPortUnreach},
	})...)
	rule(in, verdict(expr.VerdictDrop)...)

	if err := c.Flush(); err != nil {
		return fmt.Errorf("nftables: load tables ip and ip6 %s (tproxy, reject): %w", NFTTable, err)
	}
	return nil
}

// icmpPortUnreach is ICMP_PORT_UNREACH (linux/icmp.h), the code of the
// destination-unreachable an ip table's reject sends.
const icmpPortUnreach = 3

// ifname pads an interface name to IFNAMSIZ as nft's iifname comparison expects.
func ifname(n string) []byte {
	b := make([]byte, unix.IFNAMSIZ)
	copy(b, n)
	return b
}
