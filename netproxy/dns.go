package netproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// fakeTTL is the TTL of fake answers. Fake addresses never change during a run,
// so any TTL is correct; a short one keeps caches in long-lived sandboxes small.
const fakeTTL = 60

// DNS answers the sandbox's queries from the Policy and never forwards
// anything: the only resolver the sandbox has is this one, and it knows only
// allowed names.
type DNS struct {
	Policy  *Policy
	Fakes   *FakeIPs
	OnEvent func(Event) // may be nil
}

// NewDNS returns a DNS server for the policy, filling fakes.
func NewDNS(p *Policy, fakes *FakeIPs, onEvent func(Event)) *DNS {
	return &DNS{Policy: p, Fakes: fakes, OnEvent: onEvent}
}

// Serve answers queries arriving on pc until ctx is done or pc fails. It
// closes pc when ctx is done. Malformed datagrams are dropped without answer.
func (d *DNS) Serve(ctx context.Context, pc net.PacketConn) error {
	stop := context.AfterFunc(ctx, func() { pc.Close() })
	defer stop()
	buf := make([]byte, 65535)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("dns: read: %w", err)
		}
		resp, ev, ok := d.Answer(buf[:n])
		if !ok {
			continue
		}
		if _, err := pc.WriteTo(resp, from); err != nil && ctx.Err() != nil {
			return nil
		}
		if d.OnEvent != nil {
			ev.Client = from.String()
			d.OnEvent(ev)
		}
	}
}

// Answer builds the response to one query datagram. ok is false when the
// datagram is not a query worth answering (a response, or too mangled to
// echo its ID); then nothing is sent. The returned Event describes the answer.
//
// The datagram is read and the response written here rather than with x/net's
// dnsmessage, whose package init (four maps) was the largest of the binary
// and ran in every jail process (issue 16). Both read names the same way
// (FuzzDNSMatchesLibrary compares them byte for byte).
func (d *DNS) Answer(query []byte) (resp []byte, ev Event, ok bool) {
	ev = Event{Time: time.Now(), Type: "dns", Decision: decDeny}
	h, ok := readDNSHeader(query)
	if !ok || h.bits&dnsQR != 0 {
		return nil, ev, false
	}
	opcode := h.bits >> 11 & 0xF
	rh := dnsHeader{id: h.id, bits: dnsQR | opcode<<11 | h.bits&dnsRD | dnsRA}
	q, n, err := readQuestions(query, int(h.qdcount))
	if err != nil || n != 1 || opcode != 0 {
		// RFC 9619: exactly one question. Anything else (or an opcode
		// other than QUERY) is refused without looking further.
		rh.bits |= dnsFormErr
		if err == nil && opcode != 0 {
			rh.bits = rh.bits&^0xF | dnsNotImp
		}
		ev.Reason = "malformed or unsupported query"
		return buildDNS(rh, nil, nil), ev, true
	}
	ev.QType = qtypeString(q.qtype)
	name, valid := NormalizeName(q.name)
	ev.Name = name
	if !valid {
		ev.Name = q.name
	}
	switch {
	case q.class != dnsClassINET || !valid:
		rh.bits |= dnsNXDomain
		ev.Reason = "not a valid host name (NXDOMAIN)"
		return buildDNS(rh, &q, nil), ev, true
	case !d.Policy.Resolvable(name):
		// A refused name resolves too, to an address of RefusedRange that
		// leads only to jail: the client connects and hears "refused" in
		// its own protocol (an HTTP 403 naming the flag, a TLS alert)
		// instead of NXDOMAIN, which npm, pip and agent CLIs retry for a
		// minute or more. Nothing is forwarded either way.
		ev.Reason, ev.Public = reasonNotAllowedDNS, reasonNotAllowedDNS
		ev.Hint = d.Policy.Hint(name, netip.Addr{}, 0)
		if q.qtype != dnsTypeA {
			return buildDNS(rh, &q, nil), ev, true // NODATA, as for allowed names
		}
		a := d.Fakes.AssignRefused(name)
		ev.Addr = a.String()
		return buildDNS(rh, &q, &a), ev, true
	case q.qtype == dnsTypeA:
		a, err := d.Fakes.Assign(name)
		if err != nil {
			rh.bits |= dnsServFail
			ev.Reason = err.Error()
			return buildDNS(rh, &q, nil), ev, true
		}
		ev.Decision, ev.Addr, ev.Reason = decAllow, a.String(), "fake address"
		return buildDNS(rh, &q, &a), ev, true
	default:
		// NOERROR with no answer ("NODATA"): the name exists but has no
		// record of this type. AAAA lands here because IPv6 is not offered;
		// HTTPS/SVCB/MX too. NXDOMAIN here would tell stub resolvers that
		// query HTTPS or AAAA first that the name does not exist at all.
		ev.Decision, ev.Reason = decAllow, "no data for this type"
		return buildDNS(rh, &q, nil), ev, true
	}
}

// DNS header bits and codes (RFC 1035 4.1.1).
const (
	dnsQR = 1 << 15
	dnsRD = 1 << 8
	dnsRA = 1 << 7

	dnsFormErr  = 1
	dnsServFail = 2
	dnsNXDomain = 3
	dnsNotImp   = 4

	dnsTypeA     = 1
	dnsClassINET = 1

	// dnsNameMax is the longest name in presentation form, with its
	// trailing dot (RFC 1035 3.1: 255 octets on the wire).
	dnsNameMax = 254
	// dnsMaxPointers bounds the compression pointers one name may follow:
	// a chain of them can loop.
	dnsMaxPointers = 10
)

var errDNSMalformed = errors.New("dns: malformed question")

type dnsHeader struct {
	id, bits, qdcount uint16
}

func readDNSHeader(b []byte) (dnsHeader, bool) {
	if len(b) < 12 {
		return dnsHeader{}, false
	}
	return dnsHeader{id: be16(b[0:]), bits: be16(b[2:]), qdcount: be16(b[4:])}, true
}

func be16(b []byte) uint16 { return uint16(b[0])<<8 | uint16(b[1]) }

// dnsQuestion is a question as read: name in presentation form with its
// trailing dot, not escaped (a label holding a dot is refused on reading).
type dnsQuestion struct {
	name         string
	qtype, class uint16
}

// readQuestions reads count questions after the header and returns the
// first and how many there were. Any malformed one is an error.
func readQuestions(b []byte, count int) (first dnsQuestion, n int, err error) {
	off := 12
	for ; n < count; n++ {
		var q dnsQuestion
		q.name, off, err = readDNSName(b, off)
		if err != nil {
			return dnsQuestion{}, 0, err
		}
		if off+4 > len(b) {
			return dnsQuestion{}, 0, errDNSMalformed
		}
		q.qtype, q.class = be16(b[off:]), be16(b[off+2:])
		off += 4
		if n == 0 {
			first = q
		}
	}
	return first, n, nil
}

// readDNSName reads the name at off (RFC 1035 4.1.4: labels, or a pointer
// to an earlier or later name) and returns it with the offset after it.
// Like dnsmessage it refuses a dot inside a label (which would read as two
// labels), the reserved label types, more than dnsMaxPointers pointers,
// and names over dnsNameMax.
func readDNSName(b []byte, off int) (string, int, error) {
	var name [dnsNameMax + 64]byte // room for one label past the limit
	n, cur, next, ptrs := 0, off, -1, 0
	for {
		if cur >= len(b) {
			return "", off, errDNSMalformed
		}
		c := int(b[cur])
		cur++
		switch c & 0xC0 {
		case 0x00:
			if c == 0 {
				if n == 0 {
					name[0], n = '.', 1
				}
				if next < 0 {
					next = cur
				}
				return string(name[:n]), next, nil
			}
			end := cur + c
			if end > len(b) {
				return "", off, errDNSMalformed
			}
			for _, v := range b[cur:end] {
				if v == '.' {
					return "", off, errDNSMalformed
				}
			}
			if n+c+1 > dnsNameMax {
				return "", off, errDNSMalformed
			}
			n += copy(name[n:], b[cur:end])
			name[n] = '.'
			n++
			cur = end
		case 0xC0:
			if cur >= len(b) {
				return "", off, errDNSMalformed
			}
			if next < 0 {
				next = cur + 1
			}
			if ptrs++; ptrs > dnsMaxPointers {
				return "", off, errDNSMalformed
			}
			cur = (c&0x3F)<<8 | int(b[cur])
		default: // 0x40 and 0x80 are reserved
			return "", off, errDNSMalformed
		}
	}
}

// buildDNS writes a response: the header, the question when there is one,
// and an A record for it when a is set. Its name points back at the
// question's (RFC 1035 4.1.4), as dnsmessage's compression did.
func buildDNS(h dnsHeader, q *dnsQuestion, a *netip.Addr) []byte {
	out := make([]byte, 12, 128)
	out[0], out[1] = byte(h.id>>8), byte(h.id)
	out[2], out[3] = byte(h.bits>>8), byte(h.bits)
	if q == nil {
		return out
	}
	out[5] = 1 // QDCOUNT
	if q.name == "." {
		out = append(out, 0)
	} else {
		// Labels of at most 63 bytes, none empty, no dot inside: as read.
		for label := range strings.SplitSeq(strings.TrimSuffix(q.name, "."), ".") {
			out = append(out, byte(len(label)))
			out = append(out, label...)
		}
		out = append(out, 0)
	}
	out = append(out, byte(q.qtype>>8), byte(q.qtype), byte(q.class>>8), byte(q.class))
	if a == nil {
		return out
	}
	out[7] = 1 // ANCOUNT
	if q.name == "." {
		out = append(out, 0)
	} else {
		out = append(out, 0xC0, 12) // the question's name, at offset 12
	}
	ip := a.As4()
	out = append(out, 0, dnsTypeA, 0, dnsClassINET,
		byte(fakeTTL>>24), byte(fakeTTL>>16), byte(fakeTTL>>8), byte(fakeTTL&0xFF),
		0, 4, ip[0], ip[1], ip[2], ip[3])
	return out
}

// qtypeString names a query type for the trail as dnsmessage's Type.String
// did without its "Type" prefix: the number for the others.
func qtypeString(t uint16) string {
	switch t {
	case 1:
		return "A"
	case 2:
		return "NS"
	case 5:
		return "CNAME"
	case 6:
		return "SOA"
	case 11:
		return "WKS"
	case 12:
		return "PTR"
	case 13:
		return "HINFO"
	case 14:
		return "MINFO"
	case 15:
		return "MX"
	case 16:
		return "TXT"
	case 28:
		return "AAAA"
	case 33:
		return "SRV"
	case 41:
		return "OPT"
	case 252:
		return "AXFR"
	case 255:
		return "ALL"
	}
	return strconv.Itoa(int(t))
}
