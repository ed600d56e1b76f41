package netproxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// mustCfg builds a Config from flag-style strings; it fails the test on a
// parse error.
type flags struct {
	allow, deny, ips, hosts []string
	hostPorts               []uint16
}

func mustPolicy(t testing.TB, f flags) *Policy {
	t.Helper()
	var cfg Config
	for _, s := range f.allow {
		r, err := ParseDomainPattern(s)
		if err != nil {
			t.Fatal(err)
		}
		cfg.AllowDomains = append(cfg.AllowDomains, r)
	}
	for _, s := range f.deny {
		r, err := ParseDenyPattern(s)
		if err != nil {
			t.Fatal(err)
		}
		cfg.DenyDomains = append(cfg.DenyDomains, r)
	}
	for _, s := range f.ips {
		r, err := ParseIPRule(s)
		if err != nil {
			t.Fatal(err)
		}
		cfg.AllowIPs = append(cfg.AllowIPs, r)
	}
	for _, s := range f.hosts {
		h, err := ParseAddHost(s)
		if err != nil {
			t.Fatal(err)
		}
		cfg.AddHosts = append(cfg.AddHosts, h)
	}
	cfg.HostPorts = f.hostPorts
	p, err := NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// mapResolver stands in for the host's resolver: no test ever asks a real DNS.
type mapResolver map[string][]netip.Addr

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := m[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// harness runs a Proxy on a plain loopback listener; the "original
// destination" of each flow is registered by the test client (TPROXY's job
// in production).
type harness struct {
	t     testing.TB
	pol   *Policy
	fakes *FakeIPs
	dns   *DNS
	p     *Proxy
	ln    net.Listener
	dsts  sync.Map // client local addr -> chan netip.AddrPort (the "original destination")

	mu     sync.Mutex
	events []Event
	cancel context.CancelFunc
	done   chan error
}

func newHarness(t testing.TB, f flags, tweak ...func(*Proxy)) *harness {
	t.Helper()
	h := &harness{t: t, pol: mustPolicy(t, f), fakes: NewFakeIPs(), done: make(chan error, 1)}
	h.dns = NewDNS(h.pol, h.fakes, h.record)
	h.p = &Proxy{
		Policy: h.pol, Fakes: h.fakes, OnEvent: h.record,
		RefuseWait: 300 * time.Millisecond, // silent refused clients are the tests' own
		Resolver:   mapResolver{},
		HostAddrs:  func() []netip.Addr { return nil },
		OrigDst:    h.origDst,
		Spell:      flagSpell, // as the CLI sets it
	}
	for _, fn := range tweak {
		fn(h.p)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.ln = ln
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- h.p.Serve(ctx, ln) }()
	t.Cleanup(h.stop)
	return h
}

func (h *harness) stop() {
	h.cancel()
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		h.t.Errorf("Serve did not return after cancel")
	}
}

func (h *harness) record(ev Event) {
	h.mu.Lock()
	h.events = append(h.events, ev)
	h.mu.Unlock()
}

func (h *harness) slot(key string) chan netip.AddrPort {
	v, _ := h.dsts.LoadOrStore(key, make(chan netip.AddrPort, 1))
	return v.(chan netip.AddrPort)
}

func (h *harness) origDst(c net.Conn) (netip.AddrPort, error) {
	key := c.RemoteAddr().String()
	select {
	case d := <-h.slot(key):
		h.dsts.Delete(key)
		return d, nil
	case <-time.After(2 * time.Second):
		return netip.AddrPort{}, errors.New("no registered destination")
	}
}

// dial connects "to" dst the way a sandboxed program would: through the proxy.
func (h *harness) dial(dst netip.AddrPort) (*net.TCPConn, error) {
	c, err := net.Dial("tcp", h.ln.Addr().String())
	if err != nil {
		return nil, err
	}
	h.slot(c.LocalAddr().String()) <- dst
	return c.(*net.TCPConn), nil
}

// lookup asks the jail DNS for an A record like the sandbox's resolver would
// and returns the fake address (invalid on NXDOMAIN).
func (h *harness) lookup(name string) netip.Addr {
	h.t.Helper()
	resp, _, ok := h.dns.Answer(query(h.t, name, dnsmessage.TypeA))
	if !ok {
		h.t.Fatalf("no answer for %s", name)
	}
	var p dnsmessage.Parser
	hd, err := p.Start(resp)
	if err != nil {
		h.t.Fatal(err)
	}
	if hd.RCode != dnsmessage.RCodeSuccess {
		return netip.Addr{}
	}
	p.SkipAllQuestions()
	ans, err := p.AllAnswers()
	if err != nil || len(ans) != 1 {
		h.t.Fatalf("answers for %s: %v %v", name, ans, err)
	}
	a := netip.AddrFrom4(ans[0].Body.(*dnsmessage.AResource).A)
	if RefusedRange.Contains(a) {
		return netip.Addr{} // a refused name: its address leads only to a refusal
	}
	return a
}

func (h *harness) mustLookup(name string) netip.Addr {
	h.t.Helper()
	a := h.lookup(name)
	if !a.IsValid() {
		h.t.Fatalf("%s: NXDOMAIN, want a fake address", name)
	}
	return a
}

// lastEvent waits for the flow event that follows a finished connection.
func (h *harness) waitEvent(match func(Event) bool) Event {
	h.t.Helper()
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
		time.Sleep(2 * time.Millisecond)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.t.Fatalf("no matching event; have %+v", h.events)
	return Event{}
}

func query(t testing.TB, name string, typ dnsmessage.Type) []byte {
	t.Helper()
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 4242, RecursionDesired: true})
	b.StartQuestions()
	if !strings.HasSuffix(name, ".") {
		name += "."
	}
	n, err := dnsmessage.NewName(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Question(dnsmessage.Question{Name: n, Type: typ, Class: dnsmessage.ClassINET}); err != nil {
		t.Fatal(err)
	}
	out, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// countingServer is a loopback TCP server that counts accepted connections
// and runs serve on each.
type countingServer struct {
	ln      net.Listener
	mu      sync.Mutex
	accepts int
}

func newServer(t testing.TB, serve func(net.Conn)) *countingServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &countingServer{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.accepts++
			s.mu.Unlock()
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return s
}

func (s *countingServer) port() uint16 { return uint16(s.ln.Addr().(*net.TCPAddr).Port) }

func (s *countingServer) portStr() string { return strconv.Itoa(int(s.port())) }

func (s *countingServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepts
}

func echo(c net.Conn) { io.Copy(c, c) }

// expectRefused asserts the proxy refused the flow: promptly, the client
// reads nothing but jail's own refusal (a TLS access_denied alert or a 403
// naming what was refused), then EOF or a reset. It returns what it read.
func expectRefused(t testing.TB, c net.Conn) string {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("flow neither refused nor answered within 5s (read %q)", b)
	}
	if len(b) > 0 && !isRefusal(b) {
		t.Fatalf("ATTACK WORKED: got %d bytes through a flow that must be refused: %q", len(b), b)
	}
	return string(b)
}

// isRefusal reports whether b is exactly one of jail's refusal answers.
func isRefusal(b []byte) bool {
	if bytes.Equal(b, tlsAccessDenied) {
		return true
	}
	head, body, ok := bytes.Cut(b, []byte("\r\n\r\n"))
	return ok && bytes.HasPrefix(head, []byte("HTTP/1.1 403 Forbidden\r\n")) &&
		bytes.HasPrefix(body, []byte(`{"error":"jail: refused `)) && bytes.Count(body, []byte("\n")) == 1
}

// inCI reports whether security tests must not skip.
func inCI() bool { return os.Getenv("CI") == "true" }

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// flagSpell spells option references as flags, as the CLI does
// (sandbox.Spell): "`allow-domain` x" -> "--allow-domain x".
func flagSpell(s string) string { return refPattern().ReplaceAllString(s, "--$1") }

// keyRef is the option reference a flag-spelled hint stands for:
// "--allow-domain x" -> "`allow-domain` x".
func keyRef(s string) string { return flagRef.ReplaceAllString(s, "`$1`") }

var flagRef = regexp.MustCompile(`^--([a-z][a-z0-9-]*)`)
