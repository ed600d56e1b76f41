package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/proxy"
)

// fallbackHarness serves ServeFallback on loopback with the same harness
// policy/events.
func fallbackHarness(t *testing.T, f flags, tweak ...func(*Proxy)) (*harness, string) {
	h := newHarness(t, f, tweak...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.p.ServeFallback(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeFallback: %v", err)
		}
	})
	return h, ln.Addr().String()
}

func TestFallbackHTTPProxy(t *testing.T) {
	_, port := helloServer(t)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "tls %s", r.TLS.ServerName) }))
	defer tlsSrv.Close()
	tport := tlsSrv.Listener.Addr().(*net.TCPAddr).Port
	h, addr := fallbackHarness(t, flags{
		allow: []string{"allowed.test", "b.test"},
		hosts: []string{"allowed.test:127.0.0.1", "b.test:127.0.0.1"},
		ips:   []string{fmt.Sprintf("127.0.0.1/32:%d", port), fmt.Sprintf("127.0.0.1/32:%d", tport)},
	})
	pu, _ := url.Parse("http://" + addr)
	tr := &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 5 * time.Second}

	get := func(u string) (int, string, error) {
		resp, err := cl.Get(u)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	// Absolute-form http:// request.
	if code, body, err := get(fmt.Sprintf("http://allowed.test:%d/", port)); err != nil || code != 200 || body != fmt.Sprintf("hello allowed.test:%d", port) {
		t.Errorf("http:// via proxy: %d %q %v", code, body, err)
	}
	// CONNECT tunnel for https://.
	if code, body, err := get(fmt.Sprintf("https://allowed.test:%d/", tport)); err != nil || code != 200 || body != "tls allowed.test" {
		t.Errorf("https:// via CONNECT: %d %q %v", code, body, err)
	}
	// Refusals: a name not allowed (even though pinned), a raw IP, a disallowed port.
	for _, u := range []string{
		fmt.Sprintf("http://evil.test:%d/", port),
		fmt.Sprintf("http://127.0.0.2:%d/", port),
		"http://allowed.test:1/",
	} {
		if code, body, err := get(u); err == nil && code != http.StatusForbidden {
			t.Errorf("ATTACK WORKED: %s: %d %q", u, code, body)
		}
	}
	if _, _, err := get(fmt.Sprintf("https://evil.test:%d/", tport)); err == nil {
		t.Errorf("ATTACK WORKED: CONNECT to evil.test succeeded")
	}
	h.waitEvent(func(e Event) bool { return e.Mode == "http-proxy" && e.Decision == "deny" && e.Name == "evil.test" })
	h.waitEvent(func(e Event) bool {
		return e.Mode == "http-proxy" && e.Decision == "allow" && e.Name == "allowed.test" && e.BytesDown > 0
	})

	// Raw: a Host header that disagrees with the absolute URI is dropped
	// (RFC 9112 3.2.2: the URI wins); upstream only ever sees the allowed name.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET http://allowed.test:%d/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", port)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("Host mismatch through HTTP proxy: %v", err)
	}
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || string(b) != fmt.Sprintf("hello allowed.test:%d", port) {
		t.Errorf("ATTACK WORKED? upstream saw %d %q, want Host allowed.test", resp.StatusCode, b)
	}
	c.Close()

	// CONNECT to an allowed name, then a ClientHello for another one: refused.
	c, err = net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "CONNECT allowed.test:%d HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n", tport, tport)
	br := bufio.NewReader(c)
	resp, err = http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	c.Write(clientHello(t, "b.test"))
	if n, _ := br.Read(make([]byte, 100)); n > 0 {
		t.Errorf("ATTACK WORKED: ServerHello came back for a fronted SNI")
	}
	h.waitEvent(func(e Event) bool { return e.Decision == "deny" && strings.Contains(e.Reason, "domain fronting") })
}

func TestFallbackSOCKS5(t *testing.T) {
	srv := newServer(t, echo)
	h, addr := fallbackHarness(t, flags{
		allow: []string{"echo.test"},
		hosts: []string{"echo.test:127.0.0.1"},
		ips:   []string{"127.0.0.1/32:" + srv.portStr()},
	})
	d, err := proxy.SOCKS5("tcp", addr, nil, proxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Dial("tcp", "echo.test:"+srv.portStr())
	if err != nil {
		t.Fatalf("SOCKS5 CONNECT to an allowed name: %v", err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "ping\n")
	b := make([]byte, 5)
	if _, err := io.ReadFull(c, b); err != nil || string(b) != "ping\n" {
		t.Errorf("echo via SOCKS5: %q %v", b, err)
	}
	c.Close()
	for _, target := range []string{"evil.test:" + srv.portStr(), "echo.test:1", "127.0.0.2:" + srv.portStr(), "198.18.9.9:80"} {
		if c, err := d.Dial("tcp", target); err == nil {
			c.Close()
			t.Errorf("ATTACK WORKED: SOCKS5 CONNECT %s succeeded", target)
		}
	}
	h.waitEvent(func(e Event) bool { return e.Mode == "socks5" && e.Decision == "deny" && e.Name == "evil.test" })
	h.waitEvent(func(e Event) bool {
		return e.Mode == "socks5" && e.Decision == "allow" && e.BytesUp == 5 && e.BytesDown == 5
	})

	// BIND and UDP ASSOCIATE are refused (command not supported).
	for _, cmd := range []byte{2, 3} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		c.Write([]byte{5, 1, 0})
		c.Write([]byte{5, cmd, 0, 1, 127, 0, 0, 1, 0, 80})
		b := make([]byte, 12)
		n, _ := io.ReadAtLeast(c, b, 4) // method reply (2 bytes), then the request reply
		if n < 4 || b[3] != socksCmdNotSupp {
			t.Errorf("SOCKS5 cmd %d: reply %x", cmd, b[:n])
		}
		c.Close()
	}
}

func TestPublish(t *testing.T) {
	inside := newServer(t, echo) // stands in for a server inside the sandbox
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- ServePublish(ctx, ln, func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", inside.ln.Addr().String())
		}, PublishOptions{})
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	msg := bytes.Repeat([]byte("p"), 1<<20)
	go func() { c.Write(msg); c.(*net.TCPConn).CloseWrite() }()
	b, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(b, msg) {
		t.Errorf("published echo: %d bytes, %v", len(b), err)
	}
	c.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ServePublish: %v", err)
	}
	// Publish reports a busy port at once, with what to do.
	busy := ln2(t)
	err = Publish(context.Background(), busy.Addr().String(), nil)
	if err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("Publish on a busy port: %v", err)
	}
	// A dial failure resets the host-side client.
	ln3 := ln2(t)
	ctx3, cancel3 := context.WithCancel(context.Background())
	defer cancel3()
	go ServePublish(ctx3, ln3, func(context.Context) (net.Conn, error) { return nil, errors.New("nothing listens") }, PublishOptions{})
	c, err = net.Dial("tcp", ln3.Addr().String())
	if err == nil { // the reset may already have arrived when connect returns
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("read after failed inside dial: %v", err)
		}
		c.Close()
	}
}

// Adversarial: any local user can connect to a published port (it listens
// on the host), and each forwarded connection holds sockets, pipes and
// goroutines in the supervisor. Past MaxConns open at once a new one is
// reset at once, OnFull says so, and a slot freed by a closed connection
// is used again. Seen failing on main's code (no bound): all 12 were
// forwarded and held.
func TestPublishBound(t *testing.T) {
	const max, extra = 8, 4
	inside := newServer(t, func(c net.Conn) { io.Copy(io.Discard, c) }) // holds every connection open
	ln := ln2(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var dials, fulls atomic.Int32
	go ServePublish(ctx, ln, func(ctx context.Context) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, "tcp", inside.ln.Addr().String())
	}, PublishOptions{MaxConns: max, OnFull: func(n int) {
		if n != max {
			t.Errorf("OnFull(%d), want %d", n, max)
		}
		fulls.Add(1)
	}})
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	// dial connects; nil: the reset came before connect returned.
	dial := func() net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			if !errors.Is(err, syscall.ECONNRESET) {
				t.Fatal(err)
			}
			return nil
		}
		held = append(held, c)
		return c
	}
	// reset tells whether jail closed c (it reads EOF or a reset within wait).
	reset := func(c net.Conn, wait time.Duration) bool {
		if c == nil {
			return true
		}
		c.SetReadDeadline(time.Now().Add(wait))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		return !(errors.As(err, &ne) && ne.Timeout())
	}
	for range max {
		if dial() == nil {
			t.Fatal("a connection within the bound was reset")
		}
	}
	for deadline := time.Now().Add(5 * time.Second); dials.Load() < max && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	closed := 0
	for range extra {
		if reset(dial(), 3*time.Second) {
			closed++
		}
	}
	if closed != extra || int(dials.Load()) != max {
		t.Errorf("ATTACK WORKED: %d connections past the bound of %d: %d reset, %d forwarded in all", extra, max, closed, dials.Load())
	}
	if fulls.Load() != extra {
		t.Errorf("OnFull called %d times, want %d", fulls.Load(), extra)
	}
	for i := range max {
		if reset(held[i], 100*time.Millisecond) {
			t.Errorf("connection %d within the bound was closed", i)
		}
	}
	// One ends: its slot serves the next.
	held[0].Close()
	for deadline := time.Now().Add(5 * time.Second); ; {
		if !reset(dial(), 300*time.Millisecond) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a slot freed by a closed connection is not used again")
		}
	}
}

func ln2(t *testing.T) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// FuzzSOCKS5Request: the parser never panics, and what it accepts has a
// non-empty host and is CONNECT/BIND/UDP as sent.
func FuzzSOCKS5Request(f *testing.F) {
	f.Add([]byte{5, 1, 0, 3, 9, 'e', 'x', 'a', 'm', 'p', 'l', 'e', '.', 't', 1, 187})
	f.Add([]byte{5, 1, 0, 1, 127, 0, 0, 1, 0, 80})
	f.Add([]byte{5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 80})
	f.Add([]byte{5, 1, 0, 3, 0, 0, 80})
	f.Fuzz(func(t *testing.T, b []byte) {
		if ok, err := readSOCKS5Greeting(bytes.NewReader(b)); err == nil && ok && (len(b) < 3 || b[0] != 5) {
			t.Fatalf("greeting %x accepted", b)
		}
		req, _, err := readSOCKS5Request(bytes.NewReader(b))
		if err != nil {
			return
		}
		if req.host == "" || req.cmd != b[1] || b[0] != 5 {
			t.Fatalf("accepted %x as %+v", b, req)
		}
	})
}

// FuzzConnectTarget: accepted targets always have a host and a port 1-65535.
func FuzzConnectTarget(f *testing.F) {
	for _, s := range []string{"example.com:443", "[::1]:80", "a:0", ":80", "host", "[::1]", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, p, err := parseConnectTarget(s)
		if err == nil && (h == "" || p == 0) {
			t.Fatalf("%q -> %q %d", s, h, p)
		}
	})
}

// TestFallbackHTTPProxyIPv6: an http:// URL with an IPv6 literal, its
// address allowed, goes through the proxy (HTTP_PROXY) to the server; one
// not allowed is refused naming --allow-ip in brackets. Seen failing: the
// absolute URI's host "[::1]:PORT" was compared, brackets and all, with
// "::1" and refused as domain fronting, whatever --allow-ip said.
func TestFallbackHTTPProxyIPv6(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Fatalf("IPv6 loopback: %v", err) // never a skip: this machine has ::1
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "hello %s", r.Host) })}}
	srv.Start()
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	h, addr := fallbackHarness(t, flags{ips: []string{fmt.Sprintf("[::1/128]:%d", port)}})
	pu, _ := url.Parse("http://" + addr)
	tr := &http.Transport{Proxy: http.ProxyURL(pu)}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	get := func(u string) (int, string) {
		resp, err := cl.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	want := fmt.Sprintf("hello [::1]:%d", port)
	if code, body := get(fmt.Sprintf("http://[::1]:%d/", port)); code != 200 || body != want {
		t.Errorf("allowed IPv6 literal through the proxy: %d %q, want 200 %q", code, body, want)
	}
	// Another port of the same address: not allowed, and said as a raw
	// address with the rule that would allow it.
	other := port%65535 + 1
	code, body := get(fmt.Sprintf("http://[::1]:%d/", other))
	if code != http.StatusForbidden || strings.Contains(body, "fronting") || !strings.Contains(body, fmt.Sprintf("--allow-ip [::1/128]:%d", other)) {
		t.Errorf("IPv6 literal on a port not allowed: %d %q, want 403 naming --allow-ip [::1/128]:%d", code, body, other)
	}
	h.waitEvent(func(e Event) bool { return e.Mode == "http-proxy" && e.Decision == "allow" && e.Port == uint16(port) })
}
