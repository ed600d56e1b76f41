package netproxy

import (
	"errors"
	"net/netip"
	"regexp"
	"strings"
	"testing"
)

func TestParseDomainPattern(t *testing.T) {
	tests := []struct {
		in      string
		want    DomainRule
		errWant string // substring of the reason; "" = must parse
	}{
		{"example.com", DomainRule{Domain: "example.com"}, ""},
		{"Example.COM.", DomainRule{Domain: "example.com"}, ""},
		{"*.example.com", DomainRule{Domain: "example.com", Wildcard: true}, ""},
		{"*.example.com:443", DomainRule{Domain: "example.com", Wildcard: true, Port: 443}, ""},
		{"api.example.com:8080", DomainRule{Domain: "api.example.com", Port: 8080}, ""},
		{"gitlab", DomainRule{Domain: "gitlab"}, ""},
		{"_acme.example.com", DomainRule{Domain: "_acme.example.com"}, ""},
		{"xn--bcher-kva.example", DomainRule{Domain: "xn--bcher-kva.example"}, ""},
		{"*", DomainRule{}, "bare wildcard"},
		{"*.", DomainRule{}, "bare wildcard"},
		{"*:443", DomainRule{}, "bare wildcard"},
		{"", DomainRule{}, "empty name"},
		{":443", DomainRule{}, "empty name"},
		{"*.com", DomainRule{}, "top-level domain"},
		{"foo*.example.com", DomainRule{}, "whole leftmost label"},
		{"*.*.example.com", DomainRule{}, "whole leftmost label"},
		{"a.*.example.com", DomainRule{}, "whole leftmost label"},
		{"example..com", DomainRule{}, "empty label"},
		{".example.com", DomainRule{}, "empty label"},
		{"example.com..", DomainRule{}, "empty label"},
		{"example.com:", DomainRule{}, "empty port"},
		{"example.com:0", DomainRule{}, "1-65535"},
		{"example.com:65536", DomainRule{}, "1-65535"},
		{"example.com:https", DomainRule{}, "not a number"},
		{"example.com:-1", DomainRule{}, "not a number"},
		{"example.com:+443", DomainRule{}, "not a number"},
		{"1.2.3.4", DomainRule{}, "`allow-ip`"},
		{"127.1", DomainRule{}, "numeric"},
		{"::1", DomainRule{}, "IPv6"},
		{"[::1]:443", DomainRule{}, "IPv6"},
		{"bücher.example", DomainRule{}, "punycode"},
		{"exa mple.com", DomainRule{}, "not allowed"},
		{"-bad.example.com", DomainRule{}, "hyphen"},
		{strings.Repeat("a", 64) + ".com", DomainRule{}, "63"},
		{strings.Repeat("a.", 127) + "com", DomainRule{}, "253"},
		{"host.jail.internal", DomainRule{}, "`allow-host-port`"},
		{"https://example.com/", DomainRule{}, "a URL, not a host name: use the host name, example.com"},
		{"http://user@api.example.com:8443/v1?x#y", DomainRule{}, "use the host name, api.example.com:8443"},
		{"example.com/path", DomainRule{}, "a path is not part of a host name"},
	}
	for _, tt := range tests {
		got, err := ParseDomainPattern(tt.in)
		if tt.errWant == "" {
			if err != nil || got != tt.want {
				t.Errorf("ParseDomainPattern(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("ParseDomainPattern(%q) = %+v, want error containing %q", tt.in, got, tt.errWant)
			continue
		}
		if !errors.Is(err, ErrBadFlag) || !strings.Contains(err.Error(), tt.errWant) || !namesKey(err, "allow-domain") {
			t.Errorf("ParseDomainPattern(%q) error %q: want ErrBadFlag naming the option (not a flag) and %q", tt.in, err, tt.errWant)
		}
	}
	if _, err := ParseDenyPattern("*"); err == nil || !namesKey(err, "deny-domain") {
		t.Errorf("ParseDenyPattern(*) = %v, want an error naming deny-domain", err)
	}
}

func TestDomainRuleMatch(t *testing.T) {
	wild := DomainRule{Domain: "example.com", Wildcard: true}
	exact := DomainRule{Domain: "example.com", Port: 443}
	tests := []struct {
		r    DomainRule
		name string
		port uint16
		want bool
	}{
		{wild, "a.example.com", 1, true},
		{wild, "a.b.example.com", 443, true},
		{wild, "example.com", 443, false},    // not the apex
		{wild, "badexample.com", 443, false}, // suffix but not a label boundary
		{wild, ".example.com", 443, false},   // an empty leftmost label is not a subdomain
		{wild, "example.com.evil", 443, false},
		{exact, "example.com", 443, true},
		{exact, "example.com", 80, false},
		{exact, "a.example.com", 443, false},
	}
	for _, tt := range tests {
		if got := tt.r.Match(tt.name, tt.port); got != tt.want {
			t.Errorf("%v.Match(%q, %d) = %v, want %v", tt.r, tt.name, tt.port, got, tt.want)
		}
	}
}

func TestParseIPRule(t *testing.T) {
	tests := []struct {
		in      string
		want    string // String() of the rule
		errWant string
	}{
		{"10.0.0.0/8", "10.0.0.0/8", ""},
		{"10.0.0.0/8:443", "10.0.0.0/8:443", ""},
		{"192.0.2.7", "192.0.2.7/32", ""},
		{"192.0.2.7:22", "192.0.2.7/32:22", ""},
		{"2001:db8::/32", "2001:db8::/32", ""},
		{"[2001:db8::/32]:443", "[2001:db8::/32]:443", ""},
		{"[2001:db8::1]", "2001:db8::1/128", ""},
		{"::ffff:10.0.0.0/104", "10.0.0.0/8", ""},
		{"10.0.0.1/8", "", "did you mean 10.0.0.0/8"},
		{"10.0.0.0/33", "", "not a CIDR"},
		{"10.0.0/8", "", "not a CIDR"},
		{"010.0.0.0/8", "", "not a CIDR"},
		{"0.0.0.0/0", "", "/0"},
		{"::/0", "", "/0"},
		{"10.0.0.0/8:0", "", "1-65535"},
		{"10.0.0.0/8:", "", "empty port"},
		{"[2001:db8::/32", "", "missing ']'"},
		{"[2001:db8::/32]443", "", "':PORT'"},
		// The prefix length outside the brackets: the error writes the rule
		// as it is spelt (the form a refusal's hint gives).
		{"[2001:db8::1]/128:80", "", "write [2001:db8::1/128]:80"},
		{"[2001:db8::]/32", "", "write [2001:db8::/32]"},
		{"fe80::1%eth0", "", "zones"},
		{"example.com", "", "not an IP address"},
		{"", "", "not an IP address"},
	}
	for _, tt := range tests {
		got, err := ParseIPRule(tt.in)
		if tt.errWant == "" {
			if err != nil || got.String() != tt.want {
				t.Errorf("ParseIPRule(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrBadFlag) || !strings.Contains(err.Error(), tt.errWant) || !namesKey(err, "allow-ip") {
			t.Errorf("ParseIPRule(%q) = %v, %v; want error with %q", tt.in, got, err, tt.errWant)
		}
	}
}

func TestParseAddHostAndHostPort(t *testing.T) {
	h, err := ParseAddHost("DB.internal:10.1.2.3")
	if err != nil || h.Name != "db.internal" || h.Addr != netip.MustParseAddr("10.1.2.3") {
		t.Errorf("ParseAddHost = %+v, %v", h, err)
	}
	h, err = ParseAddHost("v6:[2001:db8::5]")
	if err != nil || h.Addr != netip.MustParseAddr("2001:db8::5") {
		t.Errorf("ParseAddHost v6 = %+v, %v", h, err)
	}
	for _, bad := range []string{"db", "db:", "db:10.1.2", ":10.1.2.3", "*.x:1.2.3.4", "host.jail.internal:127.0.0.1", "db:fe80::1%eth0"} {
		if _, err := ParseAddHost(bad); err == nil || !namesKey(err, "add-host") {
			t.Errorf("ParseAddHost(%q) = %v, want an add-host error", bad, err)
		}
	}
	if p, err := ParseHostPort("11434"); err != nil || p != 11434 {
		t.Errorf("ParseHostPort = %d, %v", p, err)
	}
	for _, bad := range []string{"", "0", "70000", "http"} {
		if _, err := ParseHostPort(bad); err == nil || !namesKey(err, "allow-host-port") {
			t.Errorf("ParseHostPort(%q) = %v", bad, err)
		}
	}
}

func TestDecide(t *testing.T) {
	p := mustPolicy(t, flags{
		allow:     []string{"example.com:443", "*.example.com", "*.corp.test", "pinned.test"},
		deny:      []string{"secret.example.com", "*.blocked.corp.test", "nossh.corp.test:22"},
		ips:       []string{"192.0.2.0/24:22", "[2001:db8::/32]:443", "10.5.0.0/16"},
		hosts:     []string{"pinned.test:10.5.0.9", "onlyip.test:192.0.2.1"},
		hostPorts: []uint16{11434},
	})
	none := netip.Addr{}
	tests := []struct {
		name   string
		ip     netip.Addr
		port   uint16
		allow  bool
		reason string
	}{
		{"example.com", none, 443, true, "allow-domain example.com:443"},
		{"EXAMPLE.com.", none, 443, true, ""},
		{"example.com", none, 80, false, "port 80 not allowed"},
		{"api.example.com", none, 80, true, "*.example.com"},
		{"secret.example.com", none, 443, false, "deny-domain secret.example.com"},
		{"x.blocked.corp.test", none, 443, false, "deny-domain"},
		{"blocked.corp.test", none, 443, true, ""}, // deny wildcard excludes its apex too
		{"nossh.corp.test", none, 22, false, "deny-domain nossh.corp.test:22"},
		{"nossh.corp.test", none, 443, true, ""},
		{"corp.test", none, 443, false, "not in allowlist"}, // apex of a wildcard
		{"evil.test", none, 443, false, "not in allowlist"},
		{"onlyip.test", netip.MustParseAddr("192.0.2.1"), 22, true, "allow-ip 192.0.2.0/24:22"},
		{"onlyip.test", netip.MustParseAddr("192.0.2.1"), 443, false, "not in allowlist"},
		{"secret.example.com", netip.MustParseAddr("10.5.0.1"), 443, false, "deny-domain"}, // deny beats allow-ip too
		{HostInternal, none, 11434, true, "allow-host-port 11434"},
		{HostInternal, none, 22, false, "allow-host-port"},
		{"", netip.MustParseAddr("192.0.2.77"), 22, true, "allow-ip"},
		{"", netip.MustParseAddr("192.0.2.77"), 23, false, "raw IP"},
		{"", netip.MustParseAddr("::ffff:192.0.2.77"), 22, true, ""},
		{"", netip.MustParseAddr("2001:db8::1"), 443, true, ""},
		{"", netip.MustParseAddr("8.8.8.8"), 53, false, "raw IP"},
		{"", none, 443, false, "no destination"},
		{"example.com", none, 0, false, "port 0"},
		{"bad name!", none, 443, false, "invalid name"},
	}
	for _, tt := range tests {
		d := p.Decide(tt.name, tt.ip, tt.port)
		if d.Allow != tt.allow || !strings.Contains(d.Reason, tt.reason) || d.Reason == "" {
			t.Errorf("Decide(%q, %v, %d) = %+v, want allow=%v reason~%q", tt.name, tt.ip, tt.port, d, tt.allow, tt.reason)
		}
	}
	for name, want := range map[string]bool{
		"example.com": true, "a.example.com": true, "secret.example.com": false, "x.blocked.corp.test": false,
		"nossh.corp.test": true, "pinned.test": true, "onlyip.test": true, HostInternal: true, "evil.test": false,
		"corp.test": false, "": false,
	} {
		if got := p.Resolvable(name); got != want {
			t.Errorf("Resolvable(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestCheckDialGuard attacks the address guard with every class of address an
// allowed name could resolve to on the host.
func TestCheckDialGuard(t *testing.T) {
	p := mustPolicy(t, flags{allow: []string{"ok.test"}, ips: []string{"127.0.0.53/32:53"}, hostPorts: []uint16{8080},
		hosts: []string{"pin.test:10.4.4.4", "pinlo.test:127.0.0.1", "pinmeta.test:169.254.169.254"}})
	host := []netip.Addr{netip.MustParseAddr("192.168.1.10"), netip.MustParseAddr("2001:db8::10")}
	tests := []struct {
		name  string
		ip    string
		port  uint16
		allow bool
		why   string
	}{
		{"ok.test", "93.184.216.34", 443, true, "public"},
		{"ok.test", "127.0.0.1", 443, false, "loopback"},
		{"ok.test", "127.8.9.1", 443, false, "loopback"},
		{"ok.test", "::1", 443, false, "loopback"},
		{"ok.test", "::ffff:127.0.0.1", 443, false, "loopback"},
		{"ok.test", "169.254.169.254", 80, false, "link-local"},
		{"ok.test", "fe80::1", 80, false, "link-local"},
		{"ok.test", "fd00:ec2::254", 80, false, "metadata"},
		{"ok.test", "100.100.100.200", 80, false, "metadata"},
		{"ok.test", "0.0.0.0", 80, false, "unspecified"},
		{"ok.test", "0.1.2.3", 80, false, "unspecified"},
		{"ok.test", "::", 80, false, "unspecified"},
		{"ok.test", "224.0.0.1", 80, false, "multicast"},
		{"ok.test", "255.255.255.255", 80, false, "broadcast"},
		{"ok.test", "ff02::1", 80, false, "multicast"},
		{"ok.test", "198.18.0.7", 80, false, "fake"},
		{"ok.test", "192.168.1.10", 22, false, "host's own"},
		{"ok.test", "2001:db8::10", 22, false, "host's own"},
		{"ok.test", "127.0.0.53", 53, true, "allow-ip"},
		{"ok.test", "127.0.0.53", 54, false, "loopback"},
		{HostInternal, "127.0.0.1", 8080, true, "allow-host-port"},
		{HostInternal, "127.0.0.1", 8081, false, "loopback"},
		{"ok.test", "127.0.0.1", 8080, false, "loopback"}, // host port is for host.jail.internal only
		// Internal networks (issue 10, class 7): a wildcard must not reach them.
		{"ok.test", "10.1.2.3", 443, false, "private network address (RFC 1918); allow it with `allow-ip` 10.1.2.3/32:443 (or pin the name with `add-host` ok.test:10.1.2.3)"},
		{"ok.test", "172.31.255.1", 443, false, "RFC 1918"},
		{"ok.test", "172.32.0.1", 443, true, "public"},
		{"ok.test", "192.168.0.1", 443, false, "RFC 1918"},
		{"ok.test", "::ffff:192.168.0.1", 443, false, "RFC 1918"},
		{"ok.test", "100.64.0.1", 443, false, "CGNAT"},
		{"ok.test", "100.127.255.254", 443, false, "CGNAT"},
		{"ok.test", "100.128.0.1", 443, true, "public"},
		{"ok.test", "fd12:3456::1", 443, false, "unique local"},
		{"ok.test", "fec0::1", 443, false, "site-local"},
		{"ok.test", "64:ff9b::a01:203", 443, false, "carrying 10.1.2.3, a private"},
		{"ok.test", "64:ff9b::a9fe:a9fe", 80, false, "carrying 169.254.169.254, link-local"},
		{"ok.test", "64:ff9b::808:808", 443, true, "public"},
		{"ok.test", "2002:c0a8:101::1", 443, false, "carrying 192.168.1.1"},
		{"ok.test", "2002:808:808::1", 443, true, "public"},
		{"ok.test", "64:ff9b:1::1", 443, false, "local-use NAT64"},
		{"ok.test", "::10.1.2.3", 443, false, "IPv4-compatible"},
		{"ok.test", "192.0.0.192", 80, false, "IETF protocol"},
		{"ok.test", "240.1.2.3", 80, false, "reserved"},
		{"ok.test", "100::1", 80, false, "discard-only"},
		{"ok.test", "168.63.129.16", 80, false, "metadata"},
		{"", "10.1.2.3", 443, false, "10.1.2.3 resolves to 10.1.2.3"},
		// Explicit choices: a pin to an internal address opens exactly it;
		// a pin never opens loopback or metadata.
		{"pin.test", "10.4.4.4", 443, true, "add-host pin.test:10.4.4.4"},
		{"pin.test", "10.4.4.5", 443, false, "RFC 1918"},
		{"ok.test", "10.4.4.4", 443, false, "RFC 1918"},
		{"pinlo.test", "127.0.0.1", 443, false, "loopback"},
		{"pinmeta.test", "169.254.169.254", 80, false, "link-local"},
	}
	for _, tt := range tests {
		d := p.CheckDial(tt.name, netip.MustParseAddr(tt.ip), tt.port, host)
		if d.Allow != tt.allow || !strings.Contains(d.Reason, tt.why) {
			t.Errorf("CheckDial(%s, %s, %d) = %+v, want allow=%v (%s)", tt.name, tt.ip, tt.port, d, tt.allow, tt.why)
		}
	}
}

func TestNewPolicyRejects(t *testing.T) {
	bad := []Config{
		{AllowDomains: []DomainRule{{Domain: "Bad..Name"}}},
		{AllowIPs: []IPRule{{Prefix: netip.MustParsePrefix("10.0.0.1/8")}}},
		{AllowIPs: []IPRule{{}}},
		{AddHosts: []HostEntry{{Name: "a.test", Addr: netip.MustParseAddr("10.0.0.1")}, {Name: "a.test", Addr: netip.MustParseAddr("10.0.0.2")}}},
		{HostPorts: []uint16{0}},
	}
	for i, c := range bad {
		if _, err := NewPolicy(c); !errors.Is(err, ErrBadFlag) {
			t.Errorf("case %d: NewPolicy = %v, want ErrBadFlag", i, err)
		}
	}
}

func TestParsePublish(t *testing.T) {
	tests := []struct {
		in   string
		want string // HostAddr + "->" + port
		err  bool
	}{
		{"8080:80", "127.0.0.1:8080->80", false},
		{"0.0.0.0:8080:80", "0.0.0.0:8080->80", false},
		{"192.168.1.5:3000:3000/tcp", "192.168.1.5:3000->3000", false},
		{"[::1]:8080:80", "[::1]:8080->80", false},
		{"8080:80/udp", "", true},
		{"8080", "", true},
		{"8080:0", "", true},
		{"a:b", "", true},
		{"1.2.3:80:80", "", true},
		{"::1:80:80", "", true},
		{"[::1]8080:80", "", true},
		{"1:2:3:4", "", true},
	}
	if _, err := ParsePublish("5173"); err == nil || !strings.Contains(err.Error(), "e.g. 5173:5173") {
		t.Errorf("ParsePublish(5173): %v; want the example 5173:5173", err)
	}
	for _, tt := range tests {
		s, err := ParsePublish(tt.in)
		if tt.err {
			if err == nil || !namesKey(err, "publish") {
				t.Errorf("ParsePublish(%q) = %+v, %v; want a publish error", tt.in, s, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParsePublish(%q): %v", tt.in, err)
			continue
		}
		if got := s.HostAddr() + "->" + itoa(s.Port); got != tt.want {
			t.Errorf("ParsePublish(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func itoa(p uint16) string { return netip.AddrPortFrom(netip.IPv4Unspecified(), p).String()[8:] }

// FuzzDomainPattern: whatever parses must round-trip through String, be
// normalized, never be a bare or TLD wildcard, and its matcher must never
// match the apex of a wildcard or a name that is not a label-boundary suffix.
func FuzzDomainPattern(f *testing.F) {
	for _, s := range []string{"example.com", "*.example.com:443", "*", "*.", "a..b", "x:0", "EXAMPLE.com.", "*.com", "1.2.3.4", "a_b.c-d.e"} {
		f.Add(s, "sub.example.com", uint16(443))
	}
	f.Fuzz(func(t *testing.T, pattern, name string, port uint16) {
		r, err := ParseDomainPattern(pattern)
		if err != nil {
			if !errors.Is(err, ErrBadFlag) {
				t.Fatalf("error %v is not ErrBadFlag", err)
			}
			return
		}
		if r.Domain == "" || strings.Contains(r.Domain, "*") || !strings.Contains(r.Domain, ".") && r.Wildcard {
			t.Fatalf("%q parsed to unsafe rule %+v", pattern, r)
		}
		if n, ok := NormalizeName(r.Domain); !ok || n != r.Domain {
			t.Fatalf("%q: domain %q not normalized", pattern, r.Domain)
		}
		r2, err := ParseDomainPattern(r.String())
		if err != nil || r2 != r {
			t.Fatalf("round trip %q -> %q -> %+v, %v", pattern, r.String(), r2, err)
		}
		n, ok := NormalizeName(name)
		if !ok {
			return
		}
		if r.Match(n, port) {
			if r.Port != 0 && r.Port != port {
				t.Fatalf("%v matched port %d", r, port)
			}
			if r.Wildcard && (n == r.Domain || !strings.HasSuffix(n, "."+r.Domain)) {
				t.Fatalf("wildcard %v matched %q", r, n)
			}
			if !r.Wildcard && n != r.Domain {
				t.Fatalf("exact %v matched %q", r, n)
			}
		}
	})
}

// FuzzIPRule: whatever parses is canonical, non-/0, and round-trips.
func FuzzIPRule(f *testing.F) {
	for _, s := range []string{"10.0.0.0/8", "[2001:db8::/32]:443", "1.2.3.4:22", "10.0.0.1/8", "::ffff:1.2.3.4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseIPRule(s)
		if err != nil {
			return
		}
		if r.Prefix.Masked() != r.Prefix || r.Prefix.Bits() == 0 || r.Prefix.Addr().Is4In6() {
			t.Fatalf("%q -> non-canonical %v", s, r.Prefix)
		}
		r2, err := ParseIPRule(r.String())
		if err != nil || r2 != r {
			t.Fatalf("round trip %q -> %q -> %v, %v", s, r.String(), r2, err)
		}
	})
}

func TestBuildConfig(t *testing.T) {
	cfg, err := BuildConfig(Flags{
		AllowDomains: []string{"example.com:443", "*.example.org"},
		DenyDomains:  []string{"x.example.org"},
		AllowIPs:     []string{"10.0.0.0/8"},
		AddHosts:     []string{"db.test:10.0.0.5"},
		HostPorts:    []string{"8080", "8080"},
	})
	if err != nil || len(cfg.AllowDomains) != 2 || len(cfg.DenyDomains) != 1 || len(cfg.AllowIPs) != 1 || len(cfg.AddHosts) != 1 || len(cfg.HostPorts) != 1 {
		t.Fatalf("BuildConfig = %+v, %v", cfg, err)
	}
	if _, err := NewPolicy(cfg); err != nil {
		t.Fatal(err)
	}
	_, err = BuildConfig(Flags{AllowDomains: []string{"*"}, AllowIPs: []string{"10.0.0.1/8"}, HostPorts: []string{"0"}})
	var pe *ParseError
	if !errors.As(err, &pe) || !errors.Is(err, ErrBadFlag) {
		t.Fatalf("BuildConfig(bad) = %v", err)
	}
	for _, want := range []string{`allow-domain "*"`, `allow-ip "10.0.0.1/8"`, `allow-host-port "0"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("joined error lacks %s: %v", want, err)
		}
	}
}

// namesKey: the error names the option and never spells a flag (the value
// may come from a config file or a profile; the reader adds the source).
func namesKey(err error, key string) bool {
	var pe *ParseError
	return errors.As(err, &pe) && pe.Key == key && strings.Contains(err.Error(), key) && !flagSpelling.MatchString(err.Error())
}

var flagSpelling = regexp.MustCompile(`(^|[\s(])--[a-z]`)

// TestCheckDialBroadRuleKeepsGuard: an --allow-ip rule that merely contains
// a guarded address (half the internet, a LAN that holds the host) does not
// open it: `--allow-ip 128.0.0.0/1` reached the host's own services on its
// LAN address and 169.254.169.254 (a /0 is refused at parsing; a /1 was
// not). A rule inside the guarded class (the address itself, 127.0.0.0/8,
// 10.0.0.0/8) still opens what it names.
func TestCheckDialBroadRuleKeepsGuard(t *testing.T) {
	host := []netip.Addr{netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("2001:db8::10")}
	tests := []struct {
		rule  string
		ip    string
		port  uint16
		allow bool
	}{
		{"128.0.0.0/1", "192.0.2.2", 22, false},       // the host's own address
		{"192.0.2.0/24", "192.0.2.2", 22, false},      // the host's LAN, not the host
		{"128.0.0.0/1", "169.254.169.254", 80, false}, // link-local metadata
		{"128.0.0.0/1", "168.63.129.16", 80, false},   // Azure WireServer
		{"128.0.0.0/1", "192.168.1.1", 443, false},    // RFC 1918 inside a broad rule
		{"128.0.0.0/1", "198.18.0.7", 80, false},      // the fake range
		{"128.0.0.0/1", "224.0.0.1", 80, false},       // multicast
		{"0.0.0.0/1", "127.0.0.1", 80, false},         // loopback
		{"0.0.0.0/1", "10.1.2.3", 443, false},         // RFC 1918
		{"0.0.0.0/1", "100.100.100.200", 80, false},   // Alibaba metadata inside CGNAT
		{"100.64.0.0/10", "100.100.100.200", 80, false},
		{"fc00::/7", "fd00:ec2::254", 80, false},         // AWS IMDS over IPv6 inside a ULA rule
		{"2000::/3", "2002:7f00:1::1", 80, false},        // 6to4 carrying loopback
		{"2000::/3", "2001:db8::10", 22, false},          // the host's own IPv6
		{"::/1", "64:ff9b::a9fe:a9fe", 80, false},        // NAT64 carrying metadata
		{"169.254.0.0/16", "169.254.169.254", 80, false}, // the link-local network, not its metadata endpoint
		// Still open: public addresses under a broad rule, and what a rule
		// inside the guarded class names.
		{"0.0.0.0/1", "8.8.8.8", 443, true},
		{"128.0.0.0/1", "172.32.0.1", 443, true},
		{"192.0.2.2/32", "192.0.2.2", 22, true},
		{"192.0.2.2/32:22", "192.0.2.2", 22, true},
		{"169.254.169.254", "169.254.169.254", 80, true},
		{"127.0.0.0/8", "127.0.0.1", 80, true},
		{"10.0.0.0/8", "10.1.2.3", 443, true},
		{"192.168.0.0/16", "192.168.1.1", 443, true},
		{"fc00::/7", "fd12::1", 443, true},
		{"64:ff9b::/96", "64:ff9b::a01:203", 443, true},
		{"fd00:ec2::254/128", "fd00:ec2::254", 80, true},
		{"169.254.0.0/16", "169.254.1.1", 80, true},
	}
	for _, tt := range tests {
		p := mustPolicy(t, flags{allow: []string{"ok.test"}, ips: []string{tt.rule}})
		for _, name := range []string{"", "ok.test"} {
			d := p.CheckDial(name, netip.MustParseAddr(tt.ip), tt.port, host)
			if d.Allow != tt.allow {
				t.Errorf("--allow-ip %s: CheckDial(%q, %s, %d) = %+v, want allow=%v", tt.rule, name, tt.ip, tt.port, d, tt.allow)
			}
		}
	}
}
