package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// httpVia issues GET http://name:port/ through the harness to dst.
func httpVia(h *harness, dst netip.AddrPort, host string) (string, error) {
	tr := &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) { return h.dial(dst) }}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	resp, err := cl.Get("http://" + host + "/")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusForbidden {
		b, _ := io.ReadAll(resp.Body)
		if !isRefusal(append([]byte("HTTP/1.1 403 Forbidden\r\n\r\n"), b...)) {
			return string(b), fmt.Errorf("a 403 that is not jail's: %q", b)
		}
		return "", fmt.Errorf("refused by jail: %s", b)
	}
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func helloServer(t *testing.T) (*httptest.Server, uint16) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.Host)
	}))
	t.Cleanup(srv.Close)
	return srv, uint16(srv.Listener.Addr().(*net.TCPAddr).Port)
}

func TestAllowedNameHTTP(t *testing.T) {
	_, port := helloServer(t)
	ps := fmt.Sprint(port)
	h := newHarness(t, flags{
		allow: []string{"allowed.test:" + ps},
		hosts: []string{"allowed.test:127.0.0.1"},
		ips:   []string{"127.0.0.1/32:" + ps}, // the test server is on loopback: the guard needs the explicit allow
	})
	fake := h.mustLookup("allowed.test")
	body, err := httpVia(h, netip.AddrPortFrom(fake, port), "allowed.test:"+ps)
	if err != nil || body != "hello allowed.test:"+ps {
		t.Fatalf("GET via proxy = %q, %v", body, err)
	}
	ev := h.waitEvent(func(e Event) bool { return e.Type == "net" && e.Decision == "allow" })
	if ev.Name != "allowed.test" || ev.Addr != "127.0.0.1" || ev.Port != port || ev.BytesUp == 0 || ev.BytesDown == 0 || ev.Mode != "tproxy" {
		t.Errorf("allow event = %+v", ev)
	}
	j, _ := json.Marshal(ev)
	for _, k := range []string{`"type":"net"`, `"decision":"allow"`, `"name":`, `"addr":`, `"port":`, `"bytes_up":`, `"bytes_down":`, `"duration_ms":`} {
		if !strings.Contains(string(j), k) {
			t.Errorf("event JSON %s lacks %s", j, k)
		}
	}
}

func TestAllowedNameTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "tls %s", r.TLS.ServerName)
	}))
	defer srv.Close()
	port := uint16(srv.Listener.Addr().(*net.TCPAddr).Port)
	ps := fmt.Sprint(port)
	h := newHarness(t, flags{allow: []string{"*.tls.test"}, hosts: []string{"api.tls.test:127.0.0.1"}, ips: []string{"127.0.0.1/32:" + ps}})
	fake := h.mustLookup("api.tls.test")
	c, err := h.dial(netip.AddrPortFrom(fake, port))
	if err != nil {
		t.Fatal(err)
	}
	tc := tls.Client(c, &tls.Config{ServerName: "api.tls.test", InsecureSkipVerify: true})
	tc.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(tc, "GET / HTTP/1.1\r\nHost: api.tls.test\r\nConnection: close\r\n\r\n")
	b, err := io.ReadAll(tc)
	if err != nil || !strings.HasSuffix(string(b), "tls api.tls.test") {
		t.Fatalf("TLS via proxy: %q, %v", b, err)
	}
}

// TestRefusals is the adversarial table: each row is an attack a sandboxed
// program can make; it fails if the attack reaches the server.
func TestRefusals(t *testing.T) {
	var mu sync.Mutex
	got, received := 0, 0
	srv := newServer(t, func(c net.Conn) {
		mu.Lock()
		got++
		mu.Unlock()
		buf := make([]byte, 4096)
		n, _ := c.Read(buf)
		if n > 0 {
			mu.Lock()
			received += n
			mu.Unlock()
			c.Write([]byte("SECRET"))
		}
		io.Copy(io.Discard, c)
	})
	other := newServer(t, func(c net.Conn) { c.Write([]byte("OTHER")) })
	port, ps := srv.port(), srv.portStr()
	lo := netip.MustParseAddr("127.0.0.1")
	h := newHarness(t, flags{
		allow: []string{"allowed.test:" + ps, "*.wild.test:" + ps, "evil.test:" + ps, "meta.test:" + ps, "own.test:" + ps, "b.test:" + ps},
		deny:  []string{"bad.wild.test"},
		hosts: []string{"allowed.test:127.0.0.1", "x.wild.test:127.0.0.1", "b.test:127.0.0.1", "evil.test:127.0.0.1", "nothere.test:127.0.0.1"},
		ips:   []string{"127.0.0.1/32:" + ps, "10.99.0.0/16:" + ps}, // makes the pinned loopback names dialable
	}, func(p *Proxy) {
		p.FirstByteWait = 50 * time.Millisecond
		p.Resolver = mapResolver{
			"meta.test": {netip.MustParseAddr("169.254.169.254")},
			"own.test":  {netip.MustParseAddr("192.0.2.55"), netip.MustParseAddr("::ffff:127.0.0.2")},
		}
		p.HostAddrs = func() []netip.Addr { return []netip.Addr{netip.MustParseAddr("192.0.2.55")} }
	})
	// A second policy, without --allow-ip: a name pinned to loopback must be refused.
	h2 := newHarness(t, flags{allow: []string{"evil.test"}, hosts: []string{"evil.test:127.0.0.1"}})

	fake := func(h *harness, n string) netip.AddrPort { return netip.AddrPortFrom(h.mustLookup(n), port) }
	tests := []struct {
		name   string
		h      *harness
		dst    func() netip.AddrPort
		send   []byte
		delay  time.Duration // before sending (server-first style)
		reason string
	}{
		{"raw IP not in --allow-ip", h, func() netip.AddrPort { return netip.AddrPortFrom(netip.MustParseAddr("203.0.113.9"), port) }, nil, 0, "raw IP"},
		{"raw loopback IP on another port", h, func() netip.AddrPort { return netip.AddrPortFrom(lo, other.port()) }, nil, 0, "raw IP"},
		{"fake IP never handed out", h, func() netip.AddrPort { return netip.MustParseAddrPort("198.18.200.1:" + ps) }, nil, 0, "not handed out"},
		{"wrong port for an allowed name", h, func() netip.AddrPort { return netip.AddrPortFrom(h.mustLookup("allowed.test"), other.port()) }, nil, 0, "not allowed for this name"},
		{"pinned name not in allowlist", h, func() netip.AddrPort { return netip.AddrPortFrom(h.mustLookup("nothere.test"), 9) }, nil, 0, "not in allowlist"},
		{"IPv6 destination", h, func() netip.AddrPort { return netip.MustParseAddrPort("[2001:db8::1]:" + ps) }, nil, 0, "IPv6"},
		{"SNI of another allowed name", h, func() netip.AddrPort { return fake(h, "allowed.test") }, clientHello(t, "b.test"), 0, "does not match"},
		{"SNI of a disallowed name", h, func() netip.AddrPort { return fake(h, "allowed.test") }, clientHello(t, "evil.example"), 0, "domain fronting"},
		{"SNI mismatch in 5-byte fragments", h, func() netip.AddrPort { return fake(h, "allowed.test") }, fragment(clientHello(t, "evil.example"), 5), 0, "domain fronting"},
		{"SNI mismatch sent after the first-byte wait", h, func() netip.AddrPort { return fake(h, "allowed.test") }, clientHello(t, "evil.example"), 200 * time.Millisecond, "domain fronting"},
		{"garbage TLS record", h, func() netip.AddrPort { return fake(h, "allowed.test") }, []byte{0x16, 3, 1, 0, 5, 2, 0, 0, 1, 0}, 0, "not a ClientHello"},
		{"Host header mismatch", h, func() netip.AddrPort { return fake(h, "allowed.test") }, []byte("GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n"), 0, "HTTP Host"},
		{"absolute-form target mismatch", h, func() netip.AddrPort { return fake(h, "allowed.test") }, []byte("GET http://evil.example/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n"), 0, "HTTP Host"},
		{"Host mismatch behind leading empty lines", h, func() netip.AddrPort { return fake(h, "allowed.test") }, []byte("\r\n\r\nGET / HTTP/1.1\r\nHost: evil.example\r\n\r\n"), 0, "HTTP Host"},
		{"Host hidden behind a 70 KB request target", h, func() netip.AddrPort { return fake(h, "allowed.test") }, []byte("GET /" + strings.Repeat("a", 70000) + " HTTP/1.1\r\nHost: evil.example\r\n\r\n"), 0, "no complete ClientHello or HTTP head"},
		{"two Host headers", h, func() netip.AddrPort { return fake(h, "allowed.test") }, []byte("GET / HTTP/1.1\r\nHost: allowed.test\r\nHost: evil.example\r\n\r\n"), 0, "several Host"},
		{"metadata address via host DNS", h, func() netip.AddrPort { return fake(h, "meta.test") }, []byte("hi\n"), 0, "link-local"},
		{"host's own address and mapped loopback", h, func() netip.AddrPort { return fake(h, "own.test") }, []byte("hi\n"), 0, "host's own"},
		{"name pinned to loopback without --allow-ip", h2, func() netip.AddrPort { return netip.AddrPortFrom(h2.mustLookup("evil.test"), port) }, []byte("hi\n"), 0, "loopback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			before, beforeRecv := got, received
			mu.Unlock()
			c, err := tt.h.dial(tt.dst())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if tt.send != nil {
				time.Sleep(tt.delay)
				c.Write(tt.send)
			}
			expectRefused(t, c)
			ev := tt.h.waitEvent(func(e Event) bool { return e.Decision == "deny" && strings.Contains(e.Reason, tt.reason) })
			if ev.Type != "net" || ev.Port == 0 {
				t.Errorf("deny event %+v", ev)
			}
			mu.Lock()
			// With a delay the proxy has dialed already (server-first
			// protocols), but the refused bytes must never arrive.
			if tt.delay == 0 && got != before || received != beforeRecv {
				t.Errorf("ATTACK WORKED: the server saw a connection or bytes")
			}
			mu.Unlock()
		})
	}
	// Deny wins: bad.wild.test is NXDOMAIN although *.wild.test is allowed.
	if a := h.lookup("bad.wild.test"); a.IsValid() {
		t.Errorf("bad.wild.test resolved to %v despite --deny-domain", a)
	}
	// Wildcard vs apex.
	if a := h.lookup("wild.test"); a.IsValid() {
		t.Errorf("apex wild.test resolved under *.wild.test")
	}
	if h.lookup("other.example").IsValid() {
		t.Errorf("a name not in the allowlist resolved")
	}
	// The events carry what the user's notice says: the target and the
	// flag that would allow it.
	h.waitEvent(func(e Event) bool {
		return e.Target() == "203.0.113.9:"+ps && e.Reason == "raw IP address not allowed by allow-ip" && e.Hint == "`allow-ip` 203.0.113.9/32:"+ps
	})
	h.waitEvent(func(e Event) bool {
		return e.Target() == "allowed.test:"+other.portStr() && e.Hint == "`allow-domain` allowed.test:"+other.portStr()
	})
	// With the pin and --allow-ip, the wildcard subdomain works.
	c, err := h.dial(fake(h, "x.wild.test"))
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("hi\n"))
	c.SetDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, 6)
	if _, err := io.ReadFull(c, b); err != nil || string(b) != "SECRET" {
		t.Errorf("allowed wildcard flow: %q %v", b, err)
	}
	c.Close()
}

func TestAllowHostPort(t *testing.T) {
	_, port := helloServer(t)
	_, otherPort := helloServer(t)
	h := newHarness(t, flags{hostPorts: []uint16{port}})
	fake := h.mustLookup(HostInternal)
	body, err := httpVia(h, netip.AddrPortFrom(fake, port), fmt.Sprintf("%s:%d", HostInternal, port))
	if err != nil || !strings.HasPrefix(body, "hello host.jail.internal") {
		t.Fatalf("host.jail.internal:%d = %q, %v", port, body, err)
	}
	// Nothing else on the host's loopback: not another port by name, not by IP.
	for _, dst := range []netip.AddrPort{netip.AddrPortFrom(fake, otherPort), netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), otherPort), netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port)} {
		if _, err := httpVia(h, dst, "host.jail.internal"); err == nil {
			t.Errorf("ATTACK WORKED: reached %v", dst)
		}
	}
	// Without --allow-host-port the name does not even resolve.
	h2 := newHarness(t, flags{allow: []string{"a.test"}})
	if h2.lookup(HostInternal).IsValid() {
		t.Error("host.jail.internal resolves without --allow-host-port")
	}
}

func TestConcurrent200(t *testing.T) {
	srv := newServer(t, echo)
	ps := srv.portStr()
	h := newHarness(t, flags{allow: []string{"echo.test"}, hosts: []string{"echo.test:127.0.0.1"}, ips: []string{"127.0.0.1/32:" + ps}})
	dst := netip.AddrPortFrom(h.mustLookup("echo.test"), srv.port())
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c, err := h.dial(dst)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			msg := fmt.Sprintf("flow %d %s", i, strings.Repeat("x", 64<<10))
			go func() { io.WriteString(c, msg); c.CloseWrite() }()
			b, err := io.ReadAll(c)
			if err != nil || string(b) != msg {
				errs <- fmt.Errorf("flow %d: %d bytes, %v", i, len(b), err)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestHalfClose: the client finishes sending (FIN) and still receives the
// server's whole answer, which the server sends only after seeing EOF.
func TestHalfClose(t *testing.T) {
	srv := newServer(t, func(c net.Conn) {
		b, _ := io.ReadAll(c) // until the client's FIN arrives through the proxy
		fmt.Fprintf(c, "got %d bytes", len(b))
		c.(*net.TCPConn).CloseWrite()
	})
	h := newHarness(t, flags{ips: []string{"127.0.0.1/32:" + srv.portStr()}})
	c, err := h.dial(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), srv.port()))
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write(make([]byte, 100000))
	c.CloseWrite()
	b, err := io.ReadAll(c)
	if err != nil || string(b) != "got 100000 bytes" {
		t.Fatalf("half-close: %q, %v", b, err)
	}
	ev := h.waitEvent(func(e Event) bool { return e.Decision == "allow" })
	if ev.BytesUp != 100000 || ev.BytesDown != int64(len(b)) {
		t.Errorf("byte counts %+v", ev)
	}
}

// TestServerFirstProtocol: a server that speaks first (SMTP, MySQL) works;
// the client's first bytes, sent after the banner, are still inspected.
func TestServerFirstProtocol(t *testing.T) {
	srv := newServer(t, func(c net.Conn) {
		io.WriteString(c, "220 banner\r\n")
		br := bufio.NewReader(c)
		l, _ := br.ReadString('\n')
		io.WriteString(c, "250 "+l)
	})
	ps := srv.portStr()
	h := newHarness(t, flags{allow: []string{"smtp.test"}, hosts: []string{"smtp.test:127.0.0.1"}, ips: []string{"127.0.0.1/32:" + ps}},
		func(p *Proxy) { p.FirstByteWait = 30 * time.Millisecond })
	c, err := h.dial(netip.AddrPortFrom(h.mustLookup("smtp.test"), srv.port()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	if l, err := br.ReadString('\n'); err != nil || l != "220 banner\r\n" {
		t.Fatalf("banner %q %v", l, err)
	}
	io.WriteString(c, "EHLO me\r\n")
	if l, err := br.ReadString('\n'); err != nil || l != "250 EHLO me\r\n" {
		t.Fatalf("reply %q %v", l, err)
	}
}

// TestServeStops: cancelling the context closes the listener and every open
// flow, and Serve returns.
func TestServeStops(t *testing.T) {
	srv := newServer(t, echo)
	h := newHarness(t, flags{ips: []string{"127.0.0.1/32"}})
	c, err := h.dial(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), srv.port()))
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("x"))
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.ReadFull(c, make([]byte, 1))
	h.stop()
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("flow still open after Serve stopped")
	}
	if _, err := net.Dial("tcp", h.ln.Addr().String()); err == nil {
		t.Error("listener still accepting after Serve stopped")
	}
	h.done <- nil // let the Cleanup's stop() see a result again
}

// TestMaxFlows: a sandbox cannot make the supervisor hold more flows than
// MaxFlows (fd and memory exhaustion of the process outside the cgroup).
func TestMaxFlows(t *testing.T) {
	srv := newServer(t, echo)
	h := newHarness(t, flags{ips: []string{"127.0.0.1/32:" + srv.portStr()}}, func(p *Proxy) { p.MaxFlows = 3 })
	dst := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), srv.port())
	var open []*net.TCPConn
	for i := 0; i < 3; i++ {
		c, err := h.dial(dst)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		c.Write([]byte("x"))
		if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
			t.Fatalf("flow %d: %v", i, err)
		}
		open = append(open, c)
	}
	c, err := h.dial(dst)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("x"))
	expectRefused(t, c)
	h.waitEvent(func(e Event) bool {
		return e.Decision == "deny" && strings.Contains(e.Reason, "more than 3 open flows")
	})
	open[0].Close()
	// A slot frees up once a flow ends.
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := h.dial(dst)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(2 * time.Second))
		c.Write([]byte("y"))
		_, err = io.ReadFull(c, make([]byte, 1))
		c.Close()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no slot freed after a flow closed")
		}
	}
	for _, c := range open[1:] {
		c.Close()
	}
}
