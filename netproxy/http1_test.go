package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/proxy"
)

// hostRecorder is an HTTP/1 origin on loopback that records the Host of
// every request that reaches it, in order, and answers each with
// "hello HOST". GET /upgrade answers 101 and then echoes bytes (a
// WebSocket-like upgraded stream).
type hostRecorder struct {
	*countingServer
	mu    sync.Mutex
	hosts []string
	posts []int64 // body sizes of POSTs, in order
}

func newHostRecorder(t testing.TB) *hostRecorder {
	r := &hostRecorder{}
	r.countingServer = newServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			// Servers skip empty lines before a request line (RFC 9112 2.2).
			for {
				b, err := br.Peek(1)
				if err != nil || (b[0] != '\r' && b[0] != '\n') {
					break
				}
				br.ReadByte()
			}
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			r.mu.Lock()
			r.hosts = append(r.hosts, req.Host)
			r.mu.Unlock()
			if req.URL.Path == "/upgrade" {
				io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
				io.Copy(c, br)
				return
			}
			if req.Header.Get("Expect") == "100-continue" {
				io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n")
			}
			n, _ := io.Copy(io.Discard, req.Body)
			if req.Method == http.MethodPost {
				r.mu.Lock()
				r.posts = append(r.posts, n)
				r.mu.Unlock()
			}
			body := "hello " + req.Host
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		}
	})
	return r
}

func (r *hostRecorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.hosts)
}

// frontingHarness: allowed.test is allowed and pinned to the recorder on
// loopback (with the --allow-ip the guard wants for loopback).
func frontingHarness(t *testing.T) (*harness, *hostRecorder, netip.AddrPort) {
	srv := newHostRecorder(t)
	h := newHarness(t, flags{
		allow: []string{"allowed.test:" + srv.portStr(), "other.test:" + srv.portStr()},
		hosts: []string{"allowed.test:127.0.0.1", "other.test:127.0.0.1"},
		ips:   []string{"127.0.0.1/32:" + srv.portStr()},
	}, func(p *Proxy) { p.FirstByteWait = 50 * time.Millisecond; p.SniffTimeout = time.Second })
	return h, srv, netip.AddrPortFrom(h.mustLookup("allowed.test"), srv.port())
}

// waitEventT is harness.waitEvent for a subtest.
func waitEventT(t *testing.T, h *harness, match func(Event) bool) Event {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		h.mu.Lock()
		for _, ev := range h.events {
			if match(ev) {
				h.mu.Unlock()
				return ev
			}
		}
		h.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	t.Fatalf("no matching event; have %+v", h.events)
	return Event{}
}

func get(host string) string {
	return "GET / HTTP/1.1\r\nHost: " + host + "\r\n\r\n"
}

// readResponses reads n responses from br and returns their bodies.
func readResponses(br *bufio.Reader, n int) ([]string, error) {
	var out []string
	for i := 0; i < n; i++ {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return out, err
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return out, err
		}
		out = append(out, string(b))
	}
	return out, nil
}

// TestFrontingLaterRequests is the adversarial table for class 7 of issue
// 10: on a plaintext flow to an allowed name, every request head after the
// first must carry that name too. Each row sends an allowed first request
// and then tries to reach another virtual host behind the same address.
// The recorder proves what reached the origin; the trail must show the
// refused Host.
func TestFrontingLaterRequests(t *testing.T) {
	h, srv, dst := frontingHarness(t)
	evil := "evil.example"
	chunked := "POST /c HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"5\r\nhello\r\n" + "1a;ext=1\r\n" + get(evil)[:0x1a] + "\r\n0\r\nTrailer: x\r\n\r\n"
	tests := []struct {
		name  string
		first string   // sent, answered before the attack (keep-alive)
		parts []string // then sent, each in its own write (pipelining when first == "")
		want  []string // Hosts the origin may see
		deny  string   // reason substring of the deny event
	}{
		{"keep-alive second request", get("allowed.test"), []string{get(evil)}, []string{"allowed.test"}, `"evil.example"`},
		{"pipelined in one write", "", []string{get("allowed.test") + get(evil)}, []string{"allowed.test"}, `"evil.example"`},
		{"pipelined, third request", "", []string{get("allowed.test") + get("allowed.test") + get(evil)}, []string{"allowed.test", "allowed.test"}, `"evil.example"`},
		{"second head split across writes", get("allowed.test"), []string{"GET / HT", "TP/1.1\r\nHo", "st: evil.exa", "mple\r\n", "\r\n"}, []string{"allowed.test"}, `"evil.example"`},
		{"second request of another allowed name", get("allowed.test"), []string{get("other.test")}, []string{"allowed.test"}, `"other.test"`},
		{"absolute-form second request", get("allowed.test"), []string{"GET http://evil.example/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n"}, []string{"allowed.test"}, `"evil.example"`},
		{"after a Content-Length body", "", []string{"POST /p HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 11\r\n\r\nhello world" + get(evil)}, []string{"allowed.test"}, `"evil.example"`},
		{"after a chunked body (smuggled request inside a chunk is body)", "", []string{chunked + get(evil)}, []string{"allowed.test"}, `"evil.example"`},
		{"after empty lines", get("allowed.test"), []string{"\r\n\r\n" + get(evil)}, []string{"allowed.test"}, `"evil.example"`},
		{"CONNECT to another host as the second request", get("allowed.test"), []string{"CONNECT evil.example:443 HTTP/1.1\r\nHost: allowed.test\r\n\r\n"}, []string{"allowed.test"}, `"evil.example"`},
		{"h2c upgrade", "", []string{"GET / HTTP/1.1\r\nHost: allowed.test\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n"}, nil, "h2c"},
		{"h2c upgrade after a first request", get("allowed.test"), []string{"GET / HTTP/1.1\r\nHost: allowed.test\r\nConnection: Upgrade\r\nUpgrade: websocket, H2C\r\n\r\n"}, []string{"allowed.test"}, "h2c"},
		{"HTTP/2 prior knowledge", "", []string{"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"}, nil, "HTTP/2"},
		{"Content-Length and Transfer-Encoding (smuggling)", "", []string{"POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + get(evil)}, nil, "Transfer-Encoding"},
		{"two Content-Lengths", "", []string{"POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 0\r\nContent-Length: 40\r\n\r\n" + get(evil)}, nil, "Content-Length"},
		{"space before the colon", "", []string{"POST / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n" + get(evil)}, nil, "header name"},
		{"bare CR in a header", "", []string{"GET / HTTP/1.1\r\nHost: allowed.test\r\nX: a\rHost: evil.example\r\n\r\n"}, nil, "bare CR"},
		{"chunk size with a bare LF", "", []string{"POST / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n" + get(evil)}, []string{"allowed.test"}, "chunk"},
		{"junk after a request", get("allowed.test"), []string{"\x00\x01" + get(evil)}, []string{"allowed.test"}, "not an HTTP/1 request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(srv.seen())
			c, err := h.dial(dst)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(c)
			if tt.first != "" {
				io.WriteString(c, tt.first)
				if bodies, err := readResponses(br, 1); err != nil || bodies[0] != "hello allowed.test" {
					t.Fatalf("the allowed first request failed: %q %v", bodies, err)
				}
			}
			for _, p := range tt.parts {
				io.WriteString(c, p)
				time.Sleep(20 * time.Millisecond)
			}
			// Whatever answers the allowed requests may come back; the
			// flow must then end without an answer for the refused one.
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			io.Copy(io.Discard, br)
			got := srv.seen()[before:]
			for _, host := range got {
				if !slices.Contains(tt.want, host) {
					t.Errorf("ATTACK WORKED: the origin saw a request for Host %q (all: %q)", host, got)
				}
			}
			if len(got) > len(tt.want) {
				t.Errorf("the origin saw %d requests %q, want at most %q", len(got), got, tt.want)
			}
			ev := waitEventT(t, h, func(e Event) bool {
				return e.Decision == "deny" && e.Name == "allowed.test" && strings.Contains(e.Reason, tt.deny) && e.Client == c.LocalAddr().String()
			})
			if ev.Port != srv.port() {
				t.Errorf("deny event %+v", ev)
			}
		})
	}
	// The event says which Host was refused, for the user's notice.
	waitEventT(t, h, func(e Event) bool {
		return e.Decision == "deny" && e.Target() == "allowed.test:"+srv.portStr() &&
			strings.Contains(e.Reason, `HTTP Host "evil.example" does not match allowed.test`) && e.Public == e.Reason
	})
}

// TestHTTPKeepAliveAllowed: what clients really do on a plaintext flow to
// an allowed name keeps working: keep-alive, pipelining, bodies of every
// framing, 100-continue, and an upgraded (WebSocket-like) stream.
func TestHTTPKeepAliveAllowed(t *testing.T) {
	h, srv, dst := frontingHarness(t)
	var dials int
	var mu sync.Mutex
	tr := &http.Transport{
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			mu.Lock()
			dials++
			mu.Unlock()
			return h.dial(dst)
		},
		ExpectContinueTimeout: 5 * time.Second,
		MaxConnsPerHost:       1,
	}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	u := "http://allowed.test:" + srv.portStr()
	for i := 0; i < 3; i++ {
		resp, err := cl.Get(u + "/" + strconv.Itoa(i))
		if err != nil {
			t.Fatalf("GET %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.HasPrefix(string(b), "hello allowed.test") {
			t.Fatalf("GET %d: %q", i, b)
		}
	}
	// Content-Length body, chunked body (unknown length), 100-continue.
	big := bytes.Repeat([]byte("x"), 3<<20)
	for _, req := range []func() *http.Request{
		func() *http.Request { r, _ := http.NewRequest("POST", u+"/cl", bytes.NewReader(big)); return r },
		func() *http.Request {
			r, _ := http.NewRequest("POST", u+"/chunked", io.MultiReader(bytes.NewReader(big)))
			r.ContentLength = -1
			return r
		},
		func() *http.Request {
			r, _ := http.NewRequest("POST", u+"/expect", bytes.NewReader(big))
			r.Header.Set("Expect", "100-continue")
			return r
		},
	} {
		r := req()
		resp, err := cl.Do(r)
		if err != nil {
			t.Fatalf("%s: %v", r.URL.Path, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if n := dials; n != 1 {
		t.Errorf("%d connections for 6 requests: keep-alive did not survive the proxy", n)
	}
	srv.mu.Lock()
	posts := slices.Clone(srv.posts)
	srv.mu.Unlock()
	if !slices.Equal(posts, []int64{3 << 20, 3 << 20, 3 << 20}) {
		t.Errorf("POST bodies at the origin: %v", posts)
	}

	// Pipelining: three requests in one write, three answers.
	c, err := h.dial(dst)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "\r\n"+get("allowed.test")+get("allowed.test:"+srv.portStr())+"GET / HTTP/1.0\r\n\r\n")
	bodies, err := readResponses(bufio.NewReader(c), 3)
	if err != nil || len(bodies) != 3 {
		t.Fatalf("pipelined: %q %v", bodies, err)
	}
	c.Close()

	// An upgraded stream carries the new protocol's bytes, unparsed.
	c, err = h.dial(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET /upgrade HTTP/1.1\r\nHost: allowed.test\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	frame := []byte{0x82, 0x85, 1, 2, 3, 4, 'h' ^ 1, 'e' ^ 2, 'l' ^ 3, 'l' ^ 4, 'o' ^ 1}
	c.Write(frame)
	back := make([]byte, len(frame))
	if _, err := io.ReadFull(br, back); err != nil || !bytes.Equal(back, frame) {
		t.Fatalf("upgraded stream: %q %v", back, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.events {
		if e.Decision == "deny" {
			t.Errorf("unexpected deny %+v", e)
		}
	}
}

// TestFallbackConnectPlaintext: the proxy-aware fallback applies the same
// rule to plaintext HTTP inside a CONNECT tunnel.
func TestFallbackConnectPlaintext(t *testing.T) {
	srv := newHostRecorder(t)
	h, addr := fallbackHarness(t, flags{
		allow: []string{"allowed.test"},
		hosts: []string{"allowed.test:127.0.0.1"},
		ips:   []string{"127.0.0.1/32:" + srv.portStr()},
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "CONNECT allowed.test:%d HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n", srv.port(), srv.port())
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	io.WriteString(c, get("allowed.test"))
	if b, err := readResponses(br, 1); err != nil || b[0] != "hello allowed.test" {
		t.Fatalf("first request in the tunnel: %q %v", b, err)
	}
	io.WriteString(c, get("evil.example"))
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	io.Copy(io.Discard, br)
	if got := srv.seen(); !slices.Equal(got, []string{"allowed.test"}) {
		t.Errorf("ATTACK WORKED: the origin saw %q through a CONNECT to allowed.test", got)
	}
	h.waitEvent(func(e Event) bool {
		return e.Decision == "deny" && e.Mode == "http-proxy" && strings.Contains(e.Reason, `"evil.example"`)
	})

	// SOCKS5 takes the same path.
	d, err := proxy.SOCKS5("tcp", addr, nil, proxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.Dial("tcp", "allowed.test:"+srv.portStr())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(s, get("allowed.test")+get("evil.example"))
	s.SetReadDeadline(time.Now().Add(2 * time.Second))
	io.Copy(io.Discard, s)
	// The refusal resets the flow: the allowed first request may or may
	// not have been read by the origin; the refused one never was.
	if got := srv.seen(); slices.Contains(got, "evil.example") {
		t.Errorf("ATTACK WORKED: the origin saw %q through SOCKS5 to allowed.test", got)
	}
	h.waitEvent(func(e Event) bool {
		return e.Decision == "deny" && e.Mode == "socks5" && strings.Contains(e.Reason, `"evil.example"`)
	})
}

// fakeConn is a net.Conn over in-memory data for the fuzz target: reads
// come in the sizes given by cuts; writes are collected.
type fakeConn struct {
	net.Conn
	in   []byte
	cuts []int
	out  bytes.Buffer
}

func (c *fakeConn) Read(b []byte) (int, error) {
	if len(c.in) == 0 {
		return 0, io.EOF
	}
	n := len(c.in)
	if len(c.cuts) > 0 {
		n = max(1, min(n, c.cuts[0]))
		c.cuts = c.cuts[1:]
	}
	n = copy(b, c.in[:n])
	c.in = c.in[n:]
	return n, nil
}
func (c *fakeConn) Write(b []byte) (int, error)        { return c.out.Write(b) }
func (c *fakeConn) SetReadDeadline(time.Time) error    { return nil }
func (c *fakeConn) CloseWrite() error                  { return nil }
func (c *fakeConn) Close() error                       { return nil }
func (c *fakeConn) LocalAddr() net.Addr                { return &net.TCPAddr{} }
func (c *fakeConn) RemoteAddr() net.Addr               { return &net.TCPAddr{} }
func (c *fakeConn) SetDeadline(time.Time) error        { return nil }
func (c *fakeConn) SetWriteDeadline(t time.Time) error { return nil }

func runReqRelay(in []byte, cuts []int) (out []byte, deny string, requests int) {
	p := &Proxy{}
	f := &flow{name: "allowed.test", dst: netip.MustParseAddrPort("198.18.0.1:80")}
	src, dst := &fakeConn{in: in, cuts: cuts}, &fakeConn{}
	r := &reqRelay{p: p, f: f, src: src, dst: dst}
	deny, _ = r.run()
	return dst.out.Bytes(), deny, r.requests
}

// FuzzRequestStream: how the client splits its bytes never changes what
// goes upstream or the verdict, and whatever goes upstream, read by Go's
// own HTTP/1 server parser, never carries a Host other than the flow's.
func FuzzRequestStream(f *testing.F) {
	f.Add([]byte(get("allowed.test")+get("evil.example")), 7)
	f.Add([]byte("POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 5\r\n\r\nhello"+get("allowed.test")), 3)
	f.Add([]byte("POST / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\nX: y\r\n\r\n"+get("evil.example")), 11)
	f.Add([]byte("GET /u HTTP/1.1\r\nHost: allowed.test\r\nUpgrade: websocket\r\n\r\n\x82\x80abcd"), 5)
	f.Add([]byte("\r\n\r\nGET http://allowed.test/ HTTP/1.0\r\n\r\n"), 1)
	f.Fuzz(func(t *testing.T, in []byte, cut int) {
		if len(in) > 1<<16 {
			return
		}
		whole, deny, n := runReqRelay(in, nil)
		cuts := make([]int, len(in))
		for i := range cuts {
			cuts[i] = 1 + (cut+i*7)%max(1, cut%31+1)
		}
		split, deny2, n2 := runReqRelay(in, cuts)
		if !bytes.Equal(whole, split) || (deny == "") != (deny2 == "") || n != n2 {
			t.Fatalf("split reads changed the relay:\nwhole %q deny %q n %d\nsplit %q deny %q n %d", whole, deny, n, split, deny2, n2)
		}
		br := bufio.NewReader(bytes.NewReader(whole))
		for {
			for {
				b, err := br.Peek(1)
				if err != nil || (b[0] != '\r' && b[0] != '\n') {
					break
				}
				br.ReadByte()
			}
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			if h := strings.ToLower(req.Host); h != "" && stripPort(h) != "allowed.test" && h != "198.18.0.1" {
				t.Fatalf("Host %q went upstream:\n%q", req.Host, whole)
			}
			if req.Method == "CONNECT" || req.Header.Get("Upgrade") != "" {
				return // another protocol may follow: not HTTP/1 any more
			}
			if _, err := io.Copy(io.Discard, req.Body); err != nil {
				return
			}
		}
	})
}
