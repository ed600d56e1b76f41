package nsnet

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestAddrs(t *testing.T) {
	for _, tc := range []struct {
		in      string
		gw, sb  string
		bits    int
		wantErr bool
	}{
		{"", "10.201.0.1", "10.201.0.2", 30, false},
		{"10.201.0.0/30", "10.201.0.1", "10.201.0.2", 30, false},
		{"10.5.6.7/30", "10.5.6.5", "10.5.6.6", 30, false}, // masked first
		{"172.16.0.0/24", "172.16.0.1", "172.16.0.2", 24, false},
		{"10.0.0.0/31", "", "", 0, true}, // no room for .1 and .2 plus network
		{"10.0.0.0/32", "", "", 0, true},
		{"fd00::/64", "", "", 0, true}, // IPv4 only: IPv6 is refused by design
		{"0.0.0.0/0", "", "", 0, true},
	} {
		var p netip.Prefix
		if tc.in != "" {
			p = netip.MustParsePrefix(tc.in)
		}
		gw, sb, bits, err := addrs(p)
		if tc.wantErr {
			if !errors.Is(err, ErrBadSubnet) {
				t.Errorf("addrs(%q) err = %v, want ErrBadSubnet", tc.in, err)
			}
			continue
		}
		if err != nil || gw.String() != tc.gw || sb.String() != tc.sb || bits != tc.bits {
			t.Errorf("addrs(%q) = %v %v /%d %v, want %s %s /%d", tc.in, gw, sb, bits, err, tc.gw, tc.sb, tc.bits)
		}
	}
}

func TestResolvConf(t *testing.T) {
	for _, tc := range []struct {
		gw   netip.Addr
		want []string
		not  []string
	}{
		{netip.MustParseAddr("10.201.0.1"), []string{"nameserver 10.201.0.1\n", "options timeout:2 attempts:2\n"}, []string{"search", "domain"}},
		{netip.MustParseAddr("127.0.0.1"), []string{"nameserver 127.0.0.1\n"}, []string{"search"}},
		{netip.MustParseAddr("::ffff:10.201.0.1"), []string{"nameserver 10.201.0.1\n"}, nil},
		{netip.Addr{}, nil, []string{"nameserver"}},
	} {
		got := string(ResolvConf(tc.gw))
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("ResolvConf(%v) = %q, missing %q", tc.gw, got, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("ResolvConf(%v) = %q, must not contain %q", tc.gw, got, n)
			}
		}
		if strings.Count(got, "nameserver") > 1 {
			t.Errorf("ResolvConf(%v) names more than one resolver: %q", tc.gw, got)
		}
	}
}

func TestProxyEnv(t *testing.T) {
	env := ProxyEnv("127.0.0.1:3128")
	for _, want := range []string{
		"HTTP_PROXY=http://127.0.0.1:3128", "http_proxy=http://127.0.0.1:3128",
		"HTTPS_PROXY=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
		"ALL_PROXY=socks5h://127.0.0.1:3128", "all_proxy=socks5h://127.0.0.1:3128",
		"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
	} {
		if !slices.Contains(env, want) {
			t.Errorf("ProxyEnv lacks %s: %v", want, env)
		}
	}
	if env := ProxyEnv("10.201.0.1:80", "jail"); !slices.Contains(env, "no_proxy=localhost,127.0.0.1,::1,jail") {
		t.Errorf("ProxyEnv with the sandbox's hostname: %v", env)
	}
}
