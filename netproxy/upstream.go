package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Upstream is the host's own proxy: on hosts that reach the internet only
// through HTTPS_PROXY and friends, the Proxy chains the flows it has allowed
// through it with HTTP CONNECT instead of dialling them directly.
//
// Which variable carries a flow (upper case first, then lower case, as Go's
// net/http reads them):
//
//	TLS (or, before the client spoke, port 443)    HTTPS_PROXY, else ALL_PROXY
//	HTTP/1 (or, before the client spoke, port 80)  HTTP_PROXY, else ALL_PROXY
//	anything else (SSH, databases, ...)             ALL_PROXY
//
// NO_PROXY (Go's rules, see noProxy) and the host's loopback are dialled
// directly, as are host.jail.internal
// flows. A name is sent to the upstream proxy as the name the policy allowed
// (never the client's SNI or Host), and the upstream proxy resolves it:
// jail's address guard applies to direct dials only (see Proxy.dial). The
// proxy's URL may carry basic-auth credentials (http://user:pass@host:port);
// they go into the Proxy-Authorization header of each CONNECT and are never
// printed (String and every error show scheme://host:port only). http:// and
// https:// proxies are supported; any other scheme is reported by
// UpstreamFromEnv and its flows are dialled directly.
type Upstream struct {
	byClass    [3]*upstreamProxy // indexed by flowClass; nil: dial directly
	noProxy    *noProxy
	noProxySet bool
}

// upstreamProxy is one proxy named by one variable.
type upstreamProxy struct {
	Var    string // the variable that named it, e.g. "HTTPS_PROXY"
	scheme string // "http" or "https"
	host   string // host:port to dial
	sni    string // the host name for a TLS connection to an https:// proxy
	auth   string // "Basic ..." or ""; never printed
}

// String is scheme://host:port: never the credentials.
func (u *upstreamProxy) String() string { return u.scheme + "://" + u.host }

// flow classes.
const (
	classHTTPS = iota
	classHTTP
	classOther
)

var classNames = [3]string{"TLS", "HTTP", "other"}

// flowClass picks the variable family for a flow from what its first bytes
// were, or, when the client has not spoken before the dial, from its port.
func flowClass(kind int, port uint16) int {
	switch {
	case kind == kindTLS:
		return classHTTPS
	case kind == kindHTTP:
		return classHTTP
	case kind == kindUnknown && port == 443:
		return classHTTPS
	case kind == kindUnknown && port == 80:
		return classHTTP
	}
	return classOther
}

// UpstreamFromEnv reads the proxy variables through getenv (os.Getenv in the
// supervisor). It returns nil when none names a usable proxy. problems are
// one line each about a variable it cannot use (and that its flows are
// dialled directly); they never hold the variable's value.
func UpstreamFromEnv(getenv func(string) string) (up *Upstream, problems []string) {
	get := func(name string) (string, string) {
		for _, n := range []string{name, strings.ToLower(name)} {
			if v := strings.TrimSpace(getenv(n)); v != "" {
				return n, v
			}
		}
		return "", ""
	}
	proxyOf := func(name string) *upstreamProxy {
		n, v := get(name)
		if v == "" {
			return nil
		}
		u, err := parseUpstream(n, v)
		if err != nil {
			problems = append(problems, err.Error())
		}
		return u
	}
	all := proxyOf("ALL_PROXY")
	up = &Upstream{}
	for class, name := range [...]string{classHTTPS: "HTTPS_PROXY", classHTTP: "HTTP_PROXY"} {
		if u := proxyOf(name); u != nil {
			up.byClass[class] = u
		} else if _, v := get(name); v == "" {
			up.byClass[class] = all
		}
	}
	up.byClass[classOther] = all
	if up.byClass[classHTTPS] == nil && up.byClass[classHTTP] == nil && up.byClass[classOther] == nil {
		return nil, problems
	}
	_, noProxy := get("NO_PROXY")
	up.noProxy = parseNoProxy(noProxy)
	up.noProxySet = noProxy != ""
	return up, problems
}

// String says which proxy carries which flows, for -v, --dry-run and the
// trail: never credentials.
func (up *Upstream) String() string {
	var carry []string
	for class, u := range up.byClass {
		if u != nil {
			carry = append(carry, classNames[class]+" flows via "+u.String()+" ("+u.Var+")")
		}
	}
	s := "egress: allowed flows are chained through the host's proxy: " + strings.Join(carry, ", ")
	if up.noProxySet {
		s += "; NO_PROXY destinations are dialled directly"
	}
	return s
}

// parseUpstream parses one proxy variable. Its errors name the variable and
// never the value (it may hold a password).
func parseUpstream(name, v string) (*upstreamProxy, error) {
	u, err := url.Parse(v)
	if err != nil || u.Scheme == "" || u.Host == "" {
		// As Go and curl do: a bare host:port means http://.
		if u2, err2 := url.Parse("http://" + v); err2 == nil && u2.Host != "" {
			u, err = u2, nil
		}
	}
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("egress: %s is not a proxy URL jail can read (scheme://host:port); its flows are dialled directly", name)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return nil, fmt.Errorf("egress: %s names a %s proxy, which jail cannot chain through (http:// and https:// only); its flows are dialled directly", name, scheme)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	if host == "" || strings.ContainsAny(host, " \r\n\t") {
		return nil, fmt.Errorf("egress: %s has no proxy host; its flows are dialled directly", name)
	}
	p := &upstreamProxy{Var: name, scheme: scheme, host: net.JoinHostPort(host, port), sni: host}
	if u.User != nil {
		pass, _ := u.User.Password()
		// RFC 7617: basic credentials are user-id ":" password, base64.
		p.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass))
	}
	return p, nil
}

// For returns the proxy that carries a flow to hostport of the given class,
// or nil when the flow is dialled directly (no proxy for its class, NO_PROXY,
// loopback). alt, when valid, is an address that also names the
// destination (an --add-host pin): NO_PROXY matching either one bypasses.
func (up *Upstream) For(class int, hostport string, alt netip.AddrPort) *upstreamProxy {
	if up == nil || up.byClass[class] == nil {
		return nil
	}
	if up.noProxy.bypass(hostport) || (alt.IsValid() && up.noProxy.bypass(alt.String())) {
		return nil
	}
	return up.byClass[class]
}

// maxConnectResponse bounds the upstream proxy's answer to CONNECT.
const maxConnectResponse = 16 << 10

// connect opens a tunnel to target (host:port) through u. The returned conn
// is the raw TCP connection whenever the proxy sent nothing past its answer
// (so relaying keeps splice(2)); otherwise it replays those bytes first.
func (u *upstreamProxy) connect(ctx context.Context, target string, timeout time.Duration) (net.Conn, error) {
	if strings.ContainsAny(target, " \r\n\t") {
		// Names come from the policy and are checked, but a request line is
		// built from this: never let a byte split it.
		return nil, fmt.Errorf("CONNECT target %q: %w", target, errMalformed)
	}
	d := net.Dialer{Timeout: timeout}
	raw, err := d.DialContext(ctx, "tcp", u.host)
	if err != nil {
		return nil, fmt.Errorf("upstream proxy %s: %w", u, trimOpErr(err))
	}
	c := raw
	deadline := time.Now().Add(timeout)
	c.SetDeadline(deadline)
	if u.scheme == "https" {
		tc := tls.Client(raw, &tls.Config{ServerName: u.sni})
		if err := tc.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, fmt.Errorf("upstream proxy %s: TLS: %w", u, err)
		}
		c = tc
	}
	var req strings.Builder
	req.WriteString("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n")
	if u.auth != "" {
		req.WriteString("Proxy-Authorization: " + u.auth + "\r\n")
	}
	req.WriteString("\r\n")
	if _, err := c.Write([]byte(req.String())); err != nil {
		c.Close()
		return nil, fmt.Errorf("upstream proxy %s: %w", u, trimOpErr(err))
	}
	br := bufio.NewReaderSize(c, 4096)
	status, err := readConnectResponse(br)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("upstream proxy %s: %w", u, err)
	}
	if status/100 != 2 {
		c.Close()
		msg := fmt.Sprintf("upstream proxy %s answered %d to CONNECT %s", u, status, target)
		if status == 407 {
			msg += " (proxy authentication required: put the credentials in " + u.Var + " as scheme://user:password@host:port)"
		}
		return nil, errors.New(msg)
	}
	c.SetDeadline(time.Time{})
	if n := br.Buffered(); n > 0 {
		pre, _ := br.Peek(n)
		return &prefixConn{Conn: c, pre: append([]byte(nil), pre...)}, nil
	}
	return c, nil
}

// readConnectResponse reads a status line and headers (RFC 9112) and
// returns the status code. The headers are not used: a 2xx answer to
// CONNECT has no body and the tunnel starts after the empty line.
func readConnectResponse(br *bufio.Reader) (int, error) {
	total, status := 0, 0
	for first := true; ; first = false {
		line, err := br.ReadSlice('\n')
		total += len(line)
		if total > maxConnectResponse || errors.Is(err, bufio.ErrBufferFull) {
			return 0, fmt.Errorf("answer to CONNECT longer than %d bytes", maxConnectResponse)
		}
		if err != nil {
			return 0, fmt.Errorf("reading the answer to CONNECT: %w", trimOpErr(err))
		}
		s := strings.TrimRight(string(line), "\r\n")
		if first {
			// HTTP/1.x SP 3DIGIT [SP reason]
			ver, rest, _ := strings.Cut(s, " ")
			code, _, _ := strings.Cut(rest, " ")
			n, err := strconv.Atoi(code)
			if !strings.HasPrefix(ver, "HTTP/1.") || len(code) != 3 || err != nil {
				return 0, fmt.Errorf("answer to CONNECT is not HTTP/1: %q", clip(s))
			}
			status = n
			continue
		}
		if s == "" {
			return status, nil
		}
	}
}

// trimOpErr drops the *net.OpError wrapping's addresses where they repeat
// what the message already says; it keeps the cause.
func trimOpErr(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}

// prefixConn replays bytes the upstream proxy sent right after its answer
// to CONNECT (a server that speaks first), then reads the connection.
type prefixConn struct {
	net.Conn
	pre []byte
}

func (c *prefixConn) Read(b []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(b, c.pre)
		c.pre = c.pre[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// CloseWrite half-closes the tunnel (relay propagates the client's EOF).
func (c *prefixConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}
