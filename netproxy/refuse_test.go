package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// refusalHarness is a harness whose upstream dial is counted and always
// fails: a refused flow must never get that far.
func refusalHarness(t *testing.T, f flags) (*harness, *atomic.Int32) {
	var dials atomic.Int32
	h := newHarness(t, f, func(p *Proxy) {
		p.FirstByteWait = 100 * time.Millisecond
		p.RefuseWait = time.Second
		p.Dial = func(context.Context, netip.AddrPort) (net.Conn, error) {
			dials.Add(1)
			return nil, errors.New("no upstream in this test")
		}
	})
	return h, &dials
}

// refusal asks the harness DNS for an A record and returns the address
// whatever its range (lookup hides refusal addresses).
func (h *harness) refusal(name string) netip.Addr {
	h.t.Helper()
	resp, _, ok := h.dns.Answer(query(h.t, name, dnsmessage.TypeA))
	if !ok {
		h.t.Fatalf("%s: no DNS answer", name)
	}
	_, _, as := parseResp(h.t, resp)
	if len(as) != 1 {
		h.t.Fatalf("%s: %d answers", name, len(as))
	}
	return netip.AddrFrom4(as[0].Body.(*dnsmessage.AResource).A)
}

// TestRefusalAnswers: a refused flow is answered in the client's protocol,
// with a failure no client retries: HTTP/1 gets a 403 whose body names the
// host and the flag, TLS gets a fatal access_denied alert (no certificate),
// other protocols and silent clients a reset. Each refusal is one event with
// the hint, emitted before the answer; nothing is ever dialled.
func TestRefusalAnswers(t *testing.T) {
	h, dials := refusalHarness(t, flags{allow: []string{"allowed.test:443"}, deny: []string{"denied.test"}})
	refused := func(name string) netip.Addr {
		t.Helper()
		a := h.refusal(name)
		if !RefusedRange.Contains(a) {
			t.Fatalf("%s resolved to %v, want an address of %v", name, a, RefusedRange)
		}
		return a
	}
	tests := []struct {
		name   string
		dst    netip.AddrPort
		send   []byte
		want   string // what the client reads: "403", "alert" or "" (reset/EOF, nothing)
		target string
		hint   string
		delay  time.Duration // before sending
	}{
		{"HTTP to a refused name", netip.AddrPortFrom(refused("registry.example"), 80),
			[]byte("GET /is-odd HTTP/1.1\r\nHost: registry.example\r\nAccept: application/json\r\n\r\n"), "403", "registry.example:80", "--allow-domain registry.example", 0},
		{"TLS to a refused name", netip.AddrPortFrom(refused("registry.example"), 443),
			clientHello(t, "registry.example"), "alert", "registry.example:443", "--allow-domain registry.example", 0},
		{"TLS from a client slow to start (GnuTLS loads its CA certificates after connect)", netip.AddrPortFrom(refused("slow.example"), 443),
			clientHello(t, "slow.example"), "alert", "slow.example:443", "--allow-domain slow.example", 500 * time.Millisecond},
		{"TLS ClientHello in fragments", netip.AddrPortFrom(refused("frag.example"), 443),
			fragment(clientHello(t, "frag.example"), 7), "alert", "frag.example:443", "--allow-domain frag.example", 0},
		{"SSH to a refused name", netip.AddrPortFrom(refused("git.example"), 22),
			[]byte("SSH-2.0-OpenSSH_9.2\r\n"), "", "git.example:22", "--allow-domain git.example", 0},
		{"silent client", netip.AddrPortFrom(refused("smtp.example"), 25),
			nil, "", "smtp.example:25", "--allow-domain smtp.example", 0},
		{"allowed name on another port", netip.AddrPortFrom(h.mustLookup("allowed.test"), 80),
			[]byte("GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n"), "403", "allowed.test:80", "--allow-domain allowed.test:80", 0},
		{"raw address", netip.MustParseAddrPort("203.0.113.7:443"),
			clientHello(t, ""), "alert", "203.0.113.7:443", "--allow-ip 203.0.113.7/32:443", 0},
		{"a name the user denied", netip.AddrPortFrom(refused("denied.test"), 80),
			[]byte("GET / HTTP/1.1\r\nHost: denied.test\r\n\r\n"), "403", "denied.test:80", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.mu.Lock()
			before := len(h.events)
			h.mu.Unlock()
			start := time.Now()
			c, err := h.dial(tt.dst)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if tt.send != nil {
				time.Sleep(tt.delay)
				c.Write(tt.send)
			}
			got := expectRefused(t, c)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("refusal took %v", d)
			}
			switch tt.want {
			case "403":
				resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(got)), nil)
				if err != nil {
					t.Fatalf("not an HTTP response: %q", got)
				}
				body, _ := io.ReadAll(resp.Body)
				var msg struct{ Error string }
				if resp.StatusCode != 403 || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || json.Unmarshal(body, &msg) != nil {
					t.Fatalf("answer %q", got)
				}
				if !strings.HasPrefix(msg.Error, "jail: refused "+tt.target) || tt.hint != "" && !strings.HasSuffix(msg.Error, " - add "+tt.hint) {
					t.Errorf("403 body says %q; want it to name %s and the flag %q", msg.Error, tt.target, tt.hint)
				}
			case "alert":
				if got != string(tlsAccessDenied) {
					t.Errorf("answer %q, want exactly the access_denied alert", got)
				}
			default:
				if got != "" {
					t.Errorf("answer %q, want nothing", got)
				}
			}
			h.mu.Lock()
			evs := append([]Event(nil), h.events[before:]...)
			h.mu.Unlock()
			if len(evs) != 1 || evs[0].Decision != "deny" || evs[0].Target() != tt.target || evs[0].Hint != keyRef(tt.hint) || evs[0].Public == "" {
				t.Errorf("events %+v; want one deny for %s with hint %q", evs, tt.target, tt.hint)
			}
		})
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("ATTACK WORKED: %d upstream dials for refused flows", n)
	}
}

// TestRefusalRealClients: what Go's own HTTP and TLS clients report for a
// refused name, which is what the go command prints.
func TestRefusalRealClients(t *testing.T) {
	h, dials := refusalHarness(t, flags{allow: []string{"allowed.test"}})
	a := h.refusal("refused.example")
	tr := &http.Transport{
		DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
			_, port, _ := net.SplitHostPort(addr)
			n, _ := parsePort(port)
			return h.dial(netip.AddrPortFrom(a, n))
		},
		DialTLSContext: func(_ context.Context, _, addr string) (net.Conn, error) {
			c, err := h.dial(netip.AddrPortFrom(a, 443))
			if err != nil {
				return nil, err
			}
			tc := tls.Client(c, &tls.Config{ServerName: "refused.example"})
			return tc, tc.Handshake()
		},
	}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	resp, err := cl.Get("http://refused.example/mod/@v/list")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(body), "refused refused.example:80 - add --allow-domain refused.example") {
		t.Errorf("http: %d %q", resp.StatusCode, body)
	}
	_, err = cl.Get("https://refused.example/")
	if err == nil || !strings.Contains(err.Error(), "tls: access denied") {
		t.Errorf("https: %v, want the access_denied alert", err)
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("ATTACK WORKED: %d upstream dials", n)
	}
}

// TestRefusedRangeNeverLeaves: a flow to the refusal range is refused by
// its range, even when the name behind it is one the policy allows (the
// sandbox made the address up, or a refusal address was recycled).
func TestRefusedRangeNeverLeaves(t *testing.T) {
	h, dials := refusalHarness(t, flags{allow: []string{"*.ok.test"}})
	h.fakes.AssignRefused("a.ok.test") // as if an old refusal had left it there
	for _, dst := range []netip.AddrPort{
		netip.AddrPortFrom(RefusedRange.Addr().Next(), 80),        // maps to a.ok.test, an allowed name
		netip.AddrPortFrom(netip.MustParseAddr("198.19.9.9"), 80), // never handed out
	} {
		c, err := h.dial(dst)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("GET / HTTP/1.1\r\nHost: a.ok.test\r\n\r\n"))
		if got := expectRefused(t, c); !strings.Contains(got, "403 Forbidden") {
			t.Errorf("%v: %q, want a 403", dst, got)
		}
		c.Close()
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("ATTACK WORKED: %d upstream dials from the refusal range", n)
	}
}

// TestEndpoint: a flow to the Endpoint (what *_PROXY names inside) is a
// proxy request; a refused CONNECT gets the same 403, which https-proxy-agent
// (npm) hands to the client as the origin's answer.
func TestEndpoint(t *testing.T) {
	ep := netip.MustParseAddrPort("10.201.0.1:80")
	var dials atomic.Int32
	h := newHarness(t, flags{allow: []string{"allowed.test"}}, func(p *Proxy) {
		p.Endpoint = ep
		p.Dial = func(context.Context, netip.AddrPort) (net.Conn, error) {
			dials.Add(1)
			return nil, errors.New("no upstream in this test")
		}
	})
	resp, body := connectVia(t, h, ep, "registry.example:443")
	// The refusal is in the status line, where every proxy client that
	// reports a failed tunnel puts it, and once in the plain-text body (npm
	// prints the status line; a JSON "error" would be printed twice).
	const want = "jail: refused registry.example:443 - add --allow-domain registry.example"
	if resp.StatusCode != 403 || resp.Status != "403 Forbidden ("+want+")" || body != want+"\n" {
		t.Errorf("CONNECT: %q %q", resp.Status, body)
	}
	ev := h.waitEvent(func(e Event) bool { return e.Decision == "deny" })
	if ev.Mode != "http-proxy" || ev.Target() != "registry.example:443" || ev.Hint != "`allow-domain` registry.example" {
		t.Errorf("event %+v", ev)
	}
	if dials.Load() != 0 {
		t.Error("ATTACK WORKED: a refused CONNECT was dialled")
	}
}

// TestConnectFailedInClientError: an allowed CONNECT whose host cannot be
// reached is answered 502 with the cause in the status line, so the
// client's error says jail could not reach the host, not that it refused
// it (pip printed "Tunnel connection failed: 502 Bad Gateway").
func TestConnectFailedInClientError(t *testing.T) {
	ep := netip.MustParseAddrPort("10.201.0.1:80")
	h := newHarness(t, flags{allow: []string{"allowed.test"}}, func(p *Proxy) {
		p.Endpoint = ep
		p.Dial = func(context.Context, netip.AddrPort) (net.Conn, error) {
			return nil, errors.New("no upstream in this test")
		}
	})
	resp, body := connectVia(t, h, ep, "allowed.test:443")
	if resp.StatusCode != 502 || !strings.HasPrefix(resp.Status, "502 Bad Gateway (jail: connect to allowed.test:443 failed: ") ||
		!strings.HasPrefix(body, "jail: connect to allowed.test:443 failed: ") || strings.Contains(resp.Status, "refused allowed.test") {
		t.Errorf("CONNECT: %q %q", resp.Status, body)
	}
}

// refusedGET sends a plain GET for name to its refusal address, port 80,
// and returns the refusal it gets.
func refusedGET(t *testing.T, h *harness, name string) string {
	t.Helper()
	c, err := h.dial(netip.AddrPortFrom(h.refusal(name), 80))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("GET / HTTP/1.1\r\nHost: " + name + "\r\n\r\n"))
	return expectRefused(t, c)
}

// connectVia sends a CONNECT for target to the proxy at ep and returns
// its answer and body.
func connectVia(t *testing.T, h *harness, ep netip.AddrPort, target string) (*http.Response, string) {
	t.Helper()
	c, err := h.dial(ep)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// TestConnectRefusalInClientError: a client that reports a refused tunnel
// by its status line (Go's transport, Python's http.client, so pip) names
// the refused host and the flag; a reason phrase that could break the
// response (a CR, an LF, a control byte) never reaches the client.
func TestConnectRefusalInClientError(t *testing.T) {
	ep := netip.MustParseAddrPort("10.201.0.1:80")
	h, dials := refusalHarness(t, flags{allow: []string{"allowed.test"}})
	h.p.Endpoint = ep
	tr := &http.Transport{
		Proxy:       http.ProxyURL(&url.URL{Scheme: "http", Host: ep.String()}),
		DialContext: func(context.Context, string, string) (net.Conn, error) { return h.dial(ep) },
	}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	_, err := cl.Get("https://refused.example/mod/@v/list")
	const want = "jail: refused refused.example:443 - add --allow-domain refused.example"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Go's error %q, want %q in it", err, want)
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("ATTACK WORKED: %d upstream dials", n)
	}
	for _, tt := range []struct{ in, want string }{
		{"refused a.test:443 - add --allow-domain a.test", "HTTP/1.1 403 Forbidden (jail: refused a.test:443 - add --allow-domain a.test)\r\n"},
		{"x\r\nSet-Cookie: a=b\x00\x7f\tz", "HTTP/1.1 403 Forbidden (jail: x??Set-Cookie: a=b??\tz)\r\n"},
	} {
		got := string(refusalConnect403(tt.in))
		if line, _, _ := strings.Cut(got, "\n"); line+"\n" != tt.want {
			t.Errorf("status line for %q: %q, want %q", tt.in, line+"\n", tt.want)
		}
		if strings.Count(got, "\r\n\r\n") != 1 || !strings.HasSuffix(got, "jail: "+tt.in+"\n") {
			t.Errorf("response for %q: %q", tt.in, got)
		}
	}
}

// TestPolicyHint: the flag named for each kind of refusal.
func TestPolicyHint(t *testing.T) {
	p := mustPolicy(t, flags{allow: []string{"a.test:443", "*.w.test"}, deny: []string{"bad.w.test", "x.test:22"}, hostPorts: []uint16{8080}})
	tests := []struct {
		name string
		ip   string
		port uint16
		want string
	}{
		{"other.test", "", 443, "`allow-domain` other.test"},
		{"other.test", "", 0, "`allow-domain` other.test"},
		{"OTHER.test.", "", 0, "`allow-domain` other.test"},
		{"a.test", "", 80, "`allow-domain` a.test:80"},
		{"w.test", "", 443, "`allow-domain` w.test"},
		{"bad.w.test", "", 443, ""},
		{"x.test", "", 22, ""},
		{"x.test", "", 443, "`allow-domain` x.test"},
		{HostInternal, "", 9000, "`allow-host-port` 9000"},
		{"", "203.0.113.9", 80, "`allow-ip` 203.0.113.9/32:80"},
		{"", "2001:db8::1", 443, "`allow-ip` [2001:db8::1/128]:443"},
		{"", "203.0.113.9", 0, ""},
	}
	for _, tt := range tests {
		var ip netip.Addr
		if tt.ip != "" {
			ip = netip.MustParseAddr(tt.ip)
		}
		if got := p.Hint(tt.name, ip, tt.port); got != tt.want {
			t.Errorf("Hint(%q, %q, %d) = %q, want %q", tt.name, tt.ip, tt.port, got, tt.want)
		}
	}
	// A guard refusal's advice names the address; what the sandbox reads does not.
	d := p.CheckDial("a.test", netip.MustParseAddr("10.1.2.3"), 443, nil)
	if d.Allow || d.Hint != "`allow-ip` 10.1.2.3/32:443" || d.Public == "" || strings.Contains(d.Public, "10.1.2.3") {
		t.Errorf("guard decision %+v", d)
	}
	if got := publicText("a.test:443", d); strings.Contains(got, "10.1.2.3") {
		t.Errorf("the sandbox would read the host's address: %q", got)
	}
}

// TestRefusalText: the one line of a notice.
func TestRefusalText(t *testing.T) {
	for _, tt := range []struct{ target, reason, hint, want string }{
		{"r.example:443", reasonNotAllowed, "`allow-domain` r.example", "refused r.example:443 - add `allow-domain` r.example"},
		{"r.example", reasonNotAllowedDNS, "`allow-domain` r.example", "refused r.example - add `allow-domain` r.example"},
		{"a.test:80", "port 80 not allowed for this name", "`allow-domain` a.test:80", "refused a.test:80 (port 80 not allowed for this name) - add `allow-domain` a.test:80"},
		{"b.test:80", "denied by deny-domain b.test", "", "refused b.test:80 (denied by deny-domain b.test)"},
		// The reason gives the advice already (bare key): no second one.
		{"c.test:443", "c.test resolves to 10.0.0.1, a private network address; allow it with allow-ip 10.0.0.1/32:443", "`allow-ip` 10.0.0.1/32:443",
			"refused c.test:443 (c.test resolves to 10.0.0.1, a private network address; allow it with allow-ip 10.0.0.1/32:443)"},
	} {
		if got := RefusalText(tt.target, tt.reason, tt.hint); got != tt.want {
			t.Errorf("RefusalText(%q, %q, %q) = %q, want %q", tt.target, tt.reason, tt.hint, got, tt.want)
		}
	}
}

// TestFakeIPsRefusedRecycled: refusal addresses are stable per name and
// recycled, oldest first, when the range is used up; allowed addresses are
// never touched by it.
func TestFakeIPsRefusedRecycled(t *testing.T) {
	f := NewFakeIPs()
	ok, _ := f.Assign("allowed.test")
	first := f.AssignRefused("n0.test")
	if f.AssignRefused("n0.test") != first || !RefusedRange.Contains(first) {
		t.Fatalf("refusal address %v not stable or outside the range", first)
	}
	n := 1 << 16
	for i := 1; i < n; i++ {
		a := f.AssignRefused(fmt.Sprintf("n%d.test", i))
		if !RefusedRange.Contains(a) || a == netip.MustParseAddr("198.19.255.255") || a == RefusedRange.Addr() {
			t.Fatalf("n%d.test got %v", i, a)
		}
	}
	if name, _ := f.Lookup(first); name == "n0.test" {
		t.Errorf("the oldest refusal address was not recycled")
	}
	if name, _ := f.Lookup(ok); name != "allowed.test" || !AllowedRange.Contains(ok) {
		t.Errorf("allowed address %v now names %q", ok, name)
	}
}

// TestBypass: the proxy-aware fallback's refusal listeners refuse even what
// the policy allows (it must go through the proxy), saying why, and refuse
// the rest as usual; nothing is dialled.
func TestBypass(t *testing.T) {
	h, dials := refusalHarness(t, flags{allow: []string{"allowed.test"}})
	h.p.Bypass = "egress is proxy-aware only here"
	for _, tt := range []struct {
		dst  netip.AddrPort
		want string
	}{
		{netip.AddrPortFrom(h.mustLookup("allowed.test"), 80), "jail: refused allowed.test:80 (egress is proxy-aware only here)"},
		{netip.AddrPortFrom(h.refusal("other.test"), 80), "jail: refused other.test:80 - add --allow-domain other.test"},
	} {
		c, err := h.dial(tt.dst)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		if got := expectRefused(t, c); !strings.Contains(got, `{"error":"`+tt.want+`"}`) {
			t.Errorf("%v: %q, want %q", tt.dst, got, tt.want)
		}
		c.Close()
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("ATTACK WORKED: %d dials", n)
	}
}

// TestRefusalSpelled: what the client reads names the option as Spell
// renders it (the CLI: --allow-domain), and never a raw `key` reference;
// the event keeps the reference for the supervisor to render.
func TestRefusalSpelled(t *testing.T) {
	for _, tt := range []struct {
		spell func(string) string
		want  string
	}{
		{flagSpell, "jail: refused r.example:80 - add --allow-domain r.example"},
		{nil, "jail: refused r.example:80 - add allow-domain r.example"},
	} {
		h, _ := refusalHarness(t, flags{allow: []string{"allowed.test"}})
		h.p.Spell = tt.spell
		got := refusedGET(t, h, "r.example")
		if !strings.Contains(got, `{"error":"`+tt.want+`"}`) || strings.Contains(got, "`") {
			t.Errorf("403: %q, want %q", got, tt.want)
		}
		if ev := h.waitEvent(func(e Event) bool { return e.Decision == "deny" && e.Port == 80 }); ev.Hint != "`allow-domain` r.example" {
			t.Errorf("event hint %q", ev.Hint)
		}
	}
}

// A name a profile's program does without (Config.Refused) is refused as
// any other, but said with what the program does without it and no flag
// to allow it (allowing github.com would open every repository there); a
// refusal of another kind keeps its own words, and nothing is allowed.
func TestExpectedRefusal(t *testing.T) {
	const why = "the tool's marketplace: it goes on without it"
	cfg, err := BuildConfig(Flags{AllowDomains: []string{"a.test"}, DenyDomains: []string{"bad.test"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Refused = map[string]string{"github.com": why, "bad.test": why, "a.test": why}
	pol, err := NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name       string
		port       uint16
		allow      bool
		reason     string
		hintPrefix string
	}{
		{"GitHub.com.", 443, false, why, ""},
		{"github.com", 22, false, why, ""},
		{"bad.test", 443, false, "denied by deny-domain bad.test", ""},
		{"a.test", 443, true, "", ""},
		{"other.test", 443, false, reasonNotAllowed, "`allow-domain` other.test"},
	} {
		d := pol.Expected(tt.name, pol.Decide(tt.name, netip.Addr{}, tt.port))
		if d.Allow != tt.allow || !tt.allow && (d.Reason != tt.reason || d.Hint != tt.hintPrefix) {
			t.Errorf("%s:%d: %+v, want allow %v reason %q hint %q", tt.name, tt.port, d, tt.allow, tt.reason, tt.hintPrefix)
		}
	}

	// On the wire: the 403 the sandbox reads and the event say why.
	var dials atomic.Int32
	h := newHarness(t, flags{allow: []string{"allowed.test"}}, func(p *Proxy) {
		p.Policy = pol
		p.RefuseWait = time.Second
		p.Dial = func(context.Context, netip.AddrPort) (net.Conn, error) {
			dials.Add(1)
			return nil, errors.New("no upstream in this test")
		}
	})
	got := refusedGET(t, h, "github.com")
	if !strings.Contains(got, "jail: refused github.com:80 ("+why+")") || strings.Contains(got, "allow-domain") {
		t.Errorf("403: %q, want the refusal said with why and no flag", got)
	}
	if ev := h.waitEvent(func(e Event) bool { return e.Decision == "deny" && e.Name == "github.com" }); ev.Reason != why || ev.Hint != "" {
		t.Errorf("event %+v, want reason %q and no hint", ev, why)
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("ATTACK WORKED: %d dials", n)
	}
}
