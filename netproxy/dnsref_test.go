package netproxy

import (
	"bytes"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// answerRef is the server's answer as it was built with x/net's dnsmessage
// before dns.go got its own reader and writer (issue 16: the library's
// package init was the largest of the binary, paid by every jail process).
// FuzzDNSMatchesLibrary holds the two to the same bytes for every datagram.
func (d *DNS) answerRef(query []byte) (resp []byte, ev Event, ok bool) {
	ev = Event{Time: time.Now(), Type: "dns", Decision: decDeny}
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil || h.Response {
		return nil, ev, false
	}
	rh := dnsmessage.Header{
		ID:                 h.ID,
		Response:           true,
		OpCode:             h.OpCode,
		RecursionDesired:   h.RecursionDesired,
		RecursionAvailable: true,
	}
	qs, err := p.AllQuestions()
	if err != nil || len(qs) != 1 || h.OpCode != 0 {
		// RFC 9619: exactly one question. Anything else (or an opcode
		// other than QUERY) is refused without looking further.
		rh.RCode = dnsmessage.RCodeFormatError
		if err == nil && h.OpCode != 0 {
			rh.RCode = dnsmessage.RCodeNotImplemented
		}
		ev.Reason = "malformed or unsupported query"
		return buildRef(rh, nil, nil), ev, true
	}
	q := qs[0]
	ev.QType = qtypeStringRef(q.Type)
	name, valid := NormalizeName(q.Name.String())
	ev.Name = name
	if !valid {
		ev.Name = q.Name.String()
	}
	switch {
	case q.Class != dnsmessage.ClassINET || !valid:
		rh.RCode = dnsmessage.RCodeNameError
		ev.Reason = "not a valid host name (NXDOMAIN)"
		return buildRef(rh, &q, nil), ev, true
	case !d.Policy.Resolvable(name):
		// A refused name resolves too, to an address of RefusedRange that
		// leads only to jail: the client connects and hears "refused" in
		// its own protocol (an HTTP 403 naming the flag, a TLS alert)
		// instead of NXDOMAIN, which npm, pip and agent CLIs retry for a
		// minute or more. Nothing is forwarded either way.
		ev.Reason, ev.Public = reasonNotAllowedDNS, reasonNotAllowedDNS
		ev.Hint = d.Policy.Hint(name, netip.Addr{}, 0)
		if q.Type != dnsmessage.TypeA {
			return buildRef(rh, &q, nil), ev, true // NODATA, as for allowed names
		}
		a := d.Fakes.AssignRefused(name)
		ev.Addr = a.String()
		return buildRef(rh, &q, &a), ev, true
	case q.Type == dnsmessage.TypeA:
		a, err := d.Fakes.Assign(name)
		if err != nil {
			rh.RCode = dnsmessage.RCodeServerFailure
			ev.Reason = err.Error()
			return buildRef(rh, &q, nil), ev, true
		}
		ev.Decision, ev.Addr, ev.Reason = decAllow, a.String(), "fake address"
		return buildRef(rh, &q, &a), ev, true
	default:
		// NOERROR with no answer ("NODATA"): the name exists but has no
		// record of this type. AAAA lands here because IPv6 is not offered;
		// HTTPS/SVCB/MX too. NXDOMAIN here would tell stub resolvers that
		// query HTTPS or AAAA first that the name does not exist at all.
		ev.Decision, ev.Reason = decAllow, "no data for this type"
		return buildRef(rh, &q, nil), ev, true
	}
}

func buildRef(h dnsmessage.Header, q *dnsmessage.Question, a *netip.Addr) []byte {
	b := dnsmessage.NewBuilder(make([]byte, 0, 128), h)
	b.EnableCompression()
	// Errors below can only come from a name longer than the wire allows,
	// which Parser has already refused; fall back to a bare header then.
	if q != nil {
		if err := b.StartQuestions(); err != nil {
			return headerOnlyRef(h)
		}
		if err := b.Question(*q); err != nil {
			return headerOnlyRef(h)
		}
	}
	if a != nil {
		if err := b.StartAnswers(); err != nil {
			return headerOnlyRef(h)
		}
		err := b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: fakeTTL},
			dnsmessage.AResource{A: a.As4()})
		if err != nil {
			return headerOnlyRef(h)
		}
	}
	out, err := b.Finish()
	if err != nil {
		return headerOnlyRef(h)
	}
	return out
}

func headerOnlyRef(h dnsmessage.Header) []byte {
	h.RCode = dnsmessage.RCodeServerFailure
	b := dnsmessage.NewBuilder(nil, h)
	out, _ := b.Finish()
	return out
}

func qtypeStringRef(t dnsmessage.Type) string {
	s := t.String()
	if len(s) > 4 && s[:4] == "Type" {
		return s[4:]
	}
	return s
}

// dnsSeeds are datagrams that probe the name reader's edges: compression
// pointers (forward, backward, looping, past the end), labels with dots or
// reserved prefixes, names at and over the length limits, truncation
// everywhere, counts that lie, other opcodes and the response bit.
func dnsSeeds(t testing.TB) [][]byte {
	hdr := func(id, bits, qd, an, ns, ar uint16) []byte {
		return []byte{byte(id >> 8), byte(id), byte(bits >> 8), byte(bits), byte(qd >> 8), byte(qd),
			byte(an >> 8), byte(an), byte(ns >> 8), byte(ns), byte(ar >> 8), byte(ar)}
	}
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	label := func(n int, c byte) []byte { return append([]byte{byte(n)}, bytes.Repeat([]byte{c}, n)...) }
	name := func(labels ...[]byte) []byte { return append(cat(labels...), 0) }
	tail := []byte{0, 1, 0, 1} // type A, class IN
	allowed := name([]byte("\x07allowed"), []byte("\x04test"))
	var long []byte // 4 x 63-byte labels: 256 bytes with dots, over the limit
	for range 4 {
		long = append(long, label(63, 'a')...)
	}
	var limit []byte // 3 x 63 + 61: 253 characters and a dot = 254, the limit
	for range 3 {
		limit = append(limit, label(63, 'b')...)
	}
	over := append(slices.Clone(limit), label(62, 'b')...) // 255: one over
	limit = append(limit, label(61, 'b')...)
	seeds := [][]byte{
		nil, {0}, hdr(1, 0, 1, 0, 0, 0)[:11],
		hdr(1, 0x0100, 1, 0, 0, 0),                         // a question promised, none there
		cat(hdr(2, 0x0100, 1, 0, 0, 0), allowed, tail),     // allowed A
		cat(hdr(3, 0x0100, 1, 0, 0, 0), allowed, tail[:3]), // class cut short
		cat(hdr(4, 0x0100, 1, 0, 0, 0), allowed[:5]),       // name cut short
		cat(hdr(5, 0x8100, 1, 0, 0, 0), allowed, tail),     // a response
		cat(hdr(6, 0x2100, 1, 0, 0, 0), allowed, tail),     // opcode 4 (NOTIFY)
		cat(hdr(7, 0x2100, 2, 0, 0, 0), allowed, tail),     // opcode 4, second question missing
		cat(hdr(8, 0x0100, 2, 0, 0, 0), allowed, tail, allowed, tail),
		cat(hdr(9, 0x0100, 0, 0, 0, 0), allowed, tail),                                                                           // no question counted
		cat(hdr(10, 0x0100, 1, 0, 0, 1), allowed, tail, []byte{0, 0, 41, 4, 0xd0, 0, 0, 0, 0, 0, 0}),                             // EDNS OPT
		cat(hdr(11, 0x0100, 1, 0, 0, 0), name([]byte("\x03a.b"), []byte("\x04test")), tail),                                      // a dot inside a label
		cat(hdr(12, 0x0100, 1, 0, 0, 0), []byte{0x40, 1, 'a', 0}, tail),                                                          // reserved prefix 0x40
		cat(hdr(13, 0x0100, 1, 0, 0, 0), []byte{0x80, 1, 'a', 0}, tail),                                                          // reserved prefix 0x80
		cat(hdr(14, 0x0100, 1, 0, 0, 0), []byte{0xC0, 12}, tail),                                                                 // pointer to itself: a loop
		cat(hdr(15, 0x0100, 1, 0, 0, 0), []byte{0xC0, 16, 0, 0, 7, 'a', 'l', 'l', 'o', 'w', 'e', 'd', 4, 't', 'e', 's', 't', 0}), // forward pointer
		cat(hdr(16, 0x0100, 1, 0, 0, 0), []byte{0xC0}),                                                                           // half a pointer
		cat(hdr(17, 0x0100, 1, 0, 0, 0), []byte{0xC0, 0xFF}, tail),                                                               // pointer past the end
		cat(hdr(18, 0x0100, 1, 0, 0, 0), []byte{3, 'w', 'w', 'w', 0xC0, 30}, tail, []byte{0}, allowed),                           // pointer into the datagram's tail
		cat(hdr(19, 0x0100, 1, 0, 0, 0), []byte{0}, tail),                                                                        // the root
		cat(hdr(20, 0x0100, 1, 0, 0, 0), name(long), tail),
		cat(hdr(21, 0x0100, 1, 0, 0, 0), name(limit), tail),
		cat(hdr(21, 0x0100, 1, 0, 0, 0), name(over), tail),
		cat(hdr(22, 0x0100, 1, 0, 0, 0), name([]byte("\x03x\x00y"), []byte("\x04test")), tail), // a NUL in a label
		cat(hdr(23, 0x0100, 1, 0, 0, 0), allowed, []byte{0, 28, 0, 1}),                         // AAAA
		cat(hdr(24, 0x0100, 1, 0, 0, 0), allowed, []byte{0, 1, 0, 3}),                          // CHAOS
		cat(hdr(25, 0x0100, 1, 0, 0, 0), name([]byte("\x05other"), []byte("\x04test")), tail),  // refused name
		cat(hdr(26, 0x0100, 1, 0, 0, 0), name([]byte("\x05other"), []byte("\x04test")), []byte{0, 65, 0, 1}),
		cat(hdr(27, 0x0100, 1, 0, 0, 0), name([]byte("\x03API"), []byte("\x01w"), []byte("\x04TEST")), tail), // capitals, wildcard
		cat(hdr(28, 0x7F8F, 1, 0, 0, 0), allowed, tail),                                                      // every flag but QR, rcode 15
	}
	// Eleven pointers in a chain: one more than the library follows.
	chain := hdr(29, 0x0100, 1, 0, 0, 0)
	for i := range 11 {
		chain = append(chain, 0xC0, byte(12+2*(i+1)))
	}
	chain = append(chain, allowed...)
	seeds = append(seeds, append(chain, tail...))
	return seeds
}

// FuzzDNSMatchesLibrary: for every datagram the server's own reader and
// writer give exactly the bytes, the verdict and the event that x/net's
// dnsmessage gave (answerRef), so that dropping the library changed
// nothing the sandbox can observe.
func FuzzDNSMatchesLibrary(f *testing.F) {
	for _, s := range dnsSeeds(f) {
		f.Add(s)
	}
	f.Add(query(f, "allowed.test.", dnsmessage.TypeA))
	flags := flags{allow: []string{"allowed.test", "*.w.test"}}
	got := NewDNS(mustPolicy(f, flags), NewFakeIPs(), nil)
	want := NewDNS(mustPolicy(f, flags), NewFakeIPs(), nil)
	f.Fuzz(func(t *testing.T, q []byte) {
		compareDNS(t, got, want, q)
	})
}

func compareDNS(t *testing.T, got, want *DNS, q []byte) {
	t.Helper()
	r1, e1, ok1 := got.Answer(q)
	r2, e2, ok2 := want.answerRef(q)
	e1.Time, e2.Time = time.Time{}, time.Time{}
	if ok1 != ok2 || !bytes.Equal(r1, r2) || !reflect.DeepEqual(e1, e2) {
		t.Fatalf("query %x:\n own     %v %x %+v\n library %v %x %+v", q, ok1, r1, e1, ok2, r2, e2)
	}
}

// TestDNSSeedsMatchLibrary runs the adversarial seeds without -fuzz.
func TestDNSSeedsMatchLibrary(t *testing.T) {
	flags := flags{allow: []string{"allowed.test", "*.w.test"}}
	got := NewDNS(mustPolicy(t, flags), NewFakeIPs(), nil)
	want := NewDNS(mustPolicy(t, flags), NewFakeIPs(), nil)
	for _, q := range dnsSeeds(t) {
		compareDNS(t, got, want, q)
	}
}
