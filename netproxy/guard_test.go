package netproxy

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPrivateRangesRefusedBeforeDial: a wildcard allow must not become a
// way into the user's internal network. A name the host resolves to a
// private, shared (CGNAT) or other special-purpose address is refused
// before any dial, naming the flag that would allow it; --add-host naming
// the address, or --allow-ip covering it, opens it.
func TestPrivateRangesRefusedBeforeDial(t *testing.T) {
	var mu sync.Mutex
	var dialled []netip.AddrPort
	addrs := map[string]string{
		"rfc1918-10.corp.test":  "10.1.2.3",
		"rfc1918-172.corp.test": "172.20.0.9",
		"rfc1918-192.corp.test": "192.168.7.7",
		"cgnat.corp.test":       "100.64.3.4",
		"ula.corp.test":         "fd12:3456::1",
		"nat64.corp.test":       "64:ff9b::a01:203",
		"sixtofour.corp.test":   "2002:c0a8:707::1",
		"ietf.corp.test":        "192.0.0.192",
		"reserved.corp.test":    "240.1.2.3",
		"azure.corp.test":       "168.63.129.16",
		"mixed.corp.test":       "10.9.9.9",
	}
	res := mapResolver{}
	for n, a := range addrs {
		res[n] = []netip.Addr{netip.MustParseAddr(a)}
	}
	h := newHarness(t, flags{
		allow: []string{"*.corp.test"},
		hosts: []string{"pinned.corp.test:10.4.4.4"},
		ips:   []string{"10.9.9.9/32:80"},
	}, func(p *Proxy) {
		p.Resolver = res
		p.FirstByteWait = 20 * time.Millisecond
		p.Dial = func(_ context.Context, a netip.AddrPort) (net.Conn, error) {
			mu.Lock()
			dialled = append(dialled, a)
			mu.Unlock()
			return nil, errors.New("test: no traffic leaves")
		}
	})
	for name, a := range addrs {
		if name == "mixed.corp.test" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			c, err := h.dial(netip.AddrPortFrom(h.mustLookup(name), 80))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Write([]byte(get(name)))
			expectRefused(t, c)
			ip := netip.MustParseAddr(a)
			ev := waitEventT(t, h, func(e Event) bool { return e.Name == name && e.Decision == "deny" })
			rule := ipRuleText(ip, 80)
			if !strings.Contains(ev.Reason, "`allow-ip` "+rule) || !strings.Contains(ev.Reason, a) {
				t.Errorf("refusal %q does not name the address and allow-ip %s", ev.Reason, rule)
			}
		})
	}
	mu.Lock()
	if len(dialled) != 0 {
		t.Errorf("ATTACK WORKED: the proxy dialled %v", dialled)
	}
	dialled = nil
	mu.Unlock()
	// The explicit choices: --allow-ip covering the address, and --add-host
	// naming it, reach the dial.
	for _, name := range []string{"mixed.corp.test", "pinned.corp.test"} {
		c, err := h.dial(netip.AddrPortFrom(h.mustLookup(name), 80))
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte(get(name)))
		expectRefused(t, c) // the test dialer fails every dial
		c.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	want := []netip.AddrPort{netip.MustParseAddrPort("10.9.9.9:80"), netip.MustParseAddrPort("10.4.4.4:80")}
	if !slices.Equal(dialled, want) {
		t.Errorf("dialled %v, want %v (--allow-ip and --add-host are explicit)", dialled, want)
	}
}
