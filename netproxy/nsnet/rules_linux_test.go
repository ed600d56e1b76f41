package nsnet

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
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
