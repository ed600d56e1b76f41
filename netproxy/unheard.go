package netproxy

import (
	"net/netip"
	"time"
)

// Unheard records the refusal of a TCP connect that no listener of
// jail's heard: under --net none, a port of a refused name's address
// other than the refusal listeners', which the sandbox's loopback resets
// (nsnet's reset watch sees the reset). Without it a database client,
// ssh -p 2222 or git:// heard only "connection refused", which reads as
// a server that is down; the user now hears which name jail refused and
// the flag that allows it, as from a listener. The event is emitted
// (OnEvent) as a listener's refusal would be, mode "connect"; the
// client's error stays the kernel's. A raw address is decided as a
// listener decides one. heard says which flows a listener answers itself
// (not said twice). It reports whether an event was emitted: none for
// loopback, an unspecified address or a flow heard.
//
// What was refused is said, never decided here: the kernel refused the
// flow already.
func (p *Proxy) Unheard(dst netip.AddrPort, heard func(netip.AddrPort) bool) bool {
	ip := dst.Addr().Unmap()
	dst = netip.AddrPortFrom(ip, dst.Port())
	if !ip.IsValid() || ip.IsLoopback() || ip.IsUnspecified() || (heard != nil && heard(dst)) {
		return false
	}
	f := &flow{start: time.Now(), mode: "connect", dst: dst}
	var d Decision
	switch {
	case p.Fakes.Contains(ip):
		name, ok := p.Fakes.Lookup(ip)
		if !ok {
			d = Decision{Reason: "fake address not handed out by jail's DNS"}
			break
		}
		f.name = name
		d = p.decide(name, netip.Addr{}, dst.Port())
	case !ip.Is4():
		// As the transparent proxy says of an IPv6 flow: only a name's
		// (fake, IPv4) address is ever offered a way out.
		d = Decision{Reason: "IPv6 is not offered"}
	default:
		d = p.decide("", ip, dst.Port())
	}
	if d.Allow {
		// Cannot happen under --net none (an empty policy): a listener
		// would have relayed nothing either.
		d = Decision{Reason: reasonNotAllowed}
	}
	p.emitRefusal(f, p.Policy.Expected(f.name, d))
	return true
}
