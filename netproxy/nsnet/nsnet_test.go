package nsnet

import (
	"bytes"
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

func TestParseKernelConfig(t *testing.T) {
	in := "# comment\nCONFIG_VETH=y\nCONFIG_NFT_TPROXY=m\n# CONFIG_NF_TABLES is not set\nCONFIG_X = y\nnot a line\nCONFIG_NAME=\"v\"\n"
	cfg, err := parseKernelConfig(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"CONFIG_VETH": "y", "CONFIG_NFT_TPROXY": "m", "CONFIG_NAME": `"v"`} {
		if cfg[k] != v {
			t.Errorf("cfg[%s] = %q, want %q", k, cfg[k], v)
		}
	}
	if _, ok := cfg["CONFIG_NF_TABLES"]; ok {
		t.Error("'is not set' comment parsed as set")
	}
	if _, ok := cfg["CONFIG_X "]; ok {
		t.Error("malformed key accepted")
	}
}

func TestMissingConfig(t *testing.T) {
	all := map[string]string{}
	for _, k := range requiredConfig {
		all[k] = "y"
	}
	if m := missingConfig(all); len(m) != 0 {
		t.Errorf("all present: missing %v", m)
	}
	all["CONFIG_NFT_TPROXY"] = "m"
	if m := missingConfig(all); len(m) != 0 {
		t.Errorf("module counts as present: missing %v", m)
	}
	all["CONFIG_NFT_TPROXY"] = "n"
	delete(all, "CONFIG_VETH")
	if m := missingConfig(all); len(m) != 2 || m[0] != "CONFIG_VETH" || m[1] != "CONFIG_NFT_TPROXY" {
		t.Errorf("missing = %v, want [CONFIG_VETH CONFIG_NFT_TPROXY]", m)
	}
}

func TestParseModuleList(t *testing.T) {
	in := "kernel/drivers/net/veth.ko\nkernel/net/netfilter/nft_tproxy.ko.zst: kernel/net/netfilter/nf_tables.ko.xz\n" +
		"kernel/net/ipv4/netfilter/nf-tproxy-ipv4.ko.gz:\n\n.ko\nnoext\n"
	m, err := parseModuleList(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"veth", "nft_tproxy", "nf_tproxy_ipv4"} {
		if !m[k] {
			t.Errorf("module %s not found in %v", k, m)
		}
	}
	if m["nf_tables"] || m["noext"] || m[""] {
		t.Errorf("dependency or junk parsed as a module: %v", m)
	}
}

func FuzzParseKernelConfig(f *testing.F) {
	f.Add([]byte("CONFIG_VETH=y\n# CONFIG_X is not set\n"))
	f.Add([]byte("=\n==\nCONFIG_=\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := parseKernelConfig(bytes.NewReader(b))
		if err != nil {
			return
		}
		for k := range cfg {
			if !strings.HasPrefix(k, "CONFIG_") || strings.ContainsAny(k, " \t=\n") {
				t.Fatalf("bad key %q", k)
			}
		}
		_ = missingConfig(cfg)
	})
}

func FuzzParseModuleList(f *testing.F) {
	f.Add([]byte("kernel/net/netfilter/nft_tproxy.ko.zst: a.ko\n"))
	f.Add([]byte(".ko:\n/x/.ko\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseModuleList(bytes.NewReader(b))
		if err != nil {
			return
		}
		for k := range m {
			if k == "" || strings.ContainsAny(k, "/-:\n") {
				t.Fatalf("bad module name %q", k)
			}
		}
	})
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
