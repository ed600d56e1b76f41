//go:build linux

package nsnet

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// acceptOne accepts one flow on the supervisor side, checks that its local address
// is want (the original destination) and its peer the sandbox, and answers.
func acceptOne(t *testing.T, ln *net.TCPListener, want netip.AddrPort, sb netip.Addr) error {
	t.Helper()
	ln.SetDeadline(time.Now().Add(5 * time.Second))
	c, err := ln.AcceptTCP()
	if err != nil {
		return err
	}
	defer c.Close()
	got := c.LocalAddr().(*net.TCPAddr).AddrPort()
	from := c.RemoteAddr().(*net.TCPAddr).AddrPort()
	if got.Addr().Unmap() != want.Addr() || got.Port() != want.Port() {
		t.Errorf("accepted flow LocalAddr = %v, want original destination %v", got, want)
	}
	if from.Addr().Unmap() != sb {
		t.Errorf("accepted flow RemoteAddr = %v, want the sandbox %v", from, sb)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(c)
	_, err = io.WriteString(c, "ack "+string(b)+" at "+got.String())
	return err
}

func tproxyChild(t *testing.T) (*child, *net.TCPListener, net.PacketConn) {
	t.Helper()
	ch := startChild(t, "tproxy", nil)
	if ch.res.Mode != ModeTProxy {
		t.Fatalf("Mode = %q (reason %q), want %q", ch.res.Mode, ch.res.Reason, ModeTProxy)
	}
	l, err := net.FileListener(ch.TCP)
	if err != nil {
		t.Fatalf("net.FileListener: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	pc, err := net.FilePacketConn(ch.DNS)
	if err != nil {
		t.Fatalf("net.FilePacketConn: %v", err)
	}
	t.Cleanup(func() { pc.Close() })
	t.Logf("Setup took %.2f ms; sandbox %s gateway %s listener %s", ch.res.ElapsedMS, ch.res.SandboxAddr, ch.res.Gateway, ch.res.ProxyAddr)
	return ch, l.(*net.TCPListener), pc
}

func TestTProxyOriginalDestination(t *testing.T) {
	ch, ln, _ := tproxyChild(t)
	sb := netip.MustParseAddr(ch.res.SandboxAddr)
	if sb != netip.MustParseAddr("10.201.0.2") || ch.res.Gateway != "10.201.0.1" {
		t.Errorf("addresses = %s via %s, want 10.201.0.2 via 10.201.0.1", sb, ch.res.Gateway)
	}
	for _, dst := range []string{"10.99.0.2:80", "198.18.0.5:443", "1.2.3.4:9", "10.201.0.1:53", "10.201.0.1:" + strings.Split(ch.res.ProxyAddr, ":")[1], "255.255.255.254:65535"} {
		t.Run(dst, func(t *testing.T) {
			want := mustAddrPort(dst)
			errc := make(chan error, 1)
			go func() { errc <- acceptOne(t, ln, want, sb) }()
			r := ch.do(cmd{Op: "tcp", Addr: dst, Payload: "hi"})
			if err := <-errc; err != nil {
				t.Fatalf("supervisor accept for %s: %v (child: %+v)", dst, err, r)
			}
			if !r.OK || r.Data != "ack hi at "+want.String() {
				t.Fatalf("child saw %+v, want the supervisor's answer", r)
			}
		})
	}
}

// ADVERSARIAL: UDP other than DNS to the gateway must never arrive anywhere (not
// on the DNS socket, not as a TCP flow) and must fail fast in the sandbox.
func TestUDPOnlyDNSArrives(t *testing.T) {
	ch, ln, pc := tproxyChild(t)
	sb := netip.MustParseAddr(ch.res.SandboxAddr)
	gw := ch.res.Gateway

	// Control: DNS to gw:53 arrives, from the sandbox, and the answer goes back.
	got := make(chan string, 1)
	go func() {
		b := make([]byte, 512)
		pc.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, from, err := pc.ReadFrom(b)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		if a := from.(*net.UDPAddr).AddrPort().Addr().Unmap(); a != sb {
			t.Errorf("DNS query from %v, want %v", a, sb)
		}
		pc.WriteTo([]byte("answer"), from)
		got <- string(b[:n])
	}()
	r := ch.do(cmd{Op: "udp", Addr: gw + ":53", Payload: "query"})
	if q := <-got; q != "query" || !r.OK || r.Data != "answer" {
		t.Fatalf("DNS round trip: supervisor got %q, sandbox got %+v", q, r)
	}

	for _, dst := range []string{"1.2.3.4:9", "198.18.0.5:53", "8.8.8.8:53", gw + ":9999", gw + ":123", "10.201.0.3:53", "255.255.255.255:53"} {
		t.Run(dst, func(t *testing.T) {
			r := ch.do(cmd{Op: "udp", Addr: dst, Payload: "leak " + dst})
			if r.OK {
				t.Fatalf("UDP to %s got an answer %q", dst, r.Data)
			}
			// Fails fast, at the sender: S routes non-DNS UDP to "unreachable".
			// The subnet's broadcast address is in S's local table (looked up
			// first), so that one is sent and dropped in P: it times out.
			if bcast := dst == "10.201.0.3:53"; !bcast && (r.Errno != int(syscall.EHOSTUNREACH) || r.ElapsedMS > 100) {
				t.Errorf("UDP to %s: %q (errno %d, %.1f ms), want an immediate EHOSTUNREACH", dst, r.Err, r.Errno, r.ElapsedMS)
			}
			pc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			b := make([]byte, 512)
			if n, from, err := pc.ReadFrom(b); err == nil {
				t.Fatalf("UDP to %s arrived on the DNS socket from %v: %q", dst, from, b[:n])
			}
			ln.SetDeadline(time.Now().Add(50 * time.Millisecond))
			if c, err := ln.Accept(); err == nil {
				c.Close()
				t.Fatalf("UDP to %s produced a TCP flow", dst)
			}
		})
	}
}

// ADVERSARIAL: the second layer in P. Hand-made UDP packets (raw socket, which the
// sandbox's routing rules do not see) to anything but the gateway's port 53 never
// arrive; the same packet to gw:53 does (control).
func TestRawUDPSecondLayer(t *testing.T) {
	ch, ln, pc := tproxyChild(t)
	read := func() (string, bool) {
		pc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		b := make([]byte, 512)
		n, _, err := pc.ReadFrom(b)
		return string(b[:n]), err == nil
	}
	if r := ch.do(cmd{Op: "rawudp", Addr: ch.res.Gateway + ":53", Payload: "control"}); !r.OK {
		t.Fatalf("raw UDP send: %+v", r)
	}
	if got, ok := read(); !ok || got != "control" {
		t.Fatalf("control: raw UDP to gw:53 did not arrive (%q)", got)
	}
	for _, dst := range []string{"1.2.3.4:53", "198.18.0.5:53", ch.res.Gateway + ":54", "127.0.0.1:53"} {
		if r := ch.do(cmd{Op: "rawudp", Addr: dst, Payload: "leak"}); !r.OK {
			t.Fatalf("raw UDP send to %s: %+v", dst, r)
		}
		if got, ok := read(); ok {
			t.Errorf("raw UDP to %s arrived on the DNS socket: %q", dst, got)
		}
		ln.SetDeadline(time.Now().Add(20 * time.Millisecond))
		if c, err := ln.Accept(); err == nil {
			c.Close()
			t.Errorf("raw UDP to %s produced a TCP flow", dst)
		}
	}
}

// ADVERSARIAL: ICMP from the sandbox goes nowhere (control: loopback ping works,
// so the probe can see replies).
func TestICMPRefused(t *testing.T) {
	ch, _, _ := tproxyChild(t)
	if r := ch.do(cmd{Op: "ping", Addr: "127.0.0.1"}); !r.OK {
		t.Fatalf("control: ping 127.0.0.1 inside the sandbox failed: %+v", r)
	}
	for _, dst := range []string{ch.res.Gateway, "1.2.3.4", "198.18.0.5"} {
		if r := ch.do(cmd{Op: "ping", Addr: dst}); r.OK || r.Errno != int(syscall.EHOSTUNREACH) {
			t.Errorf("ping %s from the sandbox: replied=%v err=%q, want no reply and EHOSTUNREACH", dst, r.OK, r.Err)
		}
	}
	// Second layer: a hand-made packet (raw socket with IP_HDRINCL bypasses the
	// ipproto routing rules; the agent has no CAP_NET_RAW, the test child does).
	for _, dst := range []string{ch.res.Gateway, "1.2.3.4"} {
		if r := ch.do(cmd{Op: "rawping", Addr: dst}); r.OK || r.Err != "" {
			t.Errorf("raw (IP_HDRINCL) ping %s from the sandbox: replied=%v err=%q, want sent and no reply", dst, r.OK, r.Err)
		}
	}
}

// ADVERSARIAL: IPv6 out of the sandbox fails at once (no address, no route), and
// the sandbox side has no IPv6 address or route besides loopback.
func TestIPv6Refused(t *testing.T) {
	ch, ln, _ := tproxyChild(t)
	for _, tc := range []struct{ op, addr string }{
		{"tcp6", "[2001:db8::1]:80"},
		{"tcp6", "[64:ff9b::102:304]:443"}, // NAT64 form of 1.2.3.4
		{"tcp6", "[::ffff:1.2.3.4]:80"},    // v4-mapped: must not become a v4 flow by accident
		{"tcp6", "[fe80::1%eth0]:80"},
		{"udp6", "[2001:db8::1]:53"},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				ln.SetDeadline(time.Now().Add(500 * time.Millisecond))
				c, err := ln.Accept()
				if err == nil {
					c.Close()
					done <- errors.New("a TCP flow arrived at the supervisor")
					return
				}
				done <- nil
			}()
			r := ch.do(cmd{Op: tc.op, Addr: tc.addr, Payload: "x"})
			if err := <-done; err != nil && tc.addr != "[::ffff:1.2.3.4]:80" {
				t.Fatalf("%s %s: %v", tc.op, tc.addr, err)
			}
			if r.OK {
				t.Fatalf("%s %s succeeded: %+v", tc.op, tc.addr, r)
			}
			if r.ElapsedMS > 1000 {
				t.Errorf("%s %s took %.0f ms to fail, want fast failure (%s)", tc.op, tc.addr, r.ElapsedMS, r.Err)
			}
			t.Logf("%s %s: %s (%.2f ms)", tc.op, tc.addr, r.Err, r.ElapsedMS)
		})
	}
	r := ch.do(cmd{Op: "state"})
	var st sbState
	if err := json.Unmarshal([]byte(r.Data), &st); err != nil || !r.OK {
		t.Fatalf("state: %+v %v", r, err)
	}
	if !st.HasEth0 || len(st.EthV6Addrs) > 0 || len(st.V6Routes) > 0 || st.Eth0Disable != "1" {
		t.Errorf("sandbox IPv6 state: %+v, want eth0 with disable_ipv6=1, no IPv6 address, no IPv6 route off lo", st)
	}
	t.Logf("sandbox IPv4 routes: %v", st.V4Routes)
}

// ADVERSARIAL: after Setup no thread of init is left in P and init holds no handle
// on P (the sandbox cannot setns into the proxy side through init).
func TestNoThreadOrHandleInProxyNS(t *testing.T) {
	ch, _, _ := tproxyChild(t)
	var r reply
	for i := 0; i < 50; i++ { // the runtime reaps the discarded thread asynchronously
		if r = ch.do(cmd{Op: "threads"}); r.OK {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !r.OK {
		t.Fatalf("after Setup: %s", r.Data)
	}
	t.Log(r.Data)
}

// Publishing: the supervisor gets a socket connected, inside S, to a server that
// listens only on the sandbox's loopback (127.0.0.1 or ::1).
func TestPublishDialInSandbox(t *testing.T) {
	ch, _, _ := tproxyChild(t)
	for _, addr := range []string{"127.0.0.1:8080", "[::1]:8081", "0.0.0.0:8082", "10.201.0.2:8083"} {
		t.Run(addr, func(t *testing.T) {
			if err := sendMsg(ch.sock, cmd{Op: "publish", Addr: addr}); err != nil {
				t.Fatal(err)
			}
			var r reply
			files, err := recvMsg(ch.sock, &r)
			if err != nil || !r.OK || len(files) != 1 {
				t.Fatalf("publish %s: %+v %v (%d files)", addr, r, err, len(files))
			}
			c, err := net.FileConn(files[0])
			files[0].Close()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			b, err := io.ReadAll(c)
			if err != nil || !strings.HasPrefix(string(b), "hello from ") {
				t.Fatalf("read from published server %s: %q %v", addr, b, err)
			}
			t.Logf("%s -> %s", addr, b)
		})
	}
	r := ch.do(cmd{Op: "dialonly", Addr: "127.0.0.1:9"})
	if r.OK || r.Errno != int(syscall.ECONNREFUSED) || r.ElapsedMS > 1000 {
		t.Errorf("DialInSandbox to a closed port: %+v, want a fast ECONNREFUSED", r)
	}
}

func TestFallbackForced(t *testing.T) {
	ch := startChild(t, "fallback", nil)
	if ch.res.Mode != ModeProxyAware || !ch.res.ReasonForced || ch.res.ReasonUnavailable {
		t.Fatalf("result %+v, want proxy-aware with ErrFallbackForced", ch.res)
	}
	proxy := mustAddrPort(ch.res.ProxyAddr)
	if !proxy.Addr().IsLoopback() || ch.res.Gateway != "127.0.0.1" || !ch.res.HasDNS {
		t.Fatalf("result %+v, want a loopback proxy and DNS on 127.0.0.1", ch.res)
	}
	l, err := net.FileListener(ch.TCP)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ln := l.(*net.TCPListener)
	// The listener lives in S: the sandbox reaches it on its own loopback.
	errc := make(chan error, 1)
	go func() { errc <- acceptOne(t, ln, proxy, proxy.Addr()) }()
	if r := ch.do(cmd{Op: "tcp", Addr: proxy.String(), Payload: "CONNECT"}); !r.OK {
		t.Fatalf("sandbox -> proxy %s: %+v", proxy, r)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	pc, err := net.FilePacketConn(ch.DNS)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	go func() {
		b := make([]byte, 64)
		pc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, from, err := pc.ReadFrom(b); err == nil {
			pc.WriteTo([]byte("answer"), from)
		}
	}()
	if r := ch.do(cmd{Op: "udp", Addr: "127.0.0.1:53", Payload: "q"}); !r.OK || r.Data != "answer" {
		t.Errorf("DNS in fallback: %+v", r)
	}
	// ADVERSARIAL: in proxy-aware mode there is no route out at all.
	if r := ch.do(cmd{Op: "tcp", Addr: "10.99.0.2:80"}); r.OK || r.Errno != int(syscall.ENETUNREACH) {
		t.Errorf("direct connect in fallback mode: %+v, want ENETUNREACH", r)
	}
}

// Without CAP_SYS_ADMIN the proxy namespace cannot be made: Setup must say why and
// fall back, not fail.
func TestFallbackWhenTProxyImpossible(t *testing.T) {
	// Stand-in for a kernel or environment where P cannot be made: no CAP_SYS_ADMIN.
	ch := startChild(t, "tproxy", []uintptr{unix.CAP_NET_ADMIN, unix.CAP_NET_BIND_SERVICE})
	if ch.res.Mode != ModeProxyAware || !ch.res.ReasonUnavailable || ch.res.ReasonForced {
		t.Fatalf("result %+v, want proxy-aware wrapping ErrTProxyUnavailable", ch.res)
	}
	if !strings.Contains(ch.res.Reason, "unshare") {
		t.Errorf("reason %q does not name the failing step", ch.res.Reason)
	}
	t.Logf("reason: %s", ch.res.Reason)
}

type hostSnapshot struct {
	Links, Rules, Routes, Tables []string
}

func snapshotHost(t *testing.T) hostSnapshot {
	t.Helper()
	var s hostSnapshot
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatalf("host links: %v", err)
	}
	for _, l := range links {
		s.Links = append(s.Links, l.Attrs().Name+"/"+l.Type())
	}
	rules, _ := netlink.RuleList(netlink.FAMILY_ALL)
	for _, r := range rules {
		s.Rules = append(s.Rules, r.String())
	}
	routes, _ := netlink.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
	for _, r := range routes {
		s.Routes = append(s.Routes, r.String())
	}
	if os.Getuid() == 0 { // listing the host ruleset needs CAP_NET_ADMIN on the host
		c, err := nftables.New()
		if err == nil {
			tables, err := c.ListTables()
			if err != nil {
				t.Fatalf("host nft tables: %v", err)
			}
			for _, tb := range tables {
				chains, _ := c.ListChainsOfTableFamily(tb.Family)
				s.Tables = append(s.Tables, tb.Name)
				for _, chn := range chains {
					if chn.Table.Name == tb.Name {
						rules, _ := c.GetRules(tb, chn)
						s.Tables = append(s.Tables, tb.Name+"/"+chn.Name+"/"+string(rune('0'+len(rules))))
					}
				}
			}
		}
	}
	for _, l := range [][]string{s.Links, s.Rules, s.Routes, s.Tables} {
		sort.Strings(l)
	}
	return s
}

// isolatedEnv names the test a re-executed child runs in its own network
// namespace (inPrivateNetns).
const isolatedEnv = "NSNET_TEST_ISOLATED"

// inPrivateNetns runs the calling test again, alone, in a fresh network
// namespace (as root), or a fresh user+net namespace in which it is root
// (unprivileged), and fails if that run fails or does not pass. It returns
// true in that child, where the test body runs, and false in the parent.
//
// Tests that snapshot the host's links, routes, rules and nftables need it:
// `go test ./...` runs packages in parallel, and the end-to-end tests (and
// other users of the machine) add and remove veths and namespaces meanwhile.
// In its own namespace, "the host" is a network stack nothing else touches,
// and Setup starts from it exactly as from the real one.
func inPrivateNetns(t *testing.T) bool {
	t.Helper()
	if os.Getenv(isolatedEnv) == t.Name() {
		lo, err := netlink.LinkByName("lo")
		if err == nil {
			err = netlink.LinkSetUp(lo)
		}
		if err != nil {
			t.Fatalf("bring up lo in the private namespace: %v", err)
		}
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), isolatedEnv+"="+t.Name())
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	if os.Getuid() != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
		cmd.SysProcAttr.GidMappingsEnableSetgroups = false
	}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s in a private network namespace: %v\n%s", t.Name(), err, out)
	}
	return false
}

// Nothing on the host changes, during the sandbox's life or after it.
func TestTeardownLeavesNothingOnHost(t *testing.T) {
	if !inPrivateNetns(t) {
		return
	}
	before := snapshotHost(t)
	func() {
		ch, ln, _ := tproxyChild(t)
		errc := make(chan error, 1)
		go func() { errc <- acceptOne(t, ln, mustAddrPort("1.2.3.4:80"), netip.MustParseAddr(ch.res.SandboxAddr)) }()
		ch.do(cmd{Op: "tcp", Addr: "1.2.3.4:80", Payload: "x"})
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		during := snapshotHost(t)
		if !equalSnap(before, during) {
			t.Errorf("host changed while the sandbox runs:\nbefore %+v\nduring %+v", before, during)
		}
		ch.close()
	}()
	after := snapshotHost(t)
	if !equalSnap(before, after) {
		t.Errorf("host changed after teardown:\nbefore %+v\nafter  %+v", before, after)
	}
	if os.Getuid() != 0 {
		t.Log("not root: host nftables ruleset not listed (an unprivileged user cannot change it either)")
	}
}

func equalSnap(a, b hostSnapshot) bool {
	return slices.Equal(a.Links, b.Links) && slices.Equal(a.Rules, b.Rules) &&
		slices.Equal(a.Routes, b.Routes) && slices.Equal(a.Tables, b.Tables)
}

// BenchmarkSetup reports Setup's cost: it adds to startup with --net allow
// (a measurement: `make bench` runs it).
func BenchmarkSetup(b *testing.B) {
	var ms []float64
	for i := 0; i < b.N; i++ {
		ch := startChild(b, "tproxy", nil)
		ms = append(ms, ch.res.ElapsedMS)
		ch.close()
	}
	slices.Sort(ms)
	b.ReportMetric(ms[len(ms)/2], "ms/setup-p50")
	b.Logf("Setup over %d runs: min %.2f ms, p50 %.2f ms, max %.2f ms", len(ms), ms[0], ms[len(ms)/2], ms[len(ms)-1])
}

// sink is a host-loopback TCP server that counts bytes per connection.
func sink(t *testing.T) (addr string, got chan int64) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	got = make(chan int64, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				n, _ := io.Copy(io.Discard, c)
				c.Close()
				got <- n
			}()
		}
	}()
	return l.Addr().String(), got
}

func writeN(c net.Conn, n int64) error {
	buf := make([]byte, 1<<20)
	for n > 0 {
		m := int64(len(buf))
		if n < m {
			m = n
		}
		if _, err := c.Write(buf[:m]); err != nil {
			return err
		}
		n -= m
	}
	return nil
}

// TestThroughput measures a bulk upload from S through veth + TPROXY and a trivial
// splice relay in the supervisor to a host-loopback sink, against the same upload
// straight over host loopback.
func TestThroughput(t *testing.T) {
	size := int64(1 << 30)
	if testing.Short() {
		size = 128 << 20
	}
	gib := float64(size) / (1 << 30)
	addr, got := sink(t)

	// Direct loopback baseline.
	start := time.Now()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeN(c, size); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if n := <-got; n != size {
		t.Fatalf("direct: sink got %d bytes, want %d", n, size)
	}
	direct := time.Since(start)

	// Same relay, but the source on host loopback: isolates the cost of veth+TPROXY.
	rl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	relayErr := make(chan error, 1)
	relay := func(ln *net.TCPListener) {
		ln.SetDeadline(time.Now().Add(10 * time.Second))
		in, err := ln.AcceptTCP()
		if err != nil {
			relayErr <- err
			return
		}
		defer in.Close()
		out, err := net.Dial("tcp", addr)
		if err != nil {
			relayErr <- err
			return
		}
		// *net.TCPConn.ReadFrom(*net.TCPConn) splices socket to socket.
		_, err = out.(*net.TCPConn).ReadFrom(in)
		out.Close()
		relayErr <- err
	}
	go relay(rl.(*net.TCPListener))
	start = time.Now()
	if c, err = net.Dial("tcp", rl.Addr().String()); err != nil {
		t.Fatal(err)
	}
	if err := writeN(c, size); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := <-relayErr; err != nil {
		t.Fatalf("loopback relay: %v", err)
	}
	if n := <-got; n != size {
		t.Fatalf("loopback relay: sink got %d bytes, want %d", n, size)
	}
	relayed := time.Since(start)

	ch, ln, _ := tproxyChild(t)
	go relay(ln)
	start = time.Now()
	r := ch.do(cmd{Op: "bench", Addr: "198.18.0.9:443", Bytes: size})
	if err := <-relayErr; err != nil {
		t.Fatalf("relay: %v", err)
	}
	n := <-got
	viaProxy := time.Since(start)
	if !r.OK || n != size {
		t.Fatalf("through the proxy path: child %+v, sink got %d bytes, want %d", r, n, size)
	}
	d, l, p := gib/direct.Seconds(), gib/relayed.Seconds(), gib/viaProxy.Seconds()
	t.Logf("%.2f GiB: direct loopback %.2f GiB/s; loopback -> splice relay -> loopback %.2f GiB/s; "+
		"sandbox -> veth -> TPROXY -> splice relay -> loopback %.2f GiB/s (%.2f of direct, %.2f of the loopback relay)",
		gib, d, l, p, p/d, p/l)
}
