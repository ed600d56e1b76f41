package nsnet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// The proxy namespace's rules are one ip table (the tproxy before routing,
// the input chain, a forward chain that drops everything) and one ip6
// table whose only chain drops, before routing, every packet from veth0:
// no inet table, whose IPv6 input and forward hooks were never reached
// (and each hook the kernel registers where none was costs a text patch).
func TestInstallRulesTables(t *testing.T) {
	if !inPrivateNetns(t) {
		return
	}
	if err := installRules(-1, netip.MustParseAddr("10.201.0.1"), 9999); err != nil {
		t.Fatal(err)
	}
	c, err := nftables.New()
	if err != nil {
		t.Fatal(err)
	}
	tables, err := c.ListTables()
	if err != nil {
		t.Fatal(err)
	}
	family := map[nftables.TableFamily]string{nftables.TableFamilyIPv4: "ip", nftables.TableFamilyIPv6: "ip6", nftables.TableFamilyINet: "inet"}
	hook := map[nftables.ChainHook]string{*nftables.ChainHookPrerouting: "prerouting", *nftables.ChainHookInput: "input", *nftables.ChainHookForward: "forward"}
	var got []string
	var drop6 []expr.Any
	for _, tb := range tables {
		chains, err := c.ListChainsOfTableFamily(tb.Family)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range chains {
			if ch.Table.Name != tb.Name {
				continue
			}
			rules, err := c.GetRules(tb, ch)
			if err != nil {
				t.Fatal(err)
			}
			policy := "accept"
			if ch.Policy != nil && *ch.Policy == nftables.ChainPolicyDrop {
				policy = "drop"
			}
			h := "?"
			if ch.Hooknum != nil {
				h = hook[*ch.Hooknum]
			}
			got = append(got, fmt.Sprintf("%s %s %s: %s, policy %s, %d rules", family[tb.Family], tb.Name, ch.Name, h, policy, len(rules)))
			if tb.Family == nftables.TableFamilyIPv6 && len(rules) == 1 {
				drop6 = rules[0].Exprs
			}
		}
	}
	slices.Sort(got)
	want := []string{
		"ip jail fwd: forward, policy drop, 0 rules",
		"ip jail input: input, policy accept, 4 rules",
		"ip jail pre: prerouting, policy accept, 3 rules",
		"ip6 jail pre: prerouting, policy accept, 1 rules",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the proxy namespace's chains:\n%q\nwant\n%q", got, want)
	}
	// The ip6 rule: from veth0 (an iifname match), drop.
	if len(drop6) < 3 {
		t.Fatalf("the ip6 rule: %d expressions", len(drop6))
	}
	cmp, ok := drop6[1].(*expr.Cmp)
	v, vok := drop6[len(drop6)-1].(*expr.Verdict)
	if !ok || string(cmp.Data) != string(ifname(ProxyIface)) || !vok || v.Kind != expr.VerdictDrop {
		t.Errorf("the ip6 rule is not `iifname %s drop`: %#v", ProxyIface, drop6)
	}
}

// libraryRules is installRules' transaction as github.com/google/nftables
// encodes it (the rules written with the library, as they were until it
// was replaced by rulesBatch): the messages it would send.
func libraryRules(t *testing.T, gw netip.Addr, port uint16) []netlink.Message {
	t.Helper()
	var sent []netlink.Message
	c, err := nftables.New(nftables.WithTestDial(func(req []netlink.Message) ([]netlink.Message, error) {
		sent = append(sent, req...)
		acks := make([]netlink.Message, 0, len(req))
		for _, m := range req {
			acks = append(acks, netlink.Message{Header: netlink.Header{Type: netlink.Error, Sequence: m.Header.Sequence}, Data: make([]byte, 20)})
		}
		return acks, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	accept, drop := nftables.ChainPolicyAccept, nftables.ChainPolicyDrop
	tb := c.AddTable(&nftables.Table{Family: nftables.TableFamilyIPv4, Name: NFTTable})
	pre := c.AddChain(&nftables.Chain{Name: "pre", Table: tb, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityMangle, Policy: &accept})
	in := c.AddChain(&nftables.Chain{Name: "input", Table: tb, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookInput, Priority: nftables.ChainPriorityFilter, Policy: &accept})
	c.AddChain(&nftables.Chain{Name: "fwd", Table: tb, Type: nftables.ChainTypeFilter,
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
	rule(pre6, verdict(expr.VerdictDrop)...)
	lo := [4]byte{127, 0, 0, 1}
	mark := make([]byte, 4)
	binary.NativeEndian.PutUint32(mark, TProxyMark)
	pbe := make([]byte, 2)
	binary.BigEndian.PutUint16(pbe, port)
	rule(pre, cat(l4proto(unix.IPPROTO_TCP), []expr.Any{
		&expr.Immediate{Register: 1, Data: mark},
		&expr.Meta{Key: expr.MetaKeyMARK, SourceRegister: true, Register: 1},
		&expr.Immediate{Register: 1, Data: lo[:]},
		&expr.Immediate{Register: 2, Data: pbe},
		&expr.TProxy{Family: unix.NFPROTO_IPV4, TableFamily: unix.NFPROTO_IPV4, RegAddr: 1, RegPort: 2},
	}, verdict(expr.VerdictAccept))...)
	rule(pre, cat(l4proto(unix.IPPROTO_UDP), []expr.Any{
		&expr.Immediate{Register: 1, Data: mark},
		&expr.Meta{Key: expr.MetaKeyMARK, SourceRegister: true, Register: 1},
	}, verdict(expr.VerdictAccept))...)
	rule(pre, cat(l4proto(unix.IPPROTO_ICMP), verdict(expr.VerdictDrop))...)
	rule(in, cat(l4proto(unix.IPPROTO_TCP), verdict(expr.VerdictAccept))...)
	g := gw.As4()
	rule(in, cat(l4proto(unix.IPPROTO_UDP), []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: g[:]},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{0, 53}},
	}, verdict(expr.VerdictAccept))...)
	rule(in, cat(l4proto(unix.IPPROTO_UDP), []expr.Any{
		&expr.Reject{Type: unix.NFT_REJECT_ICMP_UNREACH, Code: icmpPortUnreach},
	})...)
	rule(in, verdict(expr.VerdictDrop)...)
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	return sent
}

// The batch jail writes itself is the library's, message for message and
// byte for byte (the library, well kept and widely used, is the
// reference), but for the rules' NLM_F_ECHO, which jail does not ask for,
// and the sequence numbers, which each side numbers its own way.
func TestRulesBatchMatchesLibrary(t *testing.T) {
	for _, tc := range []struct {
		gw   string
		port uint16
	}{{"10.201.0.1", 9999}, {"192.168.77.1", 40123}, {"100.64.0.1", 1}} {
		gw := netip.MustParseAddr(tc.gw)
		want := libraryRules(t, gw, tc.port)
		got, err := syscall.ParseNetlinkMessage(rulesBatch(gw, tc.port).bytes())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d messages, the library sends %d", len(got), len(want))
		}
		for i, w := range want {
			g := got[i]
			wflags := uint16(w.Header.Flags)
			if uint16(w.Header.Type) == unix.NFNL_SUBSYS_NFTABLES<<8|unix.NFT_MSG_NEWRULE {
				wflags &^= unix.NLM_F_ECHO
			}
			if uint16(w.Header.Type) != g.Header.Type || wflags != g.Header.Flags || !bytes.Equal(w.Data, g.Data) {
				t.Errorf("message %d: type %#x flags %#x data\n%x\nthe library's: type %#x flags %#x data\n%x",
					i, g.Header.Type, g.Header.Flags, g.Data, uint16(w.Header.Type), wflags, w.Data)
			}
		}
	}
}

// A batch the kernel refuses is refused whole, and the error names the
// message it refused (not one of the library's "conn.Receive" lines).
func TestSendNFTNamesTheRefusedMessage(t *testing.T) {
	if !inPrivateNetns(t) {
		return
	}
	b := newNFTBatch()
	b.table(unix.NFPROTO_IPV4, "jailtest")
	b.rule(unix.NFPROTO_IPV4, "jailtest", "nochain", 1, verdict(nfDrop))
	err := sendNFT(b)
	if err == nil || !errors.Is(err, unix.ENOENT) || !strings.Contains(err.Error(), "rule 1 of chain ip jailtest nochain") {
		t.Fatalf("sendNFT of a rule in no chain: %v, want ENOENT naming the rule", err)
	}
	// All or nothing: the table of the refused batch was not made either.
	c, cerr := nftables.New()
	if cerr != nil {
		t.Fatal(cerr)
	}
	tables, cerr := c.ListTables()
	if cerr != nil {
		t.Fatal(cerr)
	}
	if len(tables) != 0 {
		t.Fatalf("tables after a refused batch: %v", tables)
	}
	// And a good batch after it goes through on a new socket.
	b = newNFTBatch()
	b.table(unix.NFPROTO_IPV4, "jailtest")
	if err := sendNFT(b); err != nil {
		t.Fatal(err)
	}
}
