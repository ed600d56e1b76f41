package netproxy

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
)

// Config is the parsed network part of the user's policy.
type Config struct {
	AllowDomains []DomainRule // allow-domain
	DenyDomains  []DomainRule // deny-domain (wins over every allow)
	AllowIPs     []IPRule     // allow-ip
	AddHosts     []HostEntry  // add-host
	HostPorts    []uint16     // allow-host-port
	// Refused are names (normalized) a profile's program reaches for and
	// does without, each with what it does without it: their refusal says
	// that, not the flag that would allow them (Expected).
	Refused map[string]string
}

// Decision is the verdict on one flow or name.
type Decision struct {
	Allow  bool
	Reason string // why; always set, for the audit trail and the user's notice
	// Hint, on a refusal, names the flag that would allow it ("" when none
	// would): see Policy.Hint.
	Hint string
	// Public, when set, replaces Reason and Hint wherever the sandbox can
	// read them (the client's 403, the sandbox's denial record): they hold
	// something the agent never saw (an address the host resolved).
	Public string
}

// Policy answers "may the sandbox reach NAME/IP:PORT". It is immutable after
// NewPolicy and safe for concurrent use.
type Policy struct {
	cfg   Config
	hosts map[string]netip.Addr
}

// NewPolicy validates cfg and builds a Policy.
func NewPolicy(cfg Config) (*Policy, error) {
	p := &Policy{cfg: cfg, hosts: map[string]netip.Addr{}}
	for _, h := range cfg.AddHosts {
		n, ok := NormalizeName(h.Name)
		if !ok || !h.Addr.IsValid() {
			return nil, &ParseError{Key: "add-host", Value: h.Name + ":" + h.Addr.String(), Reason: "invalid entry"}
		}
		if prev, dup := p.hosts[n]; dup && prev != h.Addr.Unmap() {
			return nil, &ParseError{Key: "add-host", Value: n, Reason: fmt.Sprintf("pinned twice (%s and %s); keep one", prev, h.Addr)}
		}
		p.hosts[n] = h.Addr.Unmap()
	}
	for _, r := range slices.Concat(cfg.AllowDomains, cfg.DenyDomains) {
		if n, ok := NormalizeName(r.Domain); !ok || n != r.Domain {
			return nil, &ParseError{Key: "allow-domain", Value: r.String(), Reason: "not a normalized domain; build rules with ParseDomainPattern"}
		}
	}
	for _, r := range cfg.AllowIPs {
		if !r.Prefix.IsValid() || r.Prefix.Masked() != r.Prefix || r.Prefix.Bits() == 0 {
			return nil, &ParseError{Key: "allow-ip", Value: r.String(), Reason: "not a canonical CIDR; build rules with ParseIPRule"}
		}
	}
	for _, port := range cfg.HostPorts {
		if port == 0 {
			return nil, &ParseError{Key: "allow-host-port", Value: "0", Reason: "port 0 is not a port"}
		}
	}
	return p, nil
}

// Config returns a copy of the configuration the Policy was built from.
func (p *Policy) Config() Config { return p.cfg }

// Enabled reports whether anything at all may leave the sandbox.
func (p *Policy) Enabled() bool {
	return len(p.cfg.AllowDomains)+len(p.cfg.AllowIPs)+len(p.cfg.HostPorts) > 0
}

// Pinned returns the --add-host address for a normalized name.
func (p *Policy) Pinned(name string) (netip.Addr, bool) {
	a, ok := p.hosts[name]
	return a, ok
}

func (p *Policy) denied(name string, port uint16) (DomainRule, bool) {
	for _, r := range p.cfg.DenyDomains {
		if r.Match(name, port) {
			return r, true
		}
	}
	return DomainRule{}, false
}

// Resolvable reports whether the sandbox's DNS should answer A queries for the
// name with a fake address: it is allowed by some --allow-domain rule (on some
// port) and not denied on every port, or it is host.jail.internal with at least
// one --allow-host-port, or it is pinned with --add-host (so that a flow to it
// fails with a clear "not in allowlist" instead of a confusing NXDOMAIN).
func (p *Policy) Resolvable(name string) bool {
	name, ok := NormalizeName(name)
	if !ok {
		return false
	}
	if name == HostInternal {
		return len(p.cfg.HostPorts) > 0
	}
	for _, r := range p.cfg.DenyDomains {
		if r.Port == 0 && r.MatchName(name) {
			return false
		}
	}
	if _, ok := p.hosts[name]; ok {
		return true
	}
	for _, r := range p.cfg.AllowDomains {
		if r.MatchName(name) {
			return true
		}
	}
	return false
}

// Decide says whether the sandbox may open a TCP flow to name (may be empty
// for a flow to a raw address) at ip (may be invalid when only the name is
// known) on port. Order: --deny-domain wins; host.jail.internal is open exactly
// on the --allow-host-port ports; an --allow-domain rule matching name and port
// allows; an --allow-ip rule matching ip and port allows; everything else is
// denied. Decide does not resolve names nor look at the address guard: see
// CheckDial for the address the host will actually dial.
func (p *Policy) Decide(name string, ip netip.Addr, port uint16) Decision {
	d := p.decide(name, ip, port)
	if !d.Allow && d.Hint == "" && port != 0 {
		if name != "" {
			d.Hint = p.Hint(name, netip.Addr{}, port)
		} else {
			d.Hint = p.Hint("", ip, port)
		}
	}
	return d
}

// Expected returns d as it is said for a name of Config.Refused that no
// rule allows: its reason is what the program does without it, and no flag
// is named (allowing the name, github.com say, could open far more than the
// program wanted). Any other decision, and a refusal of another kind (a
// deny-domain, a port), is returned as it is.
func (p *Policy) Expected(name string, d Decision) Decision {
	if d.Allow || name == "" || len(p.cfg.Refused) == 0 || d.Reason != reasonNotAllowed && d.Reason != reasonNotAllowedDNS {
		return d
	}
	n, ok := NormalizeName(name)
	if !ok {
		return d
	}
	why, ok := p.cfg.Refused[n]
	if !ok {
		return d
	}
	return Decision{Reason: why, Public: d.Public}
}

func (p *Policy) decide(name string, ip netip.Addr, port uint16) Decision {
	if port == 0 {
		return Decision{Reason: "port 0"}
	}
	if name != "" {
		n, ok := NormalizeName(name)
		if !ok {
			return Decision{Reason: "invalid name"}
		}
		name = n
		if r, ok := p.denied(name, port); ok {
			return Decision{Reason: "denied by deny-domain " + r.String()}
		}
		if name == HostInternal {
			if slices.Contains(p.cfg.HostPorts, port) {
				return Decision{Allow: true, Reason: "allow-host-port " + strconv.Itoa(int(port))}
			}
			return Decision{Reason: "port not opened with allow-host-port"}
		}
		nameMatched := false
		for _, r := range p.cfg.AllowDomains {
			if r.Match(name, port) {
				return Decision{Allow: true, Reason: "allow-domain " + r.String()}
			}
			nameMatched = nameMatched || r.MatchName(name)
		}
		if ip.IsValid() {
			if r, ok := p.matchIP(ip, port); ok {
				return Decision{Allow: true, Reason: "allow-ip " + r.String()}
			}
		}
		if nameMatched {
			return Decision{Reason: "port " + strconv.Itoa(int(port)) + " not allowed for this name"}
		}
		return Decision{Reason: reasonNotAllowed}
	}
	if !ip.IsValid() {
		return Decision{Reason: "no destination"}
	}
	if r, ok := p.matchIP(ip, port); ok {
		return Decision{Allow: true, Reason: "allow-ip " + r.String()}
	}
	return Decision{Reason: "raw IP address not allowed by allow-ip"}
}

// The reasons of the plainest refusals, which messages shorten to the hint.
const (
	reasonNotAllowed    = "not in allowlist"
	reasonNotAllowedDNS = "not in allowlist; answered with a refusal address"
)

// Hint returns the option and value that would let the sandbox reach name
// (or, when name is empty, the raw address ip) on port (0 for a DNS query:
// any port), or "" when no allow rule would: a deny-domain rule wins over
// every allow, and the user wrote it. The option is a `key` reference
// ("`allow-domain` api.example"), which the reader spells as its user types
// it (--allow-domain on the command line). The address guard's refusals
// carry their own advice (see CheckDial).
func (p *Policy) Hint(name string, ip netip.Addr, port uint16) string {
	if name == "" {
		if !ip.IsValid() || port == 0 {
			return ""
		}
		return "`allow-ip` " + ipRuleText(ip.Unmap(), port)
	}
	n, ok := NormalizeName(name)
	if !ok {
		return ""
	}
	for _, r := range p.cfg.DenyDomains {
		if r.MatchName(n) && (r.Port == 0 || r.Port == port) {
			return ""
		}
	}
	if n == HostInternal {
		if port == 0 {
			return "`allow-host-port` PORT"
		}
		return "`allow-host-port` " + strconv.Itoa(int(port))
	}
	if port != 0 {
		for _, r := range p.cfg.AllowDomains {
			if r.MatchName(n) {
				// Allowed on another port: name this one.
				return "`allow-domain` " + n + ":" + strconv.Itoa(int(port))
			}
		}
	}
	return "`allow-domain` " + n
}

func (p *Policy) matchIP(ip netip.Addr, port uint16) (IPRule, bool) {
	for _, r := range p.cfg.AllowIPs {
		if r.Match(ip, port) {
			return r, true
		}
	}
	return IPRule{}, false
}

// metadataAddrs are cloud instance-metadata endpoints outside the ranges the
// guard refuses by class (169.254.169.254 is link-local and already refused).
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("fd00:ec2::254"),   // AWS IMDS over IPv6 (unique local)
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud metadata (shared address space)
	netip.MustParseAddr("168.63.129.16"),   // Azure WireServer / platform endpoint (a public address)
}

var (
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8") // connect(0.x.y.z) reaches the local host on Linux
	fakeRange   = netip.MustParsePrefix("198.18.0.0/15")
	nat64       = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052: the last 32 bits are an IPv4 address
	sixToFour   = netip.MustParsePrefix("2002::/16")    // RFC 3056: bits 16-47 are an IPv4 address
)

// specialRanges are refused by class: the user's internal networks and the
// special-purpose ranges (IANA registries, RFC 6890) that are no public
// destination. internal marks the ranges where a user's own services live:
// an --add-host pin to an address there is an explicit choice and opens it.
var specialRanges = []struct {
	pfx      netip.Prefix
	class    string
	internal bool
}{
	{netip.MustParsePrefix("10.0.0.0/8"), "a private network address (RFC 1918)", true},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private network address (RFC 1918)", true},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private network address (RFC 1918)", true},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space (CGNAT, RFC 6598)", true},
	{netip.MustParsePrefix("fc00::/7"), "a unique local address (RFC 4193)", true},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address (RFC 3879)", true},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol assignment (RFC 6890)", false},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (RFC 1112)", false},
	{netip.MustParsePrefix("100::/64"), "discard-only (RFC 6666)", false},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64 (RFC 8215)", false},
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible address (deprecated, RFC 4291)", false},
}

// CheckDial is the address guard: it decides whether the host may dial ip:port
// on behalf of a flow for name. Loopback, link-local (169.254.169.254 cloud
// metadata; SSRF-to-IMDS is the classic agent exfiltration path), unspecified
// and 0.0.0.0/8, multicast/broadcast, cloud metadata, the fake range, the
// host's own addresses (hostAddrs), private and shared ranges (RFC 1918,
// CGNAT, ULA: a wildcard allow must not become a way into the user's
// internal network) and other special-purpose ranges are refused, also when
// embedded in a NAT64 or 6to4 address, unless an --allow-ip rule covers
// ip:port and lies inside the guarded range (classify: 127.0.0.0/8 opens
// loopback, 10.0.0.0/8 that network, only the address itself the host's
// own addresses and metadata endpoints; 128.0.0.0/1 opens none), or name is host.jail.internal on an --allow-host-port port and ip
// is loopback, or (private and shared ranges only) name is pinned to ip with
// --add-host: the user typed that pairing.
func (p *Policy) CheckDial(name string, ip netip.Addr, port uint16, hostAddrs []netip.Addr) Decision {
	ip = ip.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1: never let the mapped form slip past the class checks
	class, internal, within := classify(ip, hostAddrs)
	for _, r := range p.cfg.AllowIPs {
		// A rule opens a guarded address only when it lies inside the
		// guarded range itself (the address, 127.0.0.0/8, 10.0.0.0/8):
		// a rule that merely contains it (128.0.0.0/1, the LAN that holds
		// the host) was written for the addresses around it, and must not
		// become a way to the host's own services or cloud metadata.
		if r.Match(ip, port) && (class == "" || within.Bits() <= r.Prefix.Bits() && within.Contains(r.Prefix.Addr())) {
			return Decision{Allow: true, Reason: "allow-ip " + r.String()}
		}
	}
	if name == HostInternal && ip.IsLoopback() && slices.Contains(p.cfg.HostPorts, port) {
		return Decision{Allow: true, Reason: "allow-host-port " + strconv.Itoa(int(port))}
	}
	if class == "" {
		return Decision{Allow: true, Reason: "public address"}
	}
	if pinned, ok := p.hosts[name]; internal && ok && pinned == ip {
		return Decision{Allow: true, Reason: "add-host " + name + ":" + ip.String()}
	}
	// The advice names options as `key` references, for the reader (the
	// user's notice) to spell as its user types them.
	reason := fmt.Sprintf("%s resolves to %s, %s; allow it with `allow-ip` %s", nameOr(name, ip), ip, class, ipRuleText(ip, port))
	if internal && name != "" {
		reason += " (or pin the name with `add-host` " + name + ":" + ip.String() + ")"
	}
	d := Decision{Reason: reason, Hint: "`allow-ip` " + ipRuleText(ip, port)}
	if name != "" {
		// The address came from the host's resolver, which the sandbox
		// cannot ask: it stays out of what the agent reads.
		d.Public = name + " resolves on the host to an address jail does not dial (internal or special-purpose); only the user can allow it"
	}
	return d
}

// Guarded ranges named by class rather than by specialRanges.
var (
	loopback4  = netip.MustParsePrefix("127.0.0.0/8")
	linkLocal4 = netip.MustParsePrefix("169.254.0.0/16")
	linkLocal6 = netip.MustParsePrefix("fe80::/10")
	multicast4 = netip.MustParsePrefix("224.0.0.0/4")
	multicast6 = netip.MustParsePrefix("ff00::/8")
	imds       = netip.AddrFrom4([4]byte{169, 254, 169, 254}) // the usual cloud metadata endpoint
)

// addrClass names the class of address the guard refuses ip for ("" for a
// public address) and whether it is an internal-network range.
func addrClass(ip netip.Addr, hostAddrs []netip.Addr) (string, bool) {
	class, internal, _ := classify(ip, hostAddrs)
	return class, internal
}

// classify is addrClass with the guarded range ip lies in (the one an
// --allow-ip rule must lie inside to open it): the class's whole range for
// loopback, link-local, multicast, the fake range, the special and internal
// ranges, NAT64 and 6to4; the address alone for the host's own addresses,
// the metadata endpoints and the broadcast address, which share a range
// with addresses the user may mean.
func classify(ip netip.Addr, hostAddrs []netip.Addr) (string, bool, netip.Prefix) {
	only := netip.PrefixFrom(ip, ip.BitLen())
	either := func(v4, v6 netip.Prefix) netip.Prefix {
		if ip.Is4() {
			return v4
		}
		return v6
	}
	switch {
	case !ip.IsValid():
		return "an invalid address", false, netip.Prefix{}
	case ip.IsLoopback():
		return "loopback", false, either(loopback4, only)
	case ip.IsUnspecified() || ip.Is4() && thisNetwork.Contains(ip):
		return "the unspecified address", false, either(thisNetwork, only)
	case ip == imds:
		// A rule for the link-local network (a device on it) does not
		// open the metadata endpoint in it; only the address itself does.
		return "link-local (cloud metadata)", false, only
	case ip.IsLinkLocalUnicast():
		return "link-local (cloud metadata)", false, either(linkLocal4, linkLocal6)
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "multicast/broadcast", false, only
	case ip.IsMulticast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast():
		return "multicast/broadcast", false, either(multicast4, multicast6)
	case slices.Contains(metadataAddrs, ip):
		return "a cloud metadata address", false, only
	case fakeRange.Contains(ip):
		return "jail's fake address range", false, fakeRange
	case slices.Contains(hostAddrs, ip):
		return "one of the host's own addresses", false, only
	}
	// A NAT64 or 6to4 gateway would carry the flow to the IPv4 address
	// inside: judge that address (RFC 6052, RFC 3056).
	if nat64.Contains(ip) || sixToFour.Contains(ip) {
		b := ip.As16()
		v4 := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		pfx := nat64
		if sixToFour.Contains(ip) {
			v4 = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
			pfx = sixToFour
		}
		if c, _ := addrClass(v4, hostAddrs); c != "" {
			return "an IPv6 address carrying " + v4.String() + ", " + c, false, pfx
		}
		return "", false, netip.Prefix{}
	}
	for _, r := range specialRanges {
		if r.pfx.Contains(ip) {
			return r.class, r.internal, r.pfx
		}
	}
	return "", false, netip.Prefix{}
}

func nameOr(name string, ip netip.Addr) string {
	if name != "" {
		return name
	}
	return ip.String()
}

func ipRuleText(ip netip.Addr, port uint16) string {
	if ip.Is6() {
		return "[" + ip.String() + "/128]:" + strconv.Itoa(int(port))
	}
	return ip.String() + "/32:" + strconv.Itoa(int(port))
}

// Flags holds the raw values of the network flags, as the CLI collected them.
type Flags struct {
	AllowDomains []string // allow-domain PATTERN[:PORT]
	DenyDomains  []string // deny-domain PATTERN[:PORT]
	AllowIPs     []string // allow-ip CIDR[:PORT]
	AddHosts     []string // add-host NAME:IP
	HostPorts    []string // allow-host-port PORT
}

// BuildConfig parses every flag value and returns all the errors at once
// (each a *ParseError naming its flag), so the user fixes them in one go.
func BuildConfig(f Flags) (Config, error) {
	var cfg Config
	var errs []error
	for _, s := range f.AllowDomains {
		r, err := ParseDomainPattern(s)
		errs = append(errs, err)
		if err == nil {
			cfg.AllowDomains = append(cfg.AllowDomains, r)
		}
	}
	for _, s := range f.DenyDomains {
		r, err := ParseDenyPattern(s)
		errs = append(errs, err)
		if err == nil {
			cfg.DenyDomains = append(cfg.DenyDomains, r)
		}
	}
	for _, s := range f.AllowIPs {
		r, err := ParseIPRule(s)
		errs = append(errs, err)
		if err == nil {
			cfg.AllowIPs = append(cfg.AllowIPs, r)
		}
	}
	for _, s := range f.AddHosts {
		h, err := ParseAddHost(s)
		errs = append(errs, err)
		if err == nil {
			cfg.AddHosts = append(cfg.AddHosts, h)
		}
	}
	for _, s := range f.HostPorts {
		p, err := ParseHostPort(s)
		errs = append(errs, err)
		if err == nil && !slices.Contains(cfg.HostPorts, p) {
			cfg.HostPorts = append(cfg.HostPorts, p)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	return cfg, nil
}
