//go:build linux

package nsnet

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"

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
	// is P's (sendNFT makes it here). Entering the namespace by fdP through
	// /proc/self/task/<tid>/ns/net would not work: that path does not exist
	// when the caller is in a new pid namespace with the host's /proc still
	// mounted (init's case).
	_ = fdP
	if err := sendNFT(rulesBatch(gw, port)); err != nil {
		return fmt.Errorf("nftables: load tables ip and ip6 %s (tproxy, reject): %w", NFTTable, err)
	}
	return nil
}

// rulesBatch is installRules' transaction: the two tables, their four
// chains and nine rules, in that order.
func rulesBatch(gw netip.Addr, port uint16) *nftBatch {
	const ip, ip6 = unix.NFPROTO_IPV4, unix.NFPROTO_IPV6
	b := newNFTBatch()
	b.table(ip, NFTTable)
	b.baseChain(ip, NFTTable, "pre", unix.NF_INET_PRE_ROUTING, nfIPPriMangle, nfAccept)
	b.baseChain(ip, NFTTable, "input", unix.NF_INET_LOCAL_IN, nfIPPriFilter, nfAccept)
	// Nothing is ever forwarded through P; P has no uplink, and this makes it not
	// depend on net.ipv4.conf.all.forwarding either.
	b.baseChain(ip, NFTTable, "fwd", unix.NF_INET_FORWARD, nfIPPriFilter, nfDrop)
	b.table(ip6, NFTTable)
	b.baseChain(ip6, NFTTable, "pre", unix.NF_INET_PRE_ROUTING, nfIPPriMangle, nfAccept)

	const r1, r2 = unix.NFT_REG_1, unix.NFT_REG_2
	fromVeth := []nftExpr{metaLoad(unix.NFT_META_IIFNAME, r1), cmpEq(r1, ifname(ProxyIface))}
	n := map[string]int{}
	rule := func(family uint8, chain string, e ...nftExpr) {
		n[familyName(family)+chain]++
		b.rule(family, NFTTable, chain, n[familyName(family)+chain], append(slices.Clip(fromVeth), e...)...)
	}
	l4proto := func(p byte) []nftExpr {
		return []nftExpr{metaLoad(unix.NFT_META_L4PROTO, r1), cmpEq(r1, []byte{p})}
	}

	// IPv6 from the sandbox is dropped before routing: S has IPv6 disabled on eth0,
	// this is the second layer ("never leave IPv6 to chance").
	rule(ip6, "pre", verdict(nfDrop))
	lo := [4]byte{127, 0, 0, 1}
	mark := binary.NativeEndian.AppendUint32(nil, TProxyMark) // meta mark is host-endian
	pbe := binary.BigEndian.AppendUint16(nil, port)
	rule(ip, "pre", append(l4proto(unix.IPPROTO_TCP),
		immediate(r1, mark), metaSet(unix.NFT_META_MARK, r1),
		immediate(r1, lo[:]), immediate(r2, pbe), tproxy4(r1, r2),
		verdict(nfAccept))...)
	// UDP is marked too, so that every datagram (whatever its destination) is
	// delivered locally and meets the input chain: DNS to GW:53 is accepted, the
	// rest rejected. Unmarked, a datagram to a remote address would be dropped
	// silently by the routing code (ip_error sends no ICMP when forwarding is off)
	// and the sandbox would wait for a timeout instead of failing fast.
	rule(ip, "pre", append(l4proto(unix.IPPROTO_UDP),
		immediate(r1, mark), metaSet(unix.NFT_META_MARK, r1), verdict(nfAccept))...)
	// ICMP from the sandbox (ping, crafted errors) goes nowhere.
	rule(ip, "pre", append(l4proto(unix.IPPROTO_ICMP), verdict(nfDrop))...)

	rule(ip, "input", append(l4proto(unix.IPPROTO_TCP), verdict(nfAccept))...)
	g := gw.As4()
	rule(ip, "input", append(l4proto(unix.IPPROTO_UDP),
		payloadLoad(r1, unix.NFT_PAYLOAD_NETWORK_HEADER, 16, 4), cmpEq(r1, g[:]),
		payloadLoad(r1, unix.NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2), cmpEq(r1, []byte{0, 53}),
		verdict(nfAccept))...)
	// Other UDP fails fast in the sandbox (ICMP port unreachable -> ECONNREFUSED on
	// a connected socket) instead of timing out; it is never forwarded.
	rule(ip, "input", append(l4proto(unix.IPPROTO_UDP), rejectICMP(icmpPortUnreach))...)
	rule(ip, "input", verdict(nfDrop))
	return b
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
