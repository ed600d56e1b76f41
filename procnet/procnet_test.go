package procnet

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/sockdiag"
)

// printed is a as the tables print it: each 32-bit word of the address
// as the number its bytes make in memory, the port, in hex.
func printed(a netip.AddrPort) string {
	raw := a.Addr().AsSlice()
	var s string
	for w := 0; w < len(raw); w += 4 {
		s += fmt.Sprintf("%08X", binary.NativeEndian.Uint32(raw[w:w+4]))
	}
	return s + fmt.Sprintf(":%04X", a.Port())
}

func TestParse(t *testing.T) {
	listen := []netip.AddrPort{
		netip.MustParseAddrPort("127.0.0.1:11434"),
		netip.MustParseAddrPort("0.0.0.0:5432"),
		netip.MustParseAddrPort("10.1.2.3:80"),
		netip.MustParseAddrPort("[::1]:3845"),
		netip.MustParseAddrPort("[::]:22"),
		netip.MustParseAddrPort("[2001:db8::7]:443"),
	}
	table := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	for i, a := range listen {
		table += " " + string(rune('0'+i)) + ": " + printed(a) + " 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1234 1\n"
	}
	// Not listening: an established connection, a line cut short, junk.
	table += " 9: " + printed(netip.MustParseAddrPort("127.0.0.1:9999")) + " 0100007F:D431 01 00000000:00000000\n"
	table += " 10: 0100007F:1F90\n 11: ZZ00007F:1F90 00000000:0000 0A\n 12: 0100007F:1F9 00000000:0000 0A\n 13: 0100007F00:1F90 00000000:0000 0A"
	if got := Parse([]byte(table)); !slices.Equal(got, listen) {
		t.Errorf("Parse = %v, want %v", got, listen)
	}
}

// TestListens: a socket this test listens on is found in its own
// namespace's table, at its address and port, over IPv4 and IPv6; a
// closed one is not.
func TestListens(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6"} {
		addr := "127.0.0.1:0"
		if network == "tcp6" {
			addr = "[::1]:0"
		}
		ln, err := net.Listen(network, addr)
		if err != nil {
			if network == "tcp6" {
				continue // no IPv6 loopback here: tcp4 is the case that counts
			}
			t.Fatal(err)
		}
		a := netip.MustParseAddrPort(ln.Addr().String())
		loop := func(x netip.Addr) bool { return x.IsLoopback() }
		if !Listens(0, a.Port(), loop) || !slices.Contains(Listeners(0), a) || !slices.Contains(Listeners(os.Getpid()), a) {
			t.Errorf("%v listens, but the table says not: %v", a, Listeners(0))
		}
		if Listens(0, a.Port(), func(x netip.Addr) bool { return x.IsUnspecified() }) {
			t.Errorf("%v is taken as a wildcard listener", a)
		}
		ln.Close()
		if Listens(0, a.Port(), nil) {
			t.Errorf("%v closed, but the table still lists it", a)
		}
	}
}

// FuzzParse: any table is read without a panic, and what it names came
// from a line that says LISTEN.
func FuzzParse(f *testing.F) {
	f.Add([]byte(" 0: 0100007F:2CAA 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1 1\n"))
	f.Add([]byte(" 0: 00000000000000000000000001000000:0016 00000000000000000000000000000000:0000 0A\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := Parse(b)
		if len(got) > strings.Count(string(b), "0A") {
			t.Fatalf("Parse(%q) = %v: more listeners than LISTEN states", b, got)
		}
		for _, a := range got {
			if !a.Addr().Is4() && !a.Addr().Is6() {
				t.Fatalf("Parse(%q) named %v", b, a)
			}
		}
	})
}

// TestDiagMatchesTables: inet_diag and the /proc tables both name a
// socket this test listens on, over IPv4 and IPv6, and neither once it is
// closed (other processes' sockets come and go meanwhile: only this
// test's own are compared).
func TestDiagMatchesTables(t *testing.T) {
	tables := func() []netip.AddrPort {
		var l []netip.AddrPort
		for _, f := range []string{"tcp", "tcp6"} {
			b, err := os.ReadFile("/proc/self/net/" + f)
			if err != nil {
				t.Fatal(err)
			}
			l = append(l, Parse(b)...)
		}
		return l
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0", "0.0.0.0:0"} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			if strings.HasPrefix(addr, "[") {
				continue // no IPv6 loopback here
			}
			t.Fatal(err)
		}
		a := netip.MustParseAddrPort(ln.Addr().String())
		for closed := range 2 {
			diag, err := ownListeners()
			if err != nil {
				t.Fatalf("inet_diag: %v", err)
			}
			inDiag, inTables, want := slices.Contains(diag, a), slices.Contains(tables(), a), closed == 0
			if inDiag != want || inTables != want {
				t.Errorf("%v (closed %v): in inet_diag's answer %v, in the tables %v", a, closed == 1, inDiag, inTables)
			}
			ln.Close()
		}
	}
}

// FuzzParseDiag: any datagram is read without a panic, and what it names
// is an IPv4 or IPv6 address.
func FuzzParseDiag(f *testing.F) {
	msg := make([]byte, sockdiag.HdrLen+diagMsgLen)
	binary.NativeEndian.PutUint32(msg, uint32(len(msg)))
	binary.NativeEndian.PutUint16(msg[4:], 20)
	msg[sockdiag.HdrLen] = 2
	done := make([]byte, sockdiag.HdrLen+4)
	binary.NativeEndian.PutUint32(done, uint32(len(done)))
	binary.NativeEndian.PutUint16(done[4:], sockdiag.MsgDone)
	f.Add(append(msg, done...))
	f.Add(done)
	f.Fuzz(func(t *testing.T, b []byte) {
		got, _, err := parseDiag(b)
		if err != nil && len(got) > 0 {
			t.Fatalf("parseDiag(%x) = %v with an error", b, got)
		}
		for _, a := range got {
			if !a.Addr().Is4() && !a.Addr().Is6() {
				t.Fatalf("parseDiag(%x) named %v", b, a)
			}
		}
	})
}
