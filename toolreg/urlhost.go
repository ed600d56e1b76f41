package toolreg

import (
	"net"
	"net/url"
	"strconv"
	"strings"
)

// hostOfURL returns the host and port a registry URL reaches. Only http and
// https URLs count (a cargo "sparse+https://" or "git+https://" index too);
// file: URLs, local paths and anything else are not network places. The
// port is the URL's own, else the scheme's.
func hostOfURL(raw string) (Host, bool) {
	raw = strings.TrimSpace(raw)
	for _, p := range []string{"sparse+", "registry+", "git+"} {
		raw = strings.TrimPrefix(raw, p)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return Host{}, false
	}
	var port uint16
	switch strings.ToLower(u.Scheme) {
	case "https":
		port = 443
	case "http":
		port = 80
	default:
		return Host{}, false
	}
	name := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if name == "" || !validName(name) {
		return Host{}, false
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return Host{}, false
		}
		port = uint16(n)
	}
	return Host{Name: name, Port: port}, true
}

// validName accepts a DNS name of letters, digits, '-' and '.', or an IP
// address: nothing that could widen a pattern (no '*').
func validName(s string) bool {
	if isIP(s) {
		return true
	}
	if len(s) > 253 || strings.HasPrefix(s, ".") || strings.Contains(s, "..") {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

func isIP(s string) bool { return net.ParseIP(s) != nil }
