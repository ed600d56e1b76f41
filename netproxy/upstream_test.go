package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// upstreamProxy for tests: a small HTTP CONNECT proxy on loopback standing
// in for a corporate one. It records every request it is asked (target and
// Proxy-Authorization), answers 407 when wantAuth is set and the header
// differs, and otherwise connects every target to origin, whatever name it
// carries (the upstream resolves names, not jail). banner, when set, is
// written right after the 200, in the same write.
type testUpstream struct {
	ln       net.Listener
	origin   string
	wantAuth string
	banner   string

	mu   sync.Mutex
	reqs []upReq
}

type upReq struct{ method, target, auth string }

func newTestUpstream(t *testing.T, origin string) *testUpstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &testUpstream{ln: ln, origin: origin}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go u.serve(c)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return u
}

func (u *testUpstream) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	u.mu.Lock()
	u.reqs = append(u.reqs, upReq{req.Method, req.Host, req.Header.Get("Proxy-Authorization")})
	wantAuth := u.wantAuth
	u.mu.Unlock()
	if req.Method != http.MethodConnect {
		io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
		return
	}
	if wantAuth != "" && req.Header.Get("Proxy-Authorization") != wantAuth {
		io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"corp\"\r\nContent-Length: 0\r\n\r\n")
		return
	}
	up, err := net.Dial("tcp", u.origin)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	defer up.Close()
	io.WriteString(c, "HTTP/1.1 200 Connection established\r\nVia: 1.1 corp\r\n\r\n"+u.banner)
	go func() { io.Copy(up, br); up.(*net.TCPConn).CloseWrite() }()
	io.Copy(c, up)
}

func (u *testUpstream) addr() string { return u.ln.Addr().String() }

func (u *testUpstream) requests() []upReq {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]upReq(nil), u.reqs...)
}

func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func mustUpstream(t *testing.T, env map[string]string) *Upstream {
	t.Helper()
	up, problems := UpstreamFromEnv(envMap(env))
	if up == nil || len(problems) > 0 {
		t.Fatalf("UpstreamFromEnv(%v) = %v, %v", env, up, problems)
	}
	return up
}

// noDirect makes every direct dial and every host lookup a test failure:
// flows chained through the upstream proxy must do neither.
type noLookup struct{ t *testing.T }

func (n noLookup) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	n.t.Errorf("the host resolved %q: a name chained through the upstream proxy must be resolved by it", host)
	return nil, errors.New("test: no lookups")
}

const upSecret = "s3cr:et/pw@x" // ':' '/' '@' must survive percent-decoding

func upEnvURL(addr string) string {
	return "http://corp%5Cada:" + url.QueryEscape(upSecret) + "@" + addr
}

func upAuth() string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(`corp\ada:`+upSecret))
}

// assertNoSecret: the password, the encoded header and the whole URL never
// appear in what jail prints or records: the events, which are all the proxy
// says (the supervisor's notices and records are made of them).
func assertNoSecret(t *testing.T, h *harness) {
	t.Helper()
	evs := h.eventText()
	for _, s := range []string{upSecret, url.QueryEscape(upSecret), strings.TrimPrefix(upAuth(), "Basic "), "corp%5Cada"} {
		if strings.Contains(evs, s) {
			t.Errorf("credential %q leaked into the events:\n%s", s, evs)
		}
	}
}

// eventText is every event so far, for failure messages.
func (h *harness) eventText() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	evs, _ := json.Marshal(h.events)
	return string(evs)
}

func tlsGet(t *testing.T, c net.Conn, name string) (string, error) {
	t.Helper()
	tc := tls.Client(c, &tls.Config{ServerName: name, InsecureSkipVerify: true})
	tc.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(tc, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", name)
	b, err := io.ReadAll(tc)
	return string(b), err
}

// An allowed name goes through the upstream proxy as that name, with the
// credentials from the URL, without any lookup or direct dial on the host;
// the event names the proxy and no credential is printed or recorded.
func TestUpstreamChainsAllowedName(t *testing.T) {
	origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "origin %s", r.TLS.ServerName)
	}))
	defer origin.Close()
	up := newTestUpstream(t, origin.Listener.Addr().String())
	up.wantAuth = upAuth()
	h := newHarness(t, flags{allow: []string{"api.corp.test"}}, func(p *Proxy) {
		p.Upstream = mustUpstream(t, map[string]string{"HTTPS_PROXY": upEnvURL(up.addr())})
		p.Resolver = noLookup{t}
		p.Dial = func(_ context.Context, a netip.AddrPort) (net.Conn, error) {
			t.Errorf("direct dial of %v: the flow must go through the upstream proxy", a)
			return nil, errors.New("test: no direct dials")
		}
	})
	c, err := h.dial(netip.AddrPortFrom(h.mustLookup("api.corp.test"), 443))
	if err != nil {
		t.Fatal(err)
	}
	body, err := tlsGet(t, c, "api.corp.test")
	c.Close()
	if err != nil || !strings.HasSuffix(body, "origin api.corp.test") {
		t.Fatalf("TLS through the upstream proxy: %q, %v\nevents: %s", body, err, h.eventText())
	}
	reqs := up.requests()
	if len(reqs) != 1 || reqs[0].method != "CONNECT" || reqs[0].target != "api.corp.test:443" || reqs[0].auth != upAuth() {
		t.Errorf("upstream was asked %+v; want one CONNECT api.corp.test:443 with the URL's credentials", reqs)
	}
	ev := h.waitEvent(func(e Event) bool { return e.Type == "net" && e.Name == "api.corp.test" })
	if ev.Decision != "allow" || ev.Via != "http://"+up.addr() || ev.Addr != "" || ev.BytesDown == 0 {
		t.Errorf("event = %+v; want allow via http://%s, no host-side address", ev, up.addr())
	}
	assertNoSecret(t, h)
}

// The allowlist decides first: nothing the policy or the first-bytes check
// refuses ever reaches the upstream proxy, not even as a CONNECT line.
func TestUpstreamNeverAskedForRefused(t *testing.T) {
	origin := newServer(t, func(c net.Conn) { c.Write([]byte("SECRET")) })
	up := newTestUpstream(t, origin.ln.Addr().String())
	h := newHarness(t, flags{
		allow: []string{"*.corp.test:443"},
		deny:  []string{"bad.corp.test"},
	}, func(p *Proxy) {
		p.FirstByteWait = 50 * time.Millisecond
		p.Upstream = mustUpstream(t, map[string]string{"HTTPS_PROXY": upEnvURL(up.addr()), "HTTP_PROXY": upEnvURL(up.addr()), "ALL_PROXY": upEnvURL(up.addr())})
		p.Resolver = noLookup{t}
	})
	ok := h.mustLookup("ok.corp.test")
	if h.lookup("bad.corp.test").IsValid() || h.lookup("evil.test").IsValid() {
		t.Fatal("DNS answered a refused name")
	}
	attacks := []struct {
		name  string
		dst   netip.AddrPort
		first string
	}{
		{"raw address", netip.MustParseAddrPort("93.184.216.34:443"), ""},
		{"fake address never handed out", netip.MustParseAddrPort("198.18.200.1:443"), ""},
		{"SNI of another name (fronting)", netip.AddrPortFrom(ok, 443), "tls:evil.test"},
		{"Host of another name", netip.AddrPortFrom(ok, 443), "GET / HTTP/1.1\r\nHost: bad.corp.test\r\n\r\n"},
		{"port not allowed", netip.AddrPortFrom(h.mustLookup("x.corp.test"), 22), ""},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			c, err := h.dial(a.dst)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			switch {
			case strings.HasPrefix(a.first, "tls:"):
				go tls.Client(c, &tls.Config{ServerName: strings.TrimPrefix(a.first, "tls:"), InsecureSkipVerify: true}).Handshake()
			case a.first != "":
				c.Write([]byte(a.first))
			}
			expectRefused(t, c)
		})
	}
	if reqs := up.requests(); len(reqs) != 0 {
		t.Errorf("ATTACK REACHED THE UPSTREAM PROXY: it was asked %+v", reqs)
	}
	if origin.count() != 0 {
		t.Errorf("the origin saw %d connections", origin.count())
	}
	// The control: the same setup carries an allowed flow through it.
	c, err := h.dial(netip.AddrPortFrom(ok, 443))
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(c)
	if string(b) != "SECRET" || len(up.requests()) != 1 {
		t.Errorf("control: allowed flow got %q, upstream asked %+v", b, up.requests())
	}
}

// NO_PROXY destinations are dialled directly, and the address guard applies
// to them as to any direct dial; a pinned address and a raw address go
// through the upstream proxy as the checked address unless NO_PROXY lists
// the name or the address.
func TestUpstreamNoProxyAndAddresses(t *testing.T) {
	origin := newServer(t, func(c net.Conn) { c.Write([]byte("ORIGIN")) })
	up := newTestUpstream(t, origin.ln.Addr().String())
	var mu sync.Mutex
	var direct []netip.AddrPort
	h := newHarness(t, flags{
		allow: []string{"*.corp.test", "*.intra.test"},
		hosts: []string{"pin.corp.test:10.4.4.4", "pin.intra.test:10.5.5.5"},
		ips:   []string{"203.0.113.7/32:443", "10.6.6.6/32:443"},
	}, func(p *Proxy) {
		p.FirstByteWait = 20 * time.Millisecond
		p.Upstream = mustUpstream(t, map[string]string{
			"https_proxy": "http://" + up.addr(),
			"no_proxy":    " .intra.test, 10.6.0.0/16 ,direct.corp.test:443",
		})
		p.Resolver = mapResolver{
			"direct.corp.test": {netip.MustParseAddr("192.0.2.80")},
			"priv.intra.test":  {netip.MustParseAddr("10.7.7.7")},
		}
		p.HostAddrs = func() []netip.Addr { return nil }
		p.Dial = func(_ context.Context, a netip.AddrPort) (net.Conn, error) {
			mu.Lock()
			direct = append(direct, a)
			mu.Unlock()
			return net.Dial("tcp", origin.ln.Addr().String())
		}
	})
	cases := []struct {
		dst        netip.AddrPort
		wantUp     string // CONNECT target, "" = not asked
		wantDirect string // direct dial, "" = none
		refused    bool
	}{
		{netip.AddrPortFrom(h.mustLookup("name.corp.test"), 443), "name.corp.test:443", "", false},
		{netip.AddrPortFrom(h.mustLookup("direct.corp.test"), 443), "", "192.0.2.80:443", false},
		{netip.AddrPortFrom(h.mustLookup("pin.corp.test"), 443), "10.4.4.4:443", "", false},
		{netip.AddrPortFrom(h.mustLookup("pin.intra.test"), 443), "", "10.5.5.5:443", false},
		{netip.MustParseAddrPort("203.0.113.7:443"), "203.0.113.7:443", "", false},
		{netip.MustParseAddrPort("10.6.6.6:443"), "", "10.6.6.6:443", false},
		// NO_PROXY: direct, and the guard refuses a private address
		// nothing allowed.
		{netip.AddrPortFrom(h.mustLookup("priv.intra.test"), 443), "", "", true},
	}
	for _, tc := range cases {
		before, beforeDirect := len(up.requests()), len(direct)
		c, err := h.dial(tc.dst)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		b, _ := io.ReadAll(c)
		c.Close()
		reqs := up.requests()[before:]
		mu.Lock()
		dd := direct[beforeDirect:]
		mu.Unlock()
		if tc.refused {
			if len(b) > 0 || len(reqs) > 0 || len(dd) > 0 {
				t.Errorf("%v: want refused before any dial; got %q, upstream %+v, direct %v", tc.dst, b, reqs, dd)
			}
			continue
		}
		if string(b) != "ORIGIN" {
			t.Errorf("%v: got %q\nevents: %s", tc.dst, b, h.eventText())
		}
		if tc.wantUp != "" && (len(reqs) != 1 || reqs[0].target != tc.wantUp || len(dd) != 0) {
			t.Errorf("%v: want CONNECT %s and no direct dial; upstream %+v, direct %v", tc.dst, tc.wantUp, reqs, dd)
		}
		if tc.wantDirect != "" && (len(reqs) != 0 || len(dd) != 1 || dd[0].String() != tc.wantDirect) {
			t.Errorf("%v: want a direct dial of %s and nothing upstream; upstream %+v, direct %v", tc.dst, tc.wantDirect, reqs, dd)
		}
	}
	ev := h.waitEvent(func(e Event) bool { return e.Type == "net" && e.Name == "priv.intra.test" })
	if ev.Decision != "deny" || !strings.Contains(ev.Hint, "`allow-ip` 10.7.7.7") {
		t.Errorf("the guard's refusal of a NO_PROXY name: %+v, want a denial naming the flag", ev)
	}
}

// A 407 (or any refusal) from the upstream proxy fails the flow with a line
// naming the proxy and the fix, never the credentials.
func TestUpstreamRefusesCONNECT(t *testing.T) {
	up := newTestUpstream(t, "127.0.0.1:1")
	up.wantAuth = "Basic bm9ib2R5Om5vcGU=" // not what the URL carries
	h := newHarness(t, flags{allow: []string{"api.corp.test"}}, func(p *Proxy) {
		p.Upstream = mustUpstream(t, map[string]string{"HTTPS_PROXY": upEnvURL(up.addr())})
		p.Resolver = noLookup{t}
	})
	c, err := h.dial(netip.AddrPortFrom(h.mustLookup("api.corp.test"), 443))
	if err != nil {
		t.Fatal(err)
	}
	go tls.Client(c, &tls.Config{ServerName: "api.corp.test", InsecureSkipVerify: true}).Handshake()
	expectRefused(t, c)
	ev := h.waitEvent(func(e Event) bool { return e.Type == "net" && e.Name == "api.corp.test" })
	if !strings.Contains(ev.Reason, "answered 407") || !strings.Contains(ev.Reason, "HTTPS_PROXY") || ev.Via != "http://"+up.addr() {
		t.Errorf("event = %+v", ev)
	}
	if ev.Decision != "allow" || !ev.Failed || !strings.HasPrefix(ev.Reason, "upstream proxy http://"+up.addr()+" answered 407") {
		t.Errorf("not a failed flow naming the proxy: %+v", ev)
	}
	assertNoSecret(t, h)
}

// A server that speaks first (SSH, SMTP): bytes the upstream proxy sends in
// the same segment as its 200 reach the client. Other protocols use
// ALL_PROXY.
func TestUpstreamServerSpeaksFirst(t *testing.T) {
	origin := newServer(t, func(c net.Conn) { c.Write([]byte(" and more")) })
	up := newTestUpstream(t, origin.ln.Addr().String())
	up.banner = "SSH-2.0-corp"
	h := newHarness(t, flags{allow: []string{"git.corp.test:22"}}, func(p *Proxy) {
		p.FirstByteWait = 20 * time.Millisecond
		p.Upstream = mustUpstream(t, map[string]string{"ALL_PROXY": "http://" + up.addr()})
		p.Resolver = noLookup{t}
	})
	c, err := h.dial(netip.AddrPortFrom(h.mustLookup("git.corp.test"), 22))
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(c)
	if string(b) != "SSH-2.0-corp and more" {
		t.Errorf("client read %q", b)
	}
	if r := up.requests(); len(r) != 1 || r[0].target != "git.corp.test:22" {
		t.Errorf("upstream asked %+v", r)
	}
}

// The fallback (proxy-aware) listener chains its CONNECT tunnels and
// absolute-form requests the same way.
func TestUpstreamFromFallback(t *testing.T) {
	_, hport := helloServer(t)
	up := newTestUpstream(t, fmt.Sprintf("127.0.0.1:%d", hport))
	h, addr := fallbackHarness(t, flags{allow: []string{"api.corp.test"}}, func(p *Proxy) {
		p.Upstream = mustUpstream(t, map[string]string{"HTTP_PROXY": upEnvURL(up.addr()), "HTTPS_PROXY": "http://127.0.0.1:1"})
		p.Resolver = noLookup{t}
	})
	pu, _ := url.Parse("http://" + addr)
	tr := &http.Transport{Proxy: http.ProxyURL(pu)}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("http://api.corp.test/x")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello api.corp.test" {
		t.Errorf("got %q", b)
	}
	if r := up.requests(); len(r) != 1 || r[0].target != "api.corp.test:80" || r[0].auth != upAuth() {
		t.Errorf("upstream asked %+v", r)
	}
	assertNoSecret(t, h)
}

func TestFlowClassAndVariables(t *testing.T) {
	env := map[string]string{
		"HTTPS_PROXY": "http://s:1", "https_proxy": "http://lower-s:1",
		"http_proxy": "h:2", // bare host:port, lower case only
		"ALL_PROXY":  "https://a:3",
	}
	up := mustUpstream(t, env)
	for _, tc := range []struct {
		kind int
		port uint16
		want string
	}{
		{kindTLS, 8443, "http://s:1"},
		{kindUnknown, 443, "http://s:1"},
		{kindHTTP, 8080, "http://h:2"},
		{kindUnknown, 80, "http://h:2"},
		{kindOther, 443, "https://a:3"},
		{kindUnknown, 22, "https://a:3"},
	} {
		got := up.For(flowClass(tc.kind, tc.port), "x.test:1", netip.AddrPort{})
		if got == nil || got.String() != tc.want {
			t.Errorf("kind %d port %d: %v, want %s", tc.kind, tc.port, got, tc.want)
		}
	}
	// ALL_PROXY fills in for an unset HTTP(S)_PROXY, not for an unusable one.
	up, problems := UpstreamFromEnv(envMap(map[string]string{"ALL_PROXY": "http://a:3", "HTTPS_PROXY": "socks5://u:" + url.QueryEscape(upSecret) + "@s:9"}))
	if up == nil || up.For(classHTTPS, "x.test:1", netip.AddrPort{}) != nil || up.For(classHTTP, "x.test:1", netip.AddrPort{}).String() != "http://a:3" {
		t.Errorf("fill-in: %v", up)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "HTTPS_PROXY names a socks5 proxy") || strings.Contains(problems[0], url.QueryEscape(upSecret)) {
		t.Errorf("problems = %q", problems)
	}
	if up, p := UpstreamFromEnv(envMap(nil)); up != nil || p != nil {
		t.Errorf("no variables: %v %v", up, p)
	}
	up, p := UpstreamFromEnv(envMap(map[string]string{"HTTPS_PROXY": "http://user:" + upSecret + "@%zz"}))
	if up != nil || len(p) != 1 || strings.Contains(p[0], upSecret) || !strings.Contains(p[0], "HTTPS_PROXY is not a proxy URL") {
		t.Errorf("malformed: %v %q", up, p)
	}
	s := mustUpstream(t, map[string]string{"HTTPS_PROXY": upEnvURL("p:1"), "NO_PROXY": "x"}).String()
	if strings.Contains(s, "ada") || strings.Contains(s, url.QueryEscape(upSecret)) || !strings.Contains(s, "TLS flows via http://p:1 (HTTPS_PROXY)") || !strings.Contains(s, "NO_PROXY") {
		t.Errorf("String() = %q", s)
	}
}

func TestNoProxy(t *testing.T) {
	np := parseNoProxy("example.com, .sub.test,*.star.test, 10.0.0.0/8, 192.0.2.1, 192.0.2.2:8443, [fd00::1]:443, only.test:8080, , :99")
	for _, tc := range []struct {
		hostport string
		want     bool
	}{
		{"example.com:443", true},
		{"EXAMPLE.com.:443", true},
		{"a.example.com:443", true},
		{"badexample.com:443", false},
		{"sub.test:443", false},
		{"a.sub.test:443", true},
		{"star.test:443", false},
		{"a.star.test:443", true},
		{"10.9.8.7:22", true},
		{"11.0.0.1:22", false},
		{"192.0.2.1:1", true},
		{"192.0.2.2:8443", true},
		{"192.0.2.2:443", false},
		{"[fd00::1]:443", true},
		{"only.test:8080", true},
		{"only.test:443", false},
		{"localhost:1", true},
		{"127.0.0.9:1", true},
		{"[::1]:1", true},
		{"other.test:443", false},
		{"not-a-hostport", false},
	} {
		if got := np.bypass(tc.hostport); got != tc.want {
			t.Errorf("bypass(%q) = %v, want %v", tc.hostport, got, tc.want)
		}
	}
	if !parseNoProxy("*").bypass("any.test:1") || parseNoProxy("").bypass("any.test:1") {
		t.Error(`"*" must match everything and "" nothing`)
	}
	var nilNP *noProxy
	if !nilNP.bypass("localhost:1") || nilNP.bypass("a.test:1") {
		t.Error("nil list: loopback only")
	}
}

func FuzzNoProxy(f *testing.F) {
	f.Add("example.com,.x.test,10.0.0.0/8,[::1]:443,*", "a.example.com:443")
	f.Add(",,:,[,]:,*.", "[:]:")
	f.Fuzz(func(t *testing.T, list, hostport string) {
		np := parseNoProxy(list)
		a := np.bypass(hostport)
		if a != np.bypass(hostport) {
			t.Fatal("not deterministic")
		}
		if _, _, err := net.SplitHostPort(hostport); err == nil && parseNoProxy(list+",*").bypass(hostport) != true {
			t.Fatalf("%q with * does not bypass %q", list, hostport)
		}
	})
}

func FuzzConnectResponse(f *testing.F) {
	f.Add("HTTP/1.1 200 Connection established\r\n\r\n")
	f.Add("HTTP/1.0 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n\r\nbody")
	f.Add("HTTP/2 200\r\n\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		code, err := readConnectResponse(bufio.NewReaderSize(strings.NewReader(s), 4096))
		if err == nil && (code < 100 || code > 999 || !strings.HasPrefix(s, "HTTP/1.")) {
			t.Fatalf("accepted %q as status %d", s, code)
		}
	})
}
