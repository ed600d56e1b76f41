//go:build linux

package nsnet

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// runChild is the stand-in for the sandbox's init: it runs in new user+net
// namespaces (S), calls Setup, and then obeys the parent as "a process in S".
func runChild(mode string) int {
	const sock = 3
	sIno, _ := nsIno("/proc/thread-self/ns/net")
	var res *Result
	var err error
	switch mode {
	case "none":
		res, err = SetupNone(netip.MustParsePrefix("198.18.0.0/15"))
	case "hostports", "fallback-hostports":
		// 80 is the fallback's refusal listener's (Fake set): taken there.
		res, err = Setup(Config{Fallback: mode == "fallback-hostports", Fake: netip.MustParsePrefix("198.18.0.0/15"),
			HostPorts: []uint16{testHostPort, 80}})
	default:
		res, err = Setup(Config{Fallback: mode == "fallback"})
	}
	var w wire
	if err != nil {
		w.Err = err.Error()
		_ = sendMsg(sock, w)
		return 1
	}
	w = wire{Mode: res.Mode, SandboxAddr: res.SandboxAddr.String(), Gateway: res.GatewayAddr.String(),
		ProxyAddr: res.ProxyAddr.String(), ElapsedMS: float64(res.Elapsed.Microseconds()) / 1000, HasDNS: res.DNS != nil}
	if res.Reason != nil {
		w.Reason = res.Reason.Error()
		w.ReasonForced = errors.Is(res.Reason, ErrFallbackForced)
		w.ReasonUnavailable = errors.Is(res.Reason, ErrTProxyUnavailable)
	}
	files := []*os.File{res.TCP}
	if mode == "none" {
		files = []*os.File{res.Resets} // TCP's place: child.Resets
	}
	if res.DNS != nil {
		files = append(files, res.DNS)
	}
	if mode != "none" && res.Resets != nil {
		files, w.Extras = append(files, res.Resets), append(w.Extras, "resets")
	}
	for _, f := range res.HostPorts {
		files, w.Extras = append(files, f), append(w.Extras, "hostport")
	}
	w.HostPortsTaken = res.HostPortsTaken
	if err := sendMsg(sock, w, files...); err != nil {
		fmt.Fprintln(os.Stderr, "child: send result:", err)
		return 1
	}
	// As the runtime does: the supervisor has them now; close our copies.
	for _, f := range files {
		f.Close()
	}
	for {
		var q cmd
		if _, err := recvMsg(sock, &q); err != nil {
			return 0 // parent gone
		}
		if q.Op == "exit" {
			return 0
		}
		var passed []*os.File
		start := time.Now()
		r := handle(q, sIno, netip.MustParseAddr(w.SandboxAddr), &passed)
		r.ElapsedMS = float64(time.Since(start).Microseconds()) / 1000
		if err := sendMsg(sock, r, passed...); err != nil {
			fmt.Fprintln(os.Stderr, "child: reply:", err)
			return 1
		}
		for _, f := range passed {
			f.Close()
		}
	}
}

func setErr(r *reply, err error) {
	r.Err = err.Error()
	r.Errno = errnoOf(err)
}

func handle(q cmd, sIno uint64, sb netip.Addr, passed *[]*os.File) (r reply) {
	switch q.Op {
	case "tcp", "tcp6":
		c, err := net.DialTimeout(q.Op, q.Addr, 3*time.Second)
		if err != nil {
			setErr(&r, err)
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, q.Payload)
		c.(*net.TCPConn).CloseWrite()
		b, err := io.ReadAll(c)
		r.Data = string(b)
		if err != nil {
			setErr(&r, err)
			return
		}
		r.OK = true
	case "udp", "udp6":
		c, err := net.Dial(q.Op, q.Addr)
		if err != nil {
			setErr(&r, err)
			return
		}
		defer c.Close()
		if _, err := io.WriteString(c, q.Payload); err != nil {
			setErr(&r, err)
			return
		}
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		b := make([]byte, 512)
		n, err := c.Read(b)
		r.Data = string(b[:n])
		if err != nil {
			setErr(&r, err)
			return
		}
		r.OK = true
	case "rawudp":
		ap := netip.MustParseAddrPort(q.Addr)
		udp := make([]byte, 8+len(q.Payload))
		binary.BigEndian.PutUint16(udp[0:], 40000)
		binary.BigEndian.PutUint16(udp[2:], ap.Port())
		binary.BigEndian.PutUint16(udp[4:], uint16(len(udp)))
		copy(udp[8:], q.Payload)
		if err := sendRaw(sb, ap.Addr(), unix.IPPROTO_UDP, udp); err != nil {
			setErr(&r, err)
			return
		}
		r.OK = true
	case "ping", "rawping":
		ok, err := ping(netip.MustParseAddr(q.Addr), q.Op == "rawping", sb)
		if err != nil {
			setErr(&r, err)
		}
		r.OK = ok
	case "abort":
		// A connection on the loopback that its server aborts (SO_LINGER
		// 0): a reset with the connection's own sequence number.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			setErr(&r, err)
			return
		}
		defer ln.Close()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			setErr(&r, err)
			return
		}
		defer c.Close()
		sc, err := ln.Accept()
		if err != nil {
			setErr(&r, err)
			return
		}
		sc.(*net.TCPConn).SetLinger(0)
		sc.Close()
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err = c.Read(make([]byte, 1))
		r.OK = errors.Is(err, unix.ECONNRESET)
		r.Data = ln.Addr().String()
	case "threads":
		// No thread of this process may remain in P, and no fd may refer to a
		// network namespace other than S.
		var bad []string
		tasks, _ := filepath.Glob("/proc/self/task/*/ns/net")
		for _, p := range tasks {
			if ino, err := nsIno(p); err == nil && ino != sIno {
				bad = append(bad, p)
			}
		}
		fds, _ := filepath.Glob("/proc/self/fd/*")
		for _, p := range fds {
			if l, err := os.Readlink(p); err == nil && strings.HasPrefix(l, "net:[") && l != fmt.Sprintf("net:[%d]", sIno) {
				bad = append(bad, p+" -> "+l)
			}
		}
		r.OK = len(bad) == 0 && len(tasks) > 0
		r.Data = fmt.Sprintf("%d threads; outside S: %v", len(tasks), bad)
	case "state":
		st, err := sandboxState()
		if err != nil {
			setErr(&r, err)
			return
		}
		b, _ := json.Marshal(st)
		r.Data, r.OK = string(b), true
	case "bench":
		c, err := net.Dial("tcp", q.Addr)
		if err != nil {
			setErr(&r, err)
			return
		}
		buf := make([]byte, 1<<20)
		var sent int64
		for sent < q.Bytes {
			n := int64(len(buf))
			if q.Bytes-sent < n {
				n = q.Bytes - sent
			}
			m, err := c.Write(buf[:n])
			sent += int64(m)
			if err != nil {
				setErr(&r, err)
				break
			}
		}
		c.(*net.TCPConn).CloseWrite()
		io.Copy(io.Discard, c) // wait for the far end to finish
		c.Close()
		r.OK = sent == q.Bytes && r.Err == ""
		r.Data = fmt.Sprint(sent)
	case "publish":
		// A server in S listening on q.Addr; then DialInSandbox as init would do
		// when the supervisor asks, and pass the connected socket back.
		ln, err := net.Listen("tcp", q.Addr)
		if err != nil {
			setErr(&r, err)
			return
		}
		go func() {
			defer ln.Close()
			c, err := ln.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, "hello from "+c.LocalAddr().String())
			c.Close()
		}()
		port := netip.MustParseAddrPort(q.Addr).Port()
		f, err := DialInSandbox(context.Background(), port, sb)
		if err != nil {
			ln.Close()
			setErr(&r, err)
			return
		}
		*passed = append(*passed, f)
		r.OK = true
	case "dialonly":
		_, err := DialInSandbox(context.Background(), netip.MustParseAddrPort(q.Addr).Port(), sb)
		if err != nil {
			setErr(&r, err)
			return
		}
		r.OK = true
	default:
		r.Err = "unknown op " + q.Op
	}
	return
}

type sbState struct {
	EthV6Addrs  []string
	V6Routes    []string // routes not on lo
	V4Routes    []string
	HasEth0     bool
	Eth0Disable string
}

func sandboxState() (*sbState, error) {
	var st sbState
	links, err := netlink.LinkList()
	if err != nil {
		return nil, err
	}
	lo := -1
	for _, l := range links {
		if l.Attrs().Name == "lo" {
			lo = l.Attrs().Index
		}
		if l.Attrs().Name == SandboxIface {
			st.HasEth0 = true
			addrs, _ := netlink.AddrList(l, netlink.FAMILY_V6)
			for _, a := range addrs {
				st.EthV6Addrs = append(st.EthV6Addrs, a.String())
			}
			b, _ := os.ReadFile("/proc/sys/net/ipv6/conf/" + SandboxIface + "/disable_ipv6")
			st.Eth0Disable = strings.TrimSpace(string(b))
		}
	}
	routes, err := netlink.RouteListFiltered(netlink.FAMILY_V6, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return nil, err
	}
	for _, rt := range routes {
		if rt.LinkIndex != lo {
			st.V6Routes = append(st.V6Routes, rt.String())
		}
	}
	v4, _ := netlink.RouteList(nil, netlink.FAMILY_V4)
	for _, rt := range v4 {
		st.V4Routes = append(st.V4Routes, rt.String())
	}
	return &st, nil
}

// ping sends one ICMP echo request from a raw socket and reports whether an echo
// reply from dst arrived within a second.
// With hdrincl, the packet is built by hand and sent from an IPPROTO_RAW socket,
// which the ipproto routing rules do not see.
func ping(dst netip.Addr, hdrincl bool, src netip.Addr) (bool, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMP)
	if err != nil {
		return false, os.NewSyscallError("socket(raw icmp)", err)
	}
	defer unix.Close(fd)
	pkt := []byte{8, 0, 0, 0, 0x12, 0x34, 0, 1, 'j', 'a', 'i', 'l'}
	binary.BigEndian.PutUint16(pkt[2:], icmpChecksum(pkt))
	if hdrincl {
		if err := sendRaw(src, dst, unix.IPPROTO_ICMP, pkt); err != nil {
			return false, err
		}
	} else if err := unix.Sendto(fd, pkt, 0, &unix.SockaddrInet4{Addr: dst.As4()}); err != nil {
		return false, os.NewSyscallError("sendto", err)
	}
	tv := unix.NsecToTimeval(int64(200 * time.Millisecond))
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	deadline := time.Now().Add(time.Second)
	buf := make([]byte, 1500)
	for time.Now().Before(deadline) {
		n, from, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			continue
		}
		sa, ok := from.(*unix.SockaddrInet4)
		if !ok || n < 20 {
			continue
		}
		ihl := int(buf[0]&0x0f) * 4
		if n > ihl && buf[ihl] == 0 && netip.AddrFrom4(sa.Addr) == dst {
			return true, nil
		}
	}
	return false, nil
}

func icmpChecksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

func nsIno(p string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// sendRaw sends one IPv4 packet with a hand-made header (IP_HDRINCL).
func sendRaw(src, dst netip.Addr, proto byte, payload []byte) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_RAW)
	if err != nil {
		return os.NewSyscallError("socket(raw)", err)
	}
	defer unix.Close(fd)
	h := make([]byte, 20, 20+len(payload))
	h[0], h[8], h[9] = 0x45, 64, proto
	binary.BigEndian.PutUint16(h[2:], uint16(20+len(payload)))
	s4, d4 := src.As4(), dst.As4()
	copy(h[12:], s4[:])
	copy(h[16:], d4[:])
	if err := unix.Sendto(fd, append(h, payload...), 0, &unix.SockaddrInet4{Addr: d4}); err != nil {
		return os.NewSyscallError("sendto(raw)", err)
	}
	return nil
}
