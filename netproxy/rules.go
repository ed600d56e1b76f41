package netproxy

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// HostInternal is the name under which the sandbox reaches the host's loopback
// services opened with allow-host-port.
const HostInternal = "host.jail.internal"

// ErrBadFlag is matched (errors.Is) by every *ParseError.
var ErrBadFlag = errors.New("invalid network rule")

// ParseError says which option and value were refused and why. Key is the
// policy option ("allow-domain"), not a flag: the value may come from a
// config file or a profile, and the reader that knows says where (its
// OptionValue method is what readers look for). Other options named in Reason
// are written `key` (see package policy).
type ParseError struct {
	Key    string // the option, e.g. "allow-domain"
	Value  string // the value as given
	Reason string // what is wrong and what to write instead
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s %q: %s", e.Key, e.Value, e.Reason)
}

// Is makes errors.Is(err, ErrBadFlag) true.
func (e *ParseError) Is(target error) bool { return target == ErrBadFlag }

// OptionValue returns the option, the value and the reason, for a reader to
// prefix with where the value came from.
func (e *ParseError) OptionValue() (key, value, reason string) { return e.Key, e.Value, e.Reason }

// DomainRule is one --allow-domain or --deny-domain pattern.
type DomainRule struct {
	// Domain is the lower-case name without a trailing dot; for a wildcard
	// pattern it is the part after "*.".
	Domain string
	// Wildcard: the rule matches every proper subdomain of Domain, not Domain
	// itself (so *.example.com does not match example.com).
	Wildcard bool
	// Port restricts the rule to one TCP port; 0 means any port.
	Port uint16
}

// String renders the rule the way the user writes it.
func (r DomainRule) String() string {
	s := r.Domain
	if r.Wildcard {
		s = "*." + s
	}
	if r.Port != 0 {
		s += ":" + strconv.Itoa(int(r.Port))
	}
	return s
}

// MatchName reports whether the normalized name falls under the rule
// (ignoring the port).
func (r DomainRule) MatchName(name string) bool {
	if !r.Wildcard {
		return name == r.Domain
	}
	// A proper subdomain: at least one label, then ".", then the base.
	return len(name) > len(r.Domain)+1 &&
		strings.HasSuffix(name, r.Domain) &&
		name[len(name)-len(r.Domain)-1] == '.'
}

// Match reports whether name and port fall under the rule.
func (r DomainRule) Match(name string, port uint16) bool {
	return (r.Port == 0 || r.Port == port) && r.MatchName(name)
}

// ParseDomainPattern parses an --allow-domain value: NAME, *.NAME, optionally
// followed by :PORT. It refuses "*", "*.", partial or inner wildcards, empty or
// over-long labels, IP addresses, non-ASCII names (use the xn-- form) and bad
// ports, with the reason.
func ParseDomainPattern(s string) (DomainRule, error) {
	return parseDomainPattern("allow-domain", s)
}

// ParseDenyPattern parses a --deny-domain value; same syntax as
// ParseDomainPattern (a port makes the denial apply to that port only).
func ParseDenyPattern(s string) (DomainRule, error) {
	return parseDomainPattern("deny-domain", s)
}

func parseDomainPattern(key, s string) (DomainRule, error) {
	bad := func(reason string) (DomainRule, error) {
		return DomainRule{}, &ParseError{Key: key, Value: s, Reason: reason}
	}
	// A URL pasted where a name belongs: say so and give the name, rather
	// than fail on "//host/" as a port.
	if i := strings.Index(s, "://"); i > 0 {
		host := s[i+3:]
		if j := strings.IndexAny(host, "/?#"); j >= 0 {
			host = host[:j]
		}
		if j := strings.LastIndexByte(host, '@'); j >= 0 {
			host = host[j+1:]
		}
		return bad(fmt.Sprintf("a URL, not a host name: use the host name, %s", host))
	}
	if strings.ContainsAny(s, "/?#") {
		return bad("a path is not part of a host name: use the host name alone, e.g. example.com")
	}
	host, port := s, uint16(0)
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		if strings.Count(s, ":") > 1 || strings.HasPrefix(s, "[") {
			return bad("IPv6 addresses are not domain names; use `allow-ip` [CIDR]:PORT")
		}
		p, err := parsePort(s[i+1:])
		if err != nil {
			return bad(err.Error())
		}
		host, port = s[:i], p
	}
	rule := DomainRule{Port: port}
	switch {
	case host == "":
		return bad("empty name; write a domain like example.com or *.example.com")
	case host == "*" || host == "*.":
		return bad("a bare wildcard would allow every name; name a domain like *.example.com")
	case strings.HasPrefix(host, "*."):
		rule.Wildcard = true
		host = host[2:]
	}
	name, reason := normalizeName(host)
	if reason != "" {
		return bad(reason)
	}
	if rule.Wildcard && !strings.Contains(name, ".") {
		return bad("*." + name + " would allow every name under a top-level domain; name the domain you mean")
	}
	if name == HostInternal {
		return bad(HostInternal + " is reached with `allow-host-port` PORT, not with a domain rule")
	}
	rule.Domain = name
	return rule, nil
}

// normalizeName lower-cases a DNS host name, drops one trailing dot and checks
// it: LDH labels (underscore allowed) of 1..63 bytes, 253 bytes at most, not an
// IP address, no all-numeric last label (inet_aton would read "127.1" as an
// address). It returns the reason when the name is not acceptable.
func normalizeName(s string) (string, string) {
	name := strings.ToLower(strings.TrimSuffix(s, "."))
	if name == "" {
		return "", "empty name"
	}
	if strings.Contains(name, "*") {
		return "", "a wildcard is only allowed as the whole leftmost label, as in *.example.com"
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return "", "this is an IP address; use `allow-ip` for addresses"
	}
	if len(name) > 253 {
		return "", "name longer than 253 bytes"
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" {
			return "", "empty label (two dots in a row, or a leading dot)"
		}
		if len(l) > 63 {
			return "", "label longer than 63 bytes: " + l
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return "", "label starts or ends with a hyphen: " + l
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				if c >= 0x80 {
					return "", "non-ASCII name; write its punycode (xn--) form"
				}
				return "", fmt.Sprintf("character %q is not allowed in a host name", c)
			}
		}
	}
	if last := labels[len(labels)-1]; strings.Trim(last, "0123456789") == "" {
		return "", "the last label is numeric; use `allow-ip` for addresses"
	}
	return name, ""
}

// NormalizeName returns the canonical (lower-case, no trailing dot) form of a
// host name and whether it is a valid name at all.
func NormalizeName(s string) (string, bool) {
	n, reason := normalizeName(s)
	return n, reason == ""
}

func parsePort(s string) (uint16, error) {
	if s == "" {
		return 0, errors.New("empty port after ':'; give a number 1-65535 or leave out the colon")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("port %q is not a number 1-65535", s)
		}
	}
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("port %q is not in 1-65535", s)
	}
	return uint16(n), nil
}

// IPRule is one --allow-ip value.
type IPRule struct {
	Prefix netip.Prefix // canonical (host bits zero), IPv4 as 4-byte
	Port   uint16       // 0 = any port
}

// String renders the rule the way the user writes it.
func (r IPRule) String() string {
	if r.Port == 0 {
		return r.Prefix.String()
	}
	if r.Prefix.Addr().Is6() {
		return "[" + r.Prefix.String() + "]:" + strconv.Itoa(int(r.Port))
	}
	return r.Prefix.String() + ":" + strconv.Itoa(int(r.Port))
}

// Match reports whether ip:port falls under the rule.
func (r IPRule) Match(ip netip.Addr, port uint16) bool {
	return (r.Port == 0 || r.Port == port) && r.Prefix.Contains(ip.Unmap())
}

// ParseIPRule parses an --allow-ip value: ADDR or CIDR, optionally :PORT; IPv6
// goes in brackets when a port follows ([2001:db8::/32]:443). A CIDR with host
// bits set (10.0.0.1/8) is refused as a probable typo.
func ParseIPRule(s string) (IPRule, error) {
	bad := func(reason string) (IPRule, error) {
		return IPRule{}, &ParseError{Key: "allow-ip", Value: s, Reason: reason}
	}
	addr, port := s, uint16(0)
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return bad("missing ']' after the IPv6 address")
		}
		addr = s[1:end]
		rest := s[end+1:]
		if rest != "" {
			if rest[0] == '/' {
				// [2001:db8::1]/128:80: the length belongs to the prefix,
				// inside the brackets; say the rule as it is spelt.
				bits, port, _ := strings.Cut(rest[1:], ":")
				want := "[" + addr + "/" + bits + "]"
				if port != "" {
					want += ":" + port
				}
				return bad("the prefix length goes inside the brackets: write " + want)
			}
			if rest[0] != ':' {
				return bad("expected ':PORT' after ']'")
			}
			p, err := parsePort(rest[1:])
			if err != nil {
				return bad(err.Error())
			}
			port = p
		}
	} else if strings.Count(s, ":") == 1 {
		i := strings.IndexByte(s, ':')
		p, err := parsePort(s[i+1:])
		if err != nil {
			return bad(err.Error())
		}
		addr, port = s[:i], p
	}
	var pfx netip.Prefix
	if strings.Contains(addr, "/") {
		p, err := netip.ParsePrefix(addr)
		if err != nil {
			return bad("not a CIDR: " + trimParseErr(err))
		}
		if p.Addr().Zone() != "" {
			return bad("zones are not allowed")
		}
		if p.Masked() != p {
			return bad(fmt.Sprintf("host bits are set; did you mean %s?", p.Masked()))
		}
		pfx = p
	} else {
		a, err := netip.ParseAddr(addr)
		if err != nil {
			return bad("not an IP address or CIDR: " + trimParseErr(err))
		}
		if a.Zone() != "" {
			return bad("zones are not allowed")
		}
		pfx = netip.PrefixFrom(a, a.BitLen())
	}
	if pfx.Addr().Is4In6() {
		a := pfx.Addr().Unmap()
		bits := pfx.Bits() - 96
		if bits < 0 {
			return bad("an IPv4-mapped prefix shorter than /96 is not meaningful")
		}
		pfx = netip.PrefixFrom(a, bits)
	}
	if pfx.Bits() == 0 {
		return bad("a /0 would allow every address; name the network you mean")
	}
	return IPRule{Prefix: pfx, Port: port}, nil
}

func trimParseErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

// HostEntry is one --add-host NAME:IP pin.
type HostEntry struct {
	Name string
	Addr netip.Addr
}

// ParseAddHost parses an --add-host value NAME:IP (IPv6 may be bare or in
// brackets: db:[2001:db8::5]).
func ParseAddHost(s string) (HostEntry, error) {
	bad := func(reason string) (HostEntry, error) {
		return HostEntry{}, &ParseError{Key: "add-host", Value: s, Reason: reason}
	}
	i := strings.IndexByte(s, ':')
	if i < 0 {
		return bad("expected NAME:IP")
	}
	name, reason := normalizeName(s[:i])
	if reason != "" {
		return bad(reason)
	}
	if name == HostInternal {
		return bad(HostInternal + " is reserved; use `allow-host-port`")
	}
	ip := strings.TrimSuffix(strings.TrimPrefix(s[i+1:], "["), "]")
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return bad("not an IP address: " + trimParseErr(err))
	}
	if a.Zone() != "" {
		return bad("zones are not allowed")
	}
	return HostEntry{Name: name, Addr: a.Unmap()}, nil
}

// ParseHostPort parses an --allow-host-port value (1-65535).
func ParseHostPort(s string) (uint16, error) {
	p, err := parsePort(s)
	if err != nil {
		return 0, &ParseError{Key: "allow-host-port", Value: s, Reason: err.Error()}
	}
	return p, nil
}
