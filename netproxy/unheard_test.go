package netproxy

import (
	"net/netip"
	"strings"
	"testing"
)

// TestUnheard: a connect no listener hears is said as a listener's
// refusal would be: a refused name's other port with the allow-domain
// that allows it, a raw address with its --allow-ip, IPv6 as not
// offered, an address jail's DNS never handed out as such; loopback, an
// unspecified address and a flow a listener hears are not said.
func TestUnheard(t *testing.T) {
	h := newHarness(t, flags{})
	refused := h.fakes.AssignRefused("db.example.com") // what jail's DNS answers for it
	heard := func(a netip.AddrPort) bool { return a.Port() == 443 && h.p.Fakes.Contains(a.Addr()) }
	for _, tt := range []struct {
		dst          string
		said         bool
		name, reason string
		hint         string
	}{
		{netip.AddrPortFrom(refused, 5432).String(), true, "db.example.com", reasonNotAllowed, "`allow-domain` db.example.com"},
		{"[::ffff:" + refused.String() + "]:5432", true, "db.example.com", reasonNotAllowed, "`allow-domain` db.example.com"},
		{"192.0.2.1:53", true, "", "raw IP address", "`allow-ip` 192.0.2.1/32:53"},
		{"[2001:db8::1]:443", true, "", "IPv6 is not offered", ""},
		{"198.19.200.1:80", true, "", "not handed out", ""},
		{netip.AddrPortFrom(refused, 443).String(), false, "", "", ""},
		{"127.0.0.1:5432", false, "", "", ""},
		{"[::1]:5432", false, "", "", ""},
		{"0.0.0.0:80", false, "", "", ""},
	} {
		before := len(h.eventsNow())
		said := h.p.Unheard(netip.MustParseAddrPort(tt.dst), heard)
		evs := h.eventsNow()[before:]
		if said != tt.said || len(evs) != map[bool]int{false: 0, true: 1}[tt.said] {
			t.Errorf("%s: said %v with %d events, want %v", tt.dst, said, len(evs), tt.said)
			continue
		}
		if !said {
			continue
		}
		ev := evs[0]
		if ev.Decision != "deny" || ev.Mode != "connect" || ev.Name != tt.name || !strings.Contains(ev.Reason, tt.reason) || !strings.Contains(ev.Hint, tt.hint) {
			t.Errorf("%s: event %+v, want a deny of %q for %q hinting %q", tt.dst, ev, tt.name, tt.reason, tt.hint)
		}
	}
}

// eventsNow is a copy of the events recorded so far.
func (h *harness) eventsNow() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Event(nil), h.events...)
}
