package netproxy

import (
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Event is one network audit record. The supervisor routes it to the audit
// trail as is (it is JSON-ready).
type Event struct {
	Time       time.Time `json:"time"`
	Type       string    `json:"type"`               // "net" or "dns"
	Decision   string    `json:"decision"`           // "allow" or "deny"
	Name       string    `json:"name,omitempty"`     // the name the flow or query was for
	Addr       string    `json:"addr,omitempty"`     // net: the address dialed (or the raw destination); dns: the fake address answered
	Port       uint16    `json:"port,omitempty"`     // net: destination port
	QType      string    `json:"qtype,omitempty"`    // dns: query type (A, AAAA, ...)
	Mode       string    `json:"mode,omitempty"`     // net: "tproxy", "http-proxy", "socks5", "publish", "connect" or "host-port"
	BytesUp    int64     `json:"bytes_up"`           // net: sandbox -> remote
	BytesDown  int64     `json:"bytes_down"`         // net: remote -> sandbox
	DurationMs int64     `json:"duration_ms"`        // net: flow lifetime
	Reason     string    `json:"reason,omitempty"`   // why allowed or denied
	Requests   int       `json:"requests,omitempty"` // net: HTTP/1 requests checked and forwarded on the flow
	Client     string    `json:"client,omitempty"`   // the sandbox-side address of the flow
	Via        string    `json:"via,omitempty"`      // net: the host's upstream proxy the flow went through (scheme://host:port, no credentials)

	// Hint names the option and value that would let a refused flow or name
	// through, as a `key` reference ("`allow-domain` NAME", "`allow-ip`
	// CIDR:PORT"; see Policy.Hint), "" when none would (a deny-domain rule,
	// a malformed request). It is for the user: it may hold an address the
	// host resolved, which the agent never saw.
	Hint string `json:"hint,omitempty"`
	// Public is the refusal as the sandbox may read it (the answer jail
	// sends the client, the sandbox's own denial record): Reason without
	// anything the agent could not know already (the addresses the host
	// resolved a name to). Set on denials only.
	Public string `json:"public,omitempty"`
	// Failed marks an allowed flow whose upstream could not be reached (the
	// host could not resolve or connect); nothing was relayed.
	Failed bool `json:"failed,omitempty"`
}

// Target is what the flow or query was for, as a message names it: NAME:PORT,
// ADDR:PORT for a raw address, NAME for a DNS query.
func (e Event) Target() string {
	host := e.Name
	if host == "" {
		host = e.Addr
	}
	if e.Port == 0 {
		return host
	}
	return net.JoinHostPort(host, strconv.Itoa(int(e.Port)))
}

// RefusalText is the one line that tells what was refused and what would
// allow it, for the user's notice and, built from Public, for the client's
// 403 body and the sandbox's record: "refused api.example:443 - add
// `allow-domain` api.example", its option reference for the reader to spell
// (Proxy.Spell; --allow-domain on the command line). The reason is kept when
// it says more than "not in allowlist"; the hint is left out when the reason
// already gives it.
func RefusalText(target, reason, hint string) string {
	s := "refused " + target
	if reason != "" && reason != reasonNotAllowed && reason != reasonNotAllowedDNS {
		s += " (" + reason + ")"
	}
	if hint != "" && !strings.Contains(plainRefs(reason), plainRefs(hint)) {
		s += " - add " + hint
	}
	return s
}

// refPattern matches an option reference, `key` (the same shape as
// policy.RefPattern, which this package does not import).
var refPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`([a-z][a-z0-9-]*)`") })

// plainRefs writes option references as bare keys: how a message reads
// where no reader spells them.
func plainRefs(s string) string { return refPattern().ReplaceAllString(s, "$1") }

const (
	decAllow = "allow"
	decDeny  = "deny"
)
