//go:build linux

package nsnet

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
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
	for _, withFake := range []bool{true, false} {
		f := fake
		if !withFake {
			f = netip.Prefix{} // the egress modes: the loopback's resets only
		}
		prog, err := filterResets(f, RefusalPorts)
		if err != nil {
			t.Fatal(err)
		}
		vm, err := bpf.NewVM(prog)
		if err != nil {
			t.Fatal(err)
		}
		client := netip.MustParseAddrPort("127.0.0.1:40000")
		passed, loops := 0, 0
		for _, src := range []string{"198.19.0.1", "198.18.0.7", "198.20.0.1", "127.0.0.1", "127.3.2.1", "10.0.0.1", "198.17.255.255", "128.0.0.1", "126.255.255.255"} {
			for _, port := range []uint16{5432, 22, 80, 443, 8080, 9418, 1, 11434} {
				for _, flags := range []byte{tcpRST | tcpACK, tcpRST, 0x02, 0x12, 0x18, tcpRST | tcpACK | 0x08} {
					for _, ihl := range []int{5, 7} {
						for _, seq := range []uint32{0, 1, 0x80000000} {
							from := netip.AddrPortFrom(netip.MustParseAddr(src), port)
							p := segment(from, client, flags, ihl)
							binary.BigEndian.PutUint32(p[ihl*4+4:], seq)
							n, err := vm.Run(p)
							if err != nil {
								t.Fatal(err)
							}
							dst, ok := ParseReset(p)
							loop := dst.Addr().IsLoopback()
							want := ok && (loop || withFake && fake.Contains(dst.Addr()) && !slices.Contains(RefusalPorts, dst.Port()))
							if (n > 0) != want {
								t.Errorf("fake %v: reset from %v flags %#x ihl %d seq %d: filter kept %d bytes, want kept %v", f, from, flags, ihl, seq, n, want)
							}
							if n > 0 {
								passed++
								if loop {
									loops++
								}
								if got, _ := ParseReset(p[:min(n, len(p))]); got != from {
									t.Errorf("what the filter keeps of %v's reset (%d bytes) reads as %v", from, n, got)
								}
							}
						}
					}
				}
			}
		}
		if passed == 0 || loops == 0 || withFake && passed == loops {
			t.Fatalf("fake %v: the filter passed %d resets, %d of the loopback: the comparison proves nothing", f, passed, loops)
		}
		frag := segment(netip.MustParseAddrPort("198.19.0.1:5432"), client, tcpRST|tcpACK, 5)
		frag[7] = 1 // a fragment offset
		if n, _ := vm.Run(frag); n != 0 {
			t.Errorf("a fragment was kept")
		}
		udp := segment(netip.MustParseAddrPort("127.0.0.1:5432"), client, tcpRST|tcpACK, 5)
		udp[9] = unix.IPPROTO_UDP
		if n, _ := vm.Run(udp); n != 0 {
			t.Errorf("a UDP packet was kept")
		}
	}
}

// TestResetWatch: in a namespace SetupNone built, a connect to a fake
// address at a port no refusal listener has is reset ("connection
// refused"), and the reset watch holds that one reset, naming the
// address and port dialled; so is the loopback's reset of a connect to
// a closed local port (which the supervisor weighs against the host's
// loopback), and nothing else: not an established connection's abort.
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
	if r := ch.do(cmd{Op: "abort"}); !r.OK {
		t.Fatalf("an aborted loopback connection: %+v, want a reset", r)
	}
	if got := drainResets(t, ch.Resets); !slices.Equal(got, []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:5432"), netip.MustParseAddrPort("198.19.0.1:5432")}) {
		t.Errorf("the reset watch held %v, want 127.0.0.1:5432 and 198.19.0.1:5432", got)
	}
}

// drainResets reads what the reset watch holds, until it stays empty
// for half a second.
func drainResets(t *testing.T, w *os.File) []netip.AddrPort {
	t.Helper()
	var got []netip.AddrPort
	buf := make([]byte, 256)
	fd := int(w.Fd())
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
	return got
}

// TestHostPorts: in both egress modes, Setup listens on the sandbox's
// 127.0.0.1 at each Config.HostPorts port (a connect there inside is
// accepted by the supervisor's listener, whose LocalAddr names the port),
// but for a port jail's own listener holds (the fallback's 80), which it
// reports; and the reset watch holds the loopback's refusal of a connect
// to a closed port.
func TestHostPorts(t *testing.T) {
	for _, mode := range []string{"hostports", "fallback-hostports"} {
		t.Run(mode, func(t *testing.T) {
			ch := startChild(t, mode, nil)
			wantTaken := []uint16{80}
			if mode == "hostports" {
				if ch.res.Mode != ModeTProxy {
					skipOrFail(t, "no transparent mode here: %s", ch.res.Reason)
				}
				wantTaken = nil
			}
			if !slices.Equal(ch.res.HostPortsTaken, wantTaken) || len(ch.HostPorts) != 2-len(wantTaken) {
				t.Fatalf("%d host port listeners, taken %v; want %d, taken %v", len(ch.HostPorts), ch.res.HostPortsTaken, 2-len(wantTaken), wantTaken)
			}
			ln, err := net.FileListener(ch.HostPorts[0])
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				io.WriteString(c, "host "+c.LocalAddr().String())
			}()
			if r := ch.do(cmd{Op: "tcp", Addr: fmt.Sprintf("127.0.0.1:%d", testHostPort)}); !r.OK || r.Data != fmt.Sprintf("host 127.0.0.1:%d", testHostPort) {
				t.Errorf("connect inside to the host port: %+v", r)
			}
			if r := ch.do(cmd{Op: "tcp", Addr: "127.0.0.1:5432"}); r.OK || r.Errno != int(unix.ECONNREFUSED) {
				t.Fatalf("connect to 127.0.0.1:5432: %+v, want connection refused", r)
			}
			if ch.Resets == nil {
				t.Fatal("Setup made no reset watch")
			}
			if got := drainResets(t, ch.Resets); !slices.Equal(got, []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:5432")}) {
				t.Errorf("the reset watch held %v, want 127.0.0.1:5432", got)
			}
		})
	}
}
