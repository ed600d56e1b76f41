package netproxy

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// ServeFallback serves the proxy-aware fallback on ln (a listener on the
// sandbox's loopback, used when TPROXY cannot be set up): SOCKS5 (CONNECT
// only, no authentication; domain names resolved by the proxy) and HTTP
// (CONNECT tunnels and absolute-form requests for http:// URLs), with the same
// Policy, sniffing, address guard and events as Serve. Only programs that
// honour the ProxyEnv variables go through it; the rest have no route out.
func (p *Proxy) ServeFallback(ctx context.Context, ln net.Listener) error {
	var atEnd func(context.Context, net.Conn)
	if p.InSandbox {
		atEnd = p.handleFallback // a refusal listener: it only refuses
	}
	return p.serve(ctx, ln, p.handleFallback, atEnd)
}

func (p *Proxy) handleFallback(ctx context.Context, c net.Conn) {
	br := bufio.NewReaderSize(c, 4096)
	c.SetReadDeadline(time.Now().Add(p.sniffTimeout()))
	first, err := br.Peek(1)
	if err != nil {
		c.Close()
		return
	}
	if first[0] == 5 {
		p.handleSOCKS5(ctx, c, br)
		return
	}
	p.handleHTTPProxy(ctx, c, br)
}

// bufConn is a conn whose first bytes were read into a bufio.Reader.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufConn) Read(p []byte) (int, error) {
	if b.r.Buffered() > 0 {
		return b.r.Read(p)
	}
	return b.Conn.Read(p)
}

// unwrap returns the underlying conn when nothing is left buffered, so the
// relay can splice.
func unwrap(c net.Conn, br *bufio.Reader) net.Conn {
	if br.Buffered() == 0 {
		return c
	}
	return &bufConn{Conn: c, r: br}
}

// target turns a requested host (name or literal) into the flow's name or raw
// address. A literal in the fake range maps back to its name like in Serve.
func (p *Proxy) target(f *flow, host string, port uint16) (netip.Addr, string) {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		f.dst = netip.AddrPortFrom(a, port)
		if p.Fakes.Contains(a) {
			n, ok := p.Fakes.Lookup(a)
			if !ok {
				return a, "fake address not handed out by jail's DNS"
			}
			f.name = n
		}
		return a, ""
	}
	f.dst = netip.AddrPortFrom(netip.Addr{}, port)
	n, ok := NormalizeName(host)
	if !ok {
		f.name = strings.ToLower(host)
		return netip.Addr{}, "invalid host name"
	}
	f.name = n
	return netip.Addr{}, ""
}

// SOCKS5 reply codes (RFC 1928 6).
const (
	socksOK           = 0
	socksFailure      = 1
	socksNotAllowed   = 2
	socksHostUnreach  = 4
	socksCmdNotSupp   = 7
	socksAddrNotSuppd = 8
)

type socksRequest struct {
	cmd  byte
	host string // a name, or an IP literal
	port uint16
}

// readSOCKS5Greeting reads the method negotiation and reports whether
// "no authentication" (0) was offered.
func readSOCKS5Greeting(r io.Reader) (bool, error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return false, err
	}
	if h[0] != 5 {
		return false, fmt.Errorf("socks version %d: %w", h[0], errMalformed)
	}
	m := make([]byte, h[1])
	if _, err := io.ReadFull(r, m); err != nil {
		return false, err
	}
	for _, x := range m {
		if x == 0 {
			return true, nil
		}
	}
	return false, nil
}

// readSOCKS5Request parses VER CMD RSV ATYP DST.ADDR DST.PORT.
func readSOCKS5Request(r io.Reader) (socksRequest, byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return socksRequest{}, socksFailure, err
	}
	if h[0] != 5 || h[2] != 0 {
		return socksRequest{}, socksFailure, fmt.Errorf("bad socks request header: %w", errMalformed)
	}
	req := socksRequest{cmd: h[1]}
	switch h[3] {
	case 1:
		var a [4]byte
		if _, err := io.ReadFull(r, a[:]); err != nil {
			return req, socksFailure, err
		}
		req.host = netip.AddrFrom4(a).String()
	case 4:
		var a [16]byte
		if _, err := io.ReadFull(r, a[:]); err != nil {
			return req, socksFailure, err
		}
		req.host = netip.AddrFrom16(a).String()
	case 3:
		var l [1]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return req, socksFailure, err
		}
		name := make([]byte, l[0])
		if _, err := io.ReadFull(r, name); err != nil {
			return req, socksFailure, err
		}
		if l[0] == 0 {
			return req, socksAddrNotSuppd, fmt.Errorf("empty socks domain name: %w", errMalformed)
		}
		req.host = string(name)
	default:
		return req, socksAddrNotSuppd, fmt.Errorf("socks address type %d: %w", h[3], errMalformed)
	}
	var port [2]byte
	if _, err := io.ReadFull(r, port[:]); err != nil {
		return req, socksFailure, err
	}
	req.port = binary.BigEndian.Uint16(port[:])
	return req, socksOK, nil
}

func socksReply(c net.Conn, code byte) error {
	// BND.ADDR 0.0.0.0:0: clients of CONNECT ignore it.
	_, err := c.Write([]byte{5, code, 0, 1, 0, 0, 0, 0, 0, 0})
	return err
}

func (p *Proxy) handleSOCKS5(ctx context.Context, c net.Conn, br *bufio.Reader) {
	f := &flow{start: time.Now(), mode: "socks5", client: c.RemoteAddr().String()}
	noAuth, err := readSOCKS5Greeting(br)
	if err != nil {
		c.Close()
		return
	}
	if !noAuth {
		c.Write([]byte{5, 0xff}) // no acceptable method
		c.Close()
		return
	}
	if _, err := c.Write([]byte{5, 0}); err != nil {
		c.Close()
		return
	}
	req, code, err := readSOCKS5Request(br)
	if err != nil {
		if code != socksFailure {
			socksReply(c, code)
		}
		c.Close()
		return
	}
	c.SetReadDeadline(time.Time{})
	if req.cmd != 1 { // only CONNECT; BIND and UDP ASSOCIATE would open other paths
		socksReply(c, socksCmdNotSupp)
		c.Close()
		return
	}
	raw, d := p.proxyTarget(f, req.host, req.port)
	if d.Allow {
		d = p.decide(f.name, raw, req.port)
	}
	if !d.Allow {
		p.refuseSOCKS(f, c, d)
		return
	}
	up, dialed, d := p.dial(ctx, f, raw, req.port, kindUnknown)
	if up == nil {
		if !d.Allow {
			p.refuseSOCKS(f, c, d)
			return
		}
		socksReply(c, socksHostUnreach)
		p.failed(f, c, d.Reason, dialed)
		return
	}
	if err := socksReply(c, socksOK); err != nil {
		up.Close()
		c.Close()
		return
	}
	p.relayChecked(f, unwrap(c, br), up, dialed, raw)
}

// relayChecked relays a fallback tunnel whose destination was named in the
// request; the client's first bytes are still inspected (SNI/Host must be the
// requested name) before they go upstream.
func (p *Proxy) relayChecked(f *flow, c, up net.Conn, dialed netip.AddrPort, raw netip.Addr) {
	rel := p.relayFlow(f, c, up, nil, sniffResult{}, true, nil)
	if p.refusedLate(f, rel, dialed) {
		return
	}
	reason := p.decide(f.name, raw, f.dst.Port()).Reason
	if rel.err != nil {
		reason += "; ended with " + rel.err.Error()
	}
	ev := p.event(f, true, reason, dialed, rel.up, rel.down)
	ev.Requests = rel.requests
	p.emit(ev)
}

// parseConnectTarget parses the authority of a CONNECT request: host:port
// with a mandatory port, IPv6 in brackets.
func parseConnectTarget(s string) (string, uint16, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, fmt.Errorf("CONNECT target %q: %w", s, errMalformed)
	}
	n, err := parsePort(port)
	if err != nil || host == "" {
		return "", 0, fmt.Errorf("CONNECT target %q: %w", s, errMalformed)
	}
	return host, n, nil
}

// refuseHTTP records a proxy request the policy refuses and answers it with
// a 403 naming the host and the flag: for a request, the same 403 as a
// refused transparent flow; for a CONNECT, the refusal in the status line as
// well (refusalConnect403). A CONNECT refused this way is the kindest
// refusal of all: https-proxy-agent (npm) hands the 403 to the client as the
// origin's answer, which npm prints and does not retry.
func (p *Proxy) refuseHTTP(c net.Conn, f *flow, d Decision, connect bool) {
	d = p.Policy.Expected(f.name, d)
	p.emitRefusal(f, d)
	c.SetWriteDeadline(time.Now().Add(time.Second))
	if connect {
		c.Write(refusalConnect403(p.spell(publicText(f.target(), d))))
		return
	}
	c.Write(refusal403(p.spell(publicText(f.target(), d))))
}

// refuseSOCKS records a refused SOCKS5 CONNECT and answers "connection not
// allowed by ruleset" (RFC 1928 6), which SOCKS clients print as such.
func (p *Proxy) refuseSOCKS(f *flow, c net.Conn, d Decision) {
	d = p.Policy.Expected(f.name, d)
	p.emitRefusal(f, d)
	socksReply(c, socksNotAllowed)
	c.Close()
}

// emitRefusal records a refusal of the fallback's; d is already as said
// (Expected).
func (p *Proxy) emitRefusal(f *flow, d Decision) {
	ev := p.event(f, false, d.Reason, netip.AddrPort{}, 0, 0)
	ev.Hint, ev.Public = d.Hint, d.Public
	if ev.Public == "" {
		ev.Public = d.Reason
	}
	p.emit(ev)
}

// proxyTarget is target for a proxy request: a refusal address or an
// unissued fake address is refused outright (Allow false), anything else
// goes on to the policy (Allow true).
func (p *Proxy) proxyTarget(f *flow, host string, port uint16) (netip.Addr, Decision) {
	raw, bad := p.target(f, host, port)
	switch {
	case bad != "":
		return raw, Decision{Reason: bad}
	case raw.IsValid() && p.Fakes.Refused(raw):
		return raw, Decision{Reason: reasonNotAllowed, Hint: p.Policy.Hint(f.name, netip.Addr{}, port)}
	}
	return raw, Decision{Allow: true}
}

func httpError(c net.Conn, code int, reason string) {
	body := "jail: " + reason + "\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(body), body)
}

func (p *Proxy) handleHTTPProxy(ctx context.Context, c net.Conn, br *bufio.Reader) {
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				httpError(c, http.StatusBadRequest, "malformed proxy request")
			}
			c.Close()
			return
		}
		c.SetReadDeadline(time.Time{})
		f := &flow{start: time.Now(), mode: "http-proxy", client: c.RemoteAddr().String()}
		if req.Method == http.MethodConnect {
			p.httpConnect(ctx, f, c, br, req)
			return
		}
		if !p.httpForward(ctx, f, c, req) {
			closeGently(c)
			return
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Minute)) // idle keep-alive bound
	}
}

func (p *Proxy) httpConnect(ctx context.Context, f *flow, c net.Conn, br *bufio.Reader, req *http.Request) {
	host, port, err := parseConnectTarget(req.Host)
	if err != nil {
		httpError(c, http.StatusBadRequest, "CONNECT needs host:port")
		c.Close()
		return
	}
	raw, d := p.proxyTarget(f, host, port)
	if d.Allow {
		d = p.decide(f.name, raw, port)
	}
	if !d.Allow {
		p.refuseHTTP(c, f, d, true)
		closeGently(c)
		return
	}
	up, dialed, d := p.dial(ctx, f, raw, port, kindUnknown)
	if up == nil {
		if !d.Allow {
			p.refuseHTTP(c, f, d, true)
		} else {
			ev := p.event(f, true, d.Reason, dialed, 0, 0)
			ev.Failed = true
			p.emit(ev)
			c.SetWriteDeadline(time.Now().Add(time.Second))
			c.Write(connectFailed502("connect to " + f.target() + " failed: " + d.Reason))
		}
		closeGently(c)
		return
	}
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		up.Close()
		c.Close()
		return
	}
	p.relayChecked(f, unwrap(c, br), up, dialed, raw)
}

// httpForward proxies one absolute-form request (http:// URL through
// HTTP_PROXY). Each request is decided on its own, so a keep-alive proxy
// connection cannot carry a second request to another host. It reports
// whether the client connection may be reused.
func (p *Proxy) httpForward(ctx context.Context, f *flow, c net.Conn, req *http.Request) bool {
	if req.URL == nil || req.URL.Scheme != "http" || req.URL.Host == "" {
		httpError(c, http.StatusBadRequest, "only http:// URLs and CONNECT are proxied")
		return false
	}
	host, portStr := req.URL.Hostname(), req.URL.Port()
	port := uint16(80)
	if portStr != "" {
		n, err := parsePort(portStr)
		if err != nil {
			httpError(c, http.StatusBadRequest, "bad port in URL")
			return false
		}
		port = n
	}
	raw, d := p.proxyTarget(f, host, port)
	// Why stripPort on both sides: an IPv6 literal's URL host ([::1]:8080,
	// Hostname ::1) is compared in one spelling, as netip prints it.
	if d.Allow && req.Host != "" && stripPort(req.Host) != stripPort(net.JoinHostPort(host, "80")) {
		d = Decision{Reason: fmt.Sprintf("HTTP Host %q does not match %s (domain fronting)", clip(req.Host), host)}
	}
	if d.Allow {
		d = p.decide(f.name, raw, port)
	}
	if !d.Allow {
		p.refuseHTTP(c, f, d, false)
		return false
	}
	up, dialed, d := p.dial(ctx, f, raw, port, kindHTTP)
	if up == nil {
		if !d.Allow {
			p.refuseHTTP(c, f, d, false)
		} else {
			ev := p.event(f, true, d.Reason, dialed, 0, 0)
			ev.Failed = true
			p.emit(ev)
			httpError(c, http.StatusBadGateway, "connect to "+f.target()+" failed: "+d.Reason)
		}
		return false
	}
	defer up.Close()
	// Origin-form upstream, hop-by-hop proxy headers dropped (RFC 9110 7.6.1).
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	req.Close = true
	cu := &countConn{Conn: up}
	if err := req.Write(cu); err != nil {
		httpError(c, http.StatusBadGateway, "writing request upstream: "+err.Error())
		return false
	}
	resp, err := http.ReadResponse(bufio.NewReader(cu), req)
	if err != nil {
		httpError(c, http.StatusBadGateway, "reading response: "+err.Error())
		p.emit(p.event(f, true, "bad upstream response", dialed, cu.up, cu.down))
		return false
	}
	resp.Close = true // we always close upstream; tell the client the same
	err = resp.Write(c)
	resp.Body.Close()
	reason := p.decide(f.name, raw, port).Reason
	if err != nil {
		reason += "; ended with " + err.Error()
	}
	p.emit(p.event(f, true, reason, dialed, cu.up, cu.down))
	// One request per client connection: simpler than tracking which
	// upstream a kept-alive client connection belongs to, and the response
	// said "Connection: close".
	return false
}

// countConn counts bytes for the event of a forwarded request.
type countConn struct {
	net.Conn
	up, down int64
}

func (c *countConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.up += int64(n)
	return n, err
}

func (c *countConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.down += int64(n)
	return n, err
}
