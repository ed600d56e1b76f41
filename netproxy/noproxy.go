package netproxy

import (
	"net"
	"net/netip"
	"strings"
)

// noProxy is a parsed NO_PROXY list, with the rules Go's net/http applies
// (golang.org/x/net/http/httpproxy), so that jail and the user's Go tools
// agree on which destinations skip the proxy:
//
//   - entries are separated by commas, trimmed, compared case-insensitively;
//   - "*" alone: every destination;
//   - an IP address or CIDR ("10.0.0.0/8"), an IP with a port ("10.1.2.3:443",
//     "[fd00::1]:443"): that address (and port);
//   - a name, optionally with ":port": "example.com" matches example.com and
//     every subdomain, ".example.com" and "*.example.com" subdomains only;
//   - "localhost" and loopback addresses always bypass the proxy, listed or not.
//
// Malformed entries are ignored, as Go does. Non-ASCII names are compared as
// written (jail's names are ASCII; an IDN entry must be given in punycode).
type noProxy struct {
	all     bool
	nets    []netip.Prefix
	ips     []ipPort
	domains []domainPort
}

type ipPort struct {
	ip   netip.Addr
	port string
}

type domainPort struct {
	suffix    string // with a leading dot
	matchHost bool   // the suffix without its dot matches too
	port      string
}

func parseNoProxy(s string) *noProxy {
	np := &noProxy{}
	for _, e := range strings.Split(s, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if e == "*" {
			np.all = true
			continue
		}
		if pfx, err := netip.ParsePrefix(e); err == nil {
			np.nets = append(np.nets, pfx.Masked())
			continue
		}
		host, port, err := net.SplitHostPort(e)
		if err != nil {
			host, port = e, ""
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		if host == "" {
			continue
		}
		if ip, err := netip.ParseAddr(host); err == nil {
			np.ips = append(np.ips, ipPort{ip.Unmap(), port})
			continue
		}
		host = strings.TrimPrefix(host, "*")
		d := domainPort{suffix: host, port: port}
		if !strings.HasPrefix(host, ".") {
			d.suffix, d.matchHost = "."+host, true
		}
		if d.suffix == "." {
			continue
		}
		np.domains = append(np.domains, d)
	}
	return np
}

// bypass reports whether hostport (host:port, host a name or an address)
// is dialled directly.
func (np *noProxy) bypass(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	if err == nil {
		ip = ip.Unmap()
		if ip.IsLoopback() {
			return true
		}
	}
	if np == nil {
		return false
	}
	if np.all {
		return true
	}
	if ip.IsValid() {
		for _, n := range np.nets {
			if n.Contains(ip) {
				return true
			}
		}
		for _, e := range np.ips {
			if e.ip == ip && (e.port == "" || e.port == port) {
				return true
			}
		}
	}
	for _, d := range np.domains {
		if d.port != "" && d.port != port {
			continue
		}
		if strings.HasSuffix(host, d.suffix) || (d.matchHost && host == d.suffix[1:]) {
			return true
		}
	}
	return false
}
