package netproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"golang.org/x/net/dns/dnsmessage"
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
func (d *DNS) Answer(query []byte) (resp []byte, ev Event, ok bool) {
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
		return build(rh, nil, nil), ev, true
	}
	q := qs[0]
	ev.QType = qtypeString(q.Type)
	name, valid := NormalizeName(q.Name.String())
	ev.Name = name
	if !valid {
		ev.Name = q.Name.String()
	}
	switch {
	case q.Class != dnsmessage.ClassINET || !valid:
		rh.RCode = dnsmessage.RCodeNameError
		ev.Reason = "not a valid host name (NXDOMAIN)"
		return build(rh, &q, nil), ev, true
	case !d.Policy.Resolvable(name):
		// A refused name resolves too, to an address of RefusedRange that
		// leads only to jail: the client connects and hears "refused" in
		// its own protocol (an HTTP 403 naming the flag, a TLS alert)
		// instead of NXDOMAIN, which npm, pip and agent CLIs retry for a
		// minute or more. Nothing is forwarded either way.
		ev.Reason, ev.Public = reasonNotAllowedDNS, reasonNotAllowedDNS
		ev.Hint = d.Policy.Hint(name, netip.Addr{}, 0)
		if q.Type != dnsmessage.TypeA {
			return build(rh, &q, nil), ev, true // NODATA, as for allowed names
		}
		a := d.Fakes.AssignRefused(name)
		ev.Addr = a.String()
		return build(rh, &q, &a), ev, true
	case q.Type == dnsmessage.TypeA:
		a, err := d.Fakes.Assign(name)
		if err != nil {
			rh.RCode = dnsmessage.RCodeServerFailure
			ev.Reason = err.Error()
			return build(rh, &q, nil), ev, true
		}
		ev.Decision, ev.Addr, ev.Reason = decAllow, a.String(), "fake address"
		return build(rh, &q, &a), ev, true
	default:
		// NOERROR with no answer ("NODATA"): the name exists but has no
		// record of this type. AAAA lands here because IPv6 is not offered;
		// HTTPS/SVCB/MX too. NXDOMAIN here would tell stub resolvers that
		// query HTTPS or AAAA first that the name does not exist at all.
		ev.Decision, ev.Reason = decAllow, "no data for this type"
		return build(rh, &q, nil), ev, true
	}
}

func build(h dnsmessage.Header, q *dnsmessage.Question, a *netip.Addr) []byte {
	b := dnsmessage.NewBuilder(make([]byte, 0, 128), h)
	b.EnableCompression()
	// Errors below can only come from a name longer than the wire allows,
	// which Parser has already refused; fall back to a bare header then.
	if q != nil {
		if err := b.StartQuestions(); err != nil {
			return headerOnly(h)
		}
		if err := b.Question(*q); err != nil {
			return headerOnly(h)
		}
	}
	if a != nil {
		if err := b.StartAnswers(); err != nil {
			return headerOnly(h)
		}
		err := b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: fakeTTL},
			dnsmessage.AResource{A: a.As4()})
		if err != nil {
			return headerOnly(h)
		}
	}
	out, err := b.Finish()
	if err != nil {
		return headerOnly(h)
	}
	return out
}

func headerOnly(h dnsmessage.Header) []byte {
	h.RCode = dnsmessage.RCodeServerFailure
	b := dnsmessage.NewBuilder(nil, h)
	out, _ := b.Finish()
	return out
}

func qtypeString(t dnsmessage.Type) string {
	s := t.String()
	if len(s) > 4 && s[:4] == "Type" {
		return s[4:]
	}
	return s
}
