//go:build linux

package nsnet

import (
	"net/netip"
	"slices"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// TestFilterResets: the reset watch's kernel filter passes what
// ParseReset names, from the fake range, at a port no listener has, and
// nothing else: the listeners' ports, other sources, SYNs, data, plain
// RSTs, fragments, UDP.
func TestFilterResets(t *testing.T) {
	fake := netip.MustParsePrefix("198.18.0.0/15")
	prog, err := filterResets(fake, RefusalPorts)
	if err != nil {
		t.Fatal(err)
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatal(err)
	}
	client := netip.MustParseAddrPort("127.0.0.1:40000")
	passed := 0
	for _, src := range []string{"198.19.0.1", "198.18.0.7", "198.20.0.1", "127.0.0.1", "10.0.0.1", "198.17.255.255"} {
		for _, port := range []uint16{5432, 22, 80, 443, 8080, 9418, 1} {
			for _, flags := range []byte{tcpRST | tcpACK, tcpRST, 0x02, 0x12, 0x18, tcpRST | tcpACK | 0x08} {
				for _, ihl := range []int{5, 7} {
					from := netip.AddrPortFrom(netip.MustParseAddr(src), port)
					p := segment(from, client, flags, ihl)
					n, err := vm.Run(p)
					if err != nil {
						t.Fatal(err)
					}
					dst, ok := ParseReset(p)
					want := ok && fake.Contains(dst.Addr()) && !slices.Contains(RefusalPorts, dst.Port())
					if (n > 0) != want {
						t.Errorf("reset from %v flags %#x ihl %d: filter kept %d bytes, want kept %v", from, flags, ihl, n, want)
					}
					if n > 0 {
						passed++
						if got, _ := ParseReset(p[:min(n, len(p))]); got != from {
							t.Errorf("what the filter keeps of %v's reset (%d bytes) reads as %v", from, n, got)
						}
					}
				}
			}
		}
	}
	if passed == 0 {
		t.Fatal("the filter passed nothing: the comparison proves nothing")
	}
	frag := segment(netip.MustParseAddrPort("198.19.0.1:5432"), client, tcpRST|tcpACK, 5)
	frag[7] = 1 // a fragment offset
	if n, _ := vm.Run(frag); n != 0 {
		t.Errorf("a fragment was kept")
	}
	udp := segment(netip.MustParseAddrPort("198.19.0.1:5432"), client, tcpRST|tcpACK, 5)
	udp[9] = unix.IPPROTO_UDP
	if n, _ := vm.Run(udp); n != 0 {
		t.Errorf("a UDP packet was kept")
	}
}

// TestResetWatch: in a namespace SetupNone built, a connect to a fake
// address at a port no refusal listener has is reset ("connection
// refused"), and the reset watch holds that one reset, naming the
// address and port dialled; a reset from loopback (a closed local port)
// is not on it.
func TestResetWatch(t *testing.T) {
	ch := startChild(t, "none", nil)
	if ch.Resets == nil {
		t.Fatal("SetupNone made no reset watch")
	}
	for _, addr := range []string{"127.0.0.1:5432", "198.19.0.1:5432"} {
		r := ch.do(cmd{Op: "tcp", Addr: addr})
		if r.OK || r.Errno != int(unix.ECONNREFUSED) {
			t.Fatalf("connect to %s: %+v, want connection refused", addr, r)
		}
	}
	var got []netip.AddrPort
	buf := make([]byte, 256)
	fd := int(ch.Resets.Fd())
	for {
		var pfd = []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, _ := unix.Poll(pfd, 500); n <= 0 {
			break
		}
		n, _, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
		if err != nil {
			t.Fatalf("read the reset watch: %v", err)
		}
		dst, ok := ParseReset(buf[:n])
		if !ok {
			t.Errorf("the watch held a packet that is no reset: %x", buf[:n])
		}
		got = append(got, dst)
	}
	if want := []netip.AddrPort{netip.MustParseAddrPort("198.19.0.1:5432")}; !slices.Equal(got, want) {
		t.Errorf("the reset watch held %v, want %v", got, want)
	}
}
