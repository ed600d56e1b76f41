package nsnet

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

// segment is an IPv4 packet holding a TCP header: src:sport -> dst:dport
// with flags, an IP header of ihl 32-bit words (options zeroed).
func segment(src, dst netip.AddrPort, flags byte, ihl int) []byte {
	p := make([]byte, ihl*4+20)
	p[0] = 0x40 | byte(ihl)
	binary.BigEndian.PutUint16(p[2:], uint16(len(p)))
	p[8], p[9] = 64, 6
	copy(p[12:16], src.Addr().AsSlice())
	copy(p[16:20], dst.Addr().AsSlice())
	t := p[ihl*4:]
	binary.BigEndian.PutUint16(t[0:], src.Port())
	binary.BigEndian.PutUint16(t[2:], dst.Port())
	t[12] = 5 << 4
	t[13] = flags
	return p
}

func TestParseReset(t *testing.T) {
	fake := netip.MustParseAddrPort("198.19.0.1:5432")
	client := netip.MustParseAddrPort("127.0.0.1:40000")
	loop := netip.MustParseAddrPort("127.0.0.1:11434")
	frag := segment(fake, client, tcpRST|tcpACK, 5)
	frag[7] = 1 // a later fragment (offset 8 bytes): no TCP header of its own
	udp := segment(fake, client, tcpRST|tcpACK, 5)
	udp[9] = 17
	for _, tt := range []struct {
		name string
		p    []byte
		want netip.AddrPort // invalid: not a reset
	}{
		{"the kernel's reset", segment(fake, client, tcpRST|tcpACK, 5), fake},
		{"with IP options", segment(fake, client, tcpRST|tcpACK, 6), fake},
		{"a plain RST", segment(fake, client, tcpRST, 5), netip.AddrPort{}},
		{"the loopback's refusal", segment(loop, client, tcpRST|tcpACK, 5), loop},
		{"the loopback's abort", func() []byte { p := segment(loop, client, tcpRST|tcpACK, 5); p[24+3] = 1; return p }(), netip.AddrPort{}},
		{"a SYN", segment(client, fake, 0x02, 5), netip.AddrPort{}},
		{"a fragment", frag, netip.AddrPort{}},
		{"UDP", udp, netip.AddrPort{}},
		{"cut short", segment(fake, client, tcpRST|tcpACK, 5)[:33], netip.AddrPort{}},
		{"IPv6", append([]byte{0x60}, make([]byte, 60)...), netip.AddrPort{}},
		{"an IHL below 5", func() []byte { p := segment(fake, client, tcpRST|tcpACK, 5); p[0] = 0x44; return p }(), netip.AddrPort{}},
		{"empty", nil, netip.AddrPort{}},
	} {
		got, ok := ParseReset(tt.p)
		if ok != tt.want.IsValid() || got != tt.want {
			t.Errorf("%s: ParseReset = %v, %v; want %v", tt.name, got, ok, tt.want)
		}
	}
}

// FuzzParseReset: any input is read without a panic, and a reset it
// names is an IPv4 address and a port read from within the input.
func FuzzParseReset(f *testing.F) {
	f.Add(segment(netip.MustParseAddrPort("198.19.0.1:5432"), netip.MustParseAddrPort("127.0.0.1:40000"), tcpRST|tcpACK, 5))
	f.Add([]byte{0x4f})
	f.Fuzz(func(t *testing.T, p []byte) {
		got, ok := ParseReset(p)
		if ok && (!got.Addr().Is4() || len(p) < 34) {
			t.Fatalf("ParseReset(%x) = %v from a packet too short to hold it", p, got)
		}
	})
}
