package netproxy

import "time"

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
	Mode       string    `json:"mode,omitempty"`     // net: "tproxy", "http-proxy", "socks5" or "publish"
	BytesUp    int64     `json:"bytes_up"`           // net: sandbox -> remote
	BytesDown  int64     `json:"bytes_down"`         // net: remote -> sandbox
	DurationMs int64     `json:"duration_ms"`        // net: flow lifetime
	Reason     string    `json:"reason,omitempty"`   // why allowed or denied
	Requests   int       `json:"requests,omitempty"` // net: HTTP/1 requests checked and forwarded on the flow
	Client     string    `json:"client,omitempty"`   // the sandbox-side address of the flow
	Via        string    `json:"via,omitempty"`      // net: the host's upstream proxy the flow went through (scheme://host:port, no credentials)
}

const (
	decAllow = "allow"
	decDeny  = "deny"
)
