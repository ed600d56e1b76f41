package netproxy

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

func parseResp(t testing.TB, b []byte) (dnsmessage.Header, []dnsmessage.Question, []dnsmessage.Resource) {
	t.Helper()
	var p dnsmessage.Parser
	h, err := p.Start(b)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := p.AllQuestions()
	if err != nil {
		t.Fatal(err)
	}
	as, err := p.AllAnswers()
	if err != nil {
		t.Fatal(err)
	}
	return h, qs, as
}

func TestDNSAnswers(t *testing.T) {
	pol := mustPolicy(t, flags{
		allow:     []string{"example.com", "*.wild.test"},
		deny:      []string{"bad.wild.test"},
		hosts:     []string{"db.test:10.0.0.5"},
		hostPorts: []uint16{8080},
	})
	fakes := NewFakeIPs()
	d := NewDNS(pol, fakes, nil)
	tests := []struct {
		name    string
		typ     dnsmessage.Type
		rcode   dnsmessage.RCode
		n       int  // answers
		refused bool // the answer is a refusal address
	}{
		{"example.com.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 1, false},
		{"EXAMPLE.com.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 1, false},
		{"example.com.", dnsmessage.TypeAAAA, dnsmessage.RCodeSuccess, 0, false}, // IPv6 not offered: NODATA
		{"example.com.", dnsmessage.TypeMX, dnsmessage.RCodeSuccess, 0, false},
		{"example.com.", dnsmessage.TypeTXT, dnsmessage.RCodeSuccess, 0, false}, // no TXT tunnel out
		{"a.wild.test.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 1, false},
		{"wild.test.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 1, true}, // apex of a wildcard
		{"bad.wild.test.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 1, true},
		{"db.test.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 1, false},
		{"host.jail.internal.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 1, false},
		{"other.test.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 1, true},
		{"other.test.", dnsmessage.TypeAAAA, dnsmessage.RCodeSuccess, 0, true}, // NODATA
		{"x.example.com.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 1, true},
		{"1.0.0.127.in-addr.arpa.", dnsmessage.TypePTR, dnsmessage.RCodeSuccess, 0, true}, // NODATA
		{"bad_name!.test.", dnsmessage.TypeA, dnsmessage.RCodeNameError, 0, true},         // not a host name
	}
	for _, tt := range tests {
		resp, ev, ok := d.Answer(query(t, tt.name, tt.typ))
		if !ok {
			t.Fatalf("%s: no answer", tt.name)
		}
		h, qs, as := parseResp(t, resp)
		if h.ID != 4242 || !h.Response || h.RCode != tt.rcode || len(as) != tt.n || len(qs) != 1 || qs[0].Name.String() != tt.name {
			t.Errorf("%s %v: header %+v questions %v answers %d; want rcode %v, %d answers", tt.name, tt.typ, h, qs, len(as), tt.rcode, tt.n)
		}
		if ev.Type != "dns" || ev.Name == "" || ev.QType == "" || (ev.Decision == "deny") != tt.refused {
			t.Errorf("%s: event %+v", tt.name, ev)
		}
		if tt.refused && tt.rcode == dnsmessage.RCodeSuccess && (ev.Public == "" || !strings.HasPrefix(ev.Hint, "`allow-domain` ") && !strings.HasPrefix(tt.name, "bad.")) {
			t.Errorf("%s: refusal event without its public reason or hint: %+v", tt.name, ev)
		}
		for _, a := range as {
			ip := netip.AddrFrom4(a.Body.(*dnsmessage.AResource).A)
			want := AllowedRange
			if tt.refused {
				want = RefusedRange
			}
			if !want.Contains(ip) {
				t.Errorf("%s answered with %v, outside %v", tt.name, ip, want)
			}
			if n, _ := fakes.Lookup(ip); n != strings.ToLower(strings.TrimSuffix(tt.name, ".")) {
				t.Errorf("fake %v maps to %q, want %q", ip, n, tt.name)
			}
		}
	}
	// Stable per name, distinct across names.
	a1 := fakeOf(t, d, "example.com.")
	a2 := fakeOf(t, d, "Example.Com.")
	a3 := fakeOf(t, d, "b.wild.test.")
	if a1 != a2 || a1 == a3 {
		t.Errorf("fake addresses not stable/distinct: %v %v %v", a1, a2, a3)
	}
	r1, r2, r3 := fakeOf(t, d, "other.test."), fakeOf(t, d, "OTHER.test."), fakeOf(t, d, "x.example.com.")
	if r1 != r2 || r1 == r3 {
		t.Errorf("refusal addresses not stable/distinct: %v %v %v", r1, r2, r3)
	}
	// --deny-domain: refused, and no flag would allow it (the user denied it).
	if _, ev, _ := d.Answer(query(t, "bad.wild.test.", dnsmessage.TypeA)); ev.Hint != "" {
		t.Errorf("a --deny-domain name comes with the hint %q", ev.Hint)
	}
}

func fakeOf(t *testing.T, d *DNS, name string) netip.Addr {
	resp, _, _ := d.Answer(query(t, name, dnsmessage.TypeA))
	_, _, as := parseResp(t, resp)
	if len(as) != 1 {
		t.Fatalf("%s: %d answers", name, len(as))
	}
	return netip.AddrFrom4(as[0].Body.(*dnsmessage.AResource).A)
}

func TestDNSMalformed(t *testing.T) {
	d := NewDNS(mustPolicy(t, flags{allow: []string{"example.com"}}), NewFakeIPs(), nil)
	if _, _, ok := d.Answer([]byte{1, 2, 3}); ok {
		t.Error("answered a 3-byte datagram")
	}
	// Two questions: FORMERR, and the allowed one must not be answered.
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 7})
	b.StartQuestions()
	n1, _ := dnsmessage.NewName("example.com.")
	b.Question(dnsmessage.Question{Name: n1, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET})
	b.Question(dnsmessage.Question{Name: n1, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET})
	q, _ := b.Finish()
	resp, _, ok := d.Answer(q)
	h, _, as := parseResp(t, resp)
	if !ok || h.RCode != dnsmessage.RCodeFormatError || len(as) != 0 {
		t.Errorf("two questions: %+v %d answers", h, len(as))
	}
	// A response must never be answered (no reflection loops).
	b = dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 8, Response: true})
	b.StartQuestions()
	b.Question(dnsmessage.Question{Name: n1, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET})
	q, _ = b.Finish()
	if _, _, ok := d.Answer(q); ok {
		t.Error("answered a response")
	}
	// CHAOS class for an allowed name: NXDOMAIN.
	b = dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 9})
	b.StartQuestions()
	b.Question(dnsmessage.Question{Name: n1, Type: dnsmessage.TypeTXT, Class: dnsmessage.ClassCHAOS})
	q, _ = b.Finish()
	resp, _, _ = d.Answer(q)
	if h, _, _ := parseResp(t, resp); h.RCode != dnsmessage.RCodeNameError {
		t.Errorf("CHAOS: %v", h.RCode)
	}
}

// TestDNSServeUDP runs the server on a real UDP socket, resolves an allowed
// name with Go's own resolver pointed at it, and checks that a denied name
// gets a refusal address and that the event stream says so.
func TestDNSServeUDP(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var evs []Event
	d := NewDNS(mustPolicy(t, flags{allow: []string{"allowed.test"}}), NewFakeIPs(), func(e Event) {
		mu.Lock()
		evs = append(evs, e)
		mu.Unlock()
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx, pc) }()
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return net.Dial("udp", pc.LocalAddr().String())
	}}
	addrs, err := r.LookupNetIP(context.Background(), "ip", "allowed.test")
	if err != nil || len(addrs) != 1 || !FakeRange.Contains(addrs[0]) {
		t.Errorf("allowed.test = %v, %v; want one fake address", addrs, err)
	}
	addrs, err = r.LookupNetIP(context.Background(), "ip", "other.test")
	if err != nil || len(addrs) != 1 || !RefusedRange.Contains(addrs[0]) {
		t.Errorf("other.test = %v, %v; want one refusal address", addrs, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.ContainsFunc(evs, func(e Event) bool { return e.Name == "other.test" && e.Decision == "deny" }) {
		t.Errorf("no deny event for other.test in %+v", evs)
	}
}

// FuzzDNSAnswer: any datagram either gets no answer or a well-formed response
// with the query's ID, never a non-fake address, and never an address of the
// allowed range for a name the policy does not allow.
func FuzzDNSAnswer(f *testing.F) {
	f.Add(query(f, "allowed.test.", dnsmessage.TypeA))
	f.Add(query(f, "other.test.", dnsmessage.TypeA))
	f.Add(query(f, "allowed.test.", dnsmessage.TypeAAAA))
	f.Add([]byte{0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0})
	pol := mustPolicy(f, flags{allow: []string{"allowed.test", "*.w.test"}})
	d := NewDNS(pol, NewFakeIPs(), nil)
	f.Fuzz(func(t *testing.T, q []byte) {
		resp, _, ok := d.Answer(q)
		if !ok {
			return
		}
		var p dnsmessage.Parser
		h, err := p.Start(resp)
		if err != nil {
			t.Fatalf("unparsable response: %v", err)
		}
		if !h.Response || len(q) < 2 || h.ID != uint16(q[0])<<8|uint16(q[1]) {
			t.Fatalf("bad response header %+v", h)
		}
		p.SkipAllQuestions()
		as, err := p.AllAnswers()
		if err != nil {
			t.Fatalf("answers: %v", err)
		}
		for _, a := range as {
			ar, ok := a.Body.(*dnsmessage.AResource)
			if !ok {
				t.Fatalf("non-A answer %v", a)
			}
			ip := netip.AddrFrom4(ar.A)
			if !FakeRange.Contains(ip) {
				t.Fatalf("real address in answer")
			}
			if AllowedRange.Contains(ip) != pol.Resolvable(a.Header.Name.String()) {
				t.Fatalf("answered %q with %v", a.Header.Name, ip)
			}
		}
	})
}

// BenchmarkDNSAnswer measures the latency of one query over UDP loopback
// (client send -> answer received) and reports p50/p99.
func BenchmarkDNSAnswer(b *testing.B) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	d := NewDNS(mustPolicy(b, flags{allow: []string{"*.bench.test"}}), NewFakeIPs(), func(Event) {})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go d.Serve(ctx, pc)
	c, err := net.Dial("udp", pc.LocalAddr().String())
	if err != nil {
		b.Fatal(err)
	}
	q := query(b, "api.bench.test.", dnsmessage.TypeA)
	buf := make([]byte, 512)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		c.Write(q)
		if _, err := c.Read(buf); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
