//go:build linux

package nsnet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// vethMTU is the MTU of both veth ends. Nothing leaves P (the supervisor dials the
// real destination from the host), so it is free to choose; measured on a 2-core VM,
// 1500 with veth's GSO/GRO was as fast as or faster than 65520 (TestThroughput).
const vethMTU = 1500

// Setup builds S's egress plumbing. It must run in the sandbox's init, in S, with
// CAP_NET_ADMIN and CAP_SYS_ADMIN in U (before capabilities are dropped, before
// Landlock and seccomp), with a procfs mounted at /proc in which the caller is visible
// (the host's /proc before pivot_root, or the sandbox's own one after). Every thread
// of the process must be in S (true for init: S was made at clone time).
//
// It returns a Result in ModeTProxy, or in ModeProxyAware with Result.Reason when the
// transparent path cannot be built or cfg.Fallback is set. It returns an error only
// for a bad Config or when even the fallback cannot be built.
func Setup(cfg Config) (*Result, error) {
	start := time.Now()
	gw, sb, bits, err := addrs(cfg.Subnet)
	if err != nil {
		return nil, err
	}
	fdS, err := openThreadNetNS()
	if err != nil {
		return nil, err
	}
	defer unix.Close(fdS)

	var reason error = ErrFallbackForced
	if !cfg.Fallback {
		res, err := onDiscardedThread(func() (*Result, error) { return setupTProxy(fdS, gw, sb, bits) })
		if err == nil {
			if err := sandboxSide(res, cfg.HostPorts); err != nil {
				return nil, err
			}
			res.Elapsed = time.Since(start)
			return res, nil
		}
		reason = fmt.Errorf("%w: %w", ErrTProxyUnavailable, err)
	}
	res, err := onDiscardedThread(func() (*Result, error) { return setupFallback(fdS, cfg.Fake) })
	if err != nil {
		return nil, fmt.Errorf("nsnet: no egress path (transparent: %v; proxy-aware fallback: %w); run `jail doctor`, or use `net` none", reason, err)
	}
	res.Reason = reason
	if err := sandboxSide(res, cfg.HostPorts); err != nil {
		return nil, err
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// sandboxSide adds to an egress mode's res what lives in S, the calling
// thread's namespace (init's: all its threads are in S), beside what
// setupTProxy or setupFallback made there: a listener on 127.0.0.1 at
// each of hostPorts, and the reset watch of the loopback. On an error
// every file of res is closed.
func sandboxSide(res *Result, hostPorts []uint16) (err error) {
	runtime.LockOSThread() // every socket below in the same namespace, as SetupNone
	defer runtime.UnlockOSThread()
	defer func() {
		if err != nil {
			res.close()
		}
	}()
	lo := netip.AddrFrom4([4]byte{127, 0, 0, 1})
	for _, port := range hostPorts {
		f, _, err := listener(netip.AddrPortFrom(lo, port), false)
		if errors.Is(err, unix.EADDRINUSE) {
			// Nothing of the sandbox's runs yet: only jail's own listeners
			// can hold a port now.
			res.HostPortsTaken = append(res.HostPortsTaken, port)
			continue
		}
		if err != nil {
			return fmt.Errorf("nsnet: the host's port %d at the sandbox's 127.0.0.1: %w", port, err)
		}
		res.HostPorts = append(res.HostPorts, f)
	}
	// Best effort, as in --net none: without it, a connect to a port of
	// the loopback where the host has a server fails unexplained.
	if w, err := resetWatch(netip.Prefix{}, nil); err == nil {
		res.Resets = w
	}
	return nil
}

// close closes every file of r (a Setup that fails after making them).
func (r *Result) close() {
	for _, f := range append(append([]*os.File{r.TCP, r.DNS, r.Resets}, r.Listeners...), r.HostPorts...) {
		if f != nil {
			f.Close()
		}
	}
}

// onDiscardedThread runs f on a goroutine locked to its OS thread and never unlocks
// it: when the goroutine ends, the Go runtime terminates the thread instead of
// reusing it, so whatever f did to the thread's namespaces dies with it (Go issue
// 20676 documents this contract since Go 1.10).
func onDiscardedThread(f func() (*Result, error)) (*Result, error) {
	type out struct {
		r   *Result
		err error
	}
	ch := make(chan out, 1)
	go func() {
		runtime.LockOSThread() // never unlocked on purpose
		r, err := f()
		ch <- out{r, err}
	}()
	o := <-ch
	return o.r, o.err
}

// openThreadNetNS opens the calling thread's network namespace. /proc/thread-self is
// resolved in the procfs's own pid namespace, so it is right even on the host's /proc
// inside a new pid namespace (where os.Getpid() would name another process).
func openThreadNetNS() (int, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const p = "/proc/thread-self/ns/net"
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return fd, nil
}

// cleanup closes files on error paths.
type cleanup []*os.File

func (c *cleanup) add(f *os.File) *os.File { *c = append(*c, f); return f }
func (c cleanup) close() {
	for _, f := range c {
		f.Close()
	}
}

// setupTProxy runs on a thread that will be discarded. On error, it has created
// nothing that outlives the thread and the files it closes: P dies with them, and
// the veth pair with P (both ends go when either namespace dies).
func setupTProxy(fdS int, gw, sb netip.Addr, bits int) (res *Result, err error) {
	var files cleanup
	defer func() {
		if err != nil {
			files.close()
		}
	}()

	// S: new devices get IPv6 disabled from birth, so eth0 never has a link-local
	// address or an IPv6 route (the IPv6 half of "no route out of S").
	if err := disableIPv6("default"); err != nil {
		return nil, err
	}

	// P: a network namespace of this thread only. It is owned by U (the thread's
	// user namespace), which is what lets a veth end cross into S: both ends must
	// live in namespaces whose owner we hold CAP_NET_ADMIN over.
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return nil, os.NewSyscallError("unshare(CLONE_NEWNET)", err)
	}
	fdP, err := openThreadNetNS()
	if err != nil {
		return nil, err
	}
	defer unix.Close(fdP)

	// P forwards nothing: devconf_inherit_init_net=0 copies the host's IPv4 "all"
	// settings (including forwarding=1 on a router host) into new namespaces.
	if err := writeSysctl("net/ipv4/conf/all/forwarding", "0"); err != nil {
		return nil, err
	}
	if err := disableIPv6("all"); err != nil {
		return nil, err
	}
	if err := disableIPv6("default"); err != nil {
		return nil, err
	}

	hp, err := netlink.NewHandle() // sockets of this thread: in P
	if err != nil {
		return nil, fmt.Errorf("netlink handle in proxy namespace: %w", err)
	}
	defer hp.Close()
	// lo by ioctl, as SetupNone brings it up (loopbackUp): the netlink
	// lookup it replaces (a dump of lo's attributes, parsed) was a third
	// of this step and, as the process's first link lookup, most of it.
	loP, err := loopbackUp()
	if err != nil {
		return nil, err
	}

	tcp, tcpAddr, err := transparentListener()
	if err != nil {
		return nil, err
	}
	files.add(tcp)

	// nftables first: when nf_tables or nft_tproxy is missing this fails before S
	// has seen any change but the IPv6 default.
	if err := installRules(fdP, gw, tcpAddr.Port()); err != nil {
		return nil, err
	}

	la := netlink.NewLinkAttrs()
	la.Name = ProxyIface
	la.MTU = vethMTU
	veth := &netlink.Veth{LinkAttrs: la, PeerName: SandboxIface, PeerTxQLen: -1,
		PeerMTU: vethMTU, PeerNamespace: netlink.NsFd(fdS)}
	if err := hp.LinkAdd(veth); err != nil {
		return nil, fmt.Errorf("create veth %s (peer %s in sandbox): %w", ProxyIface, SandboxIface, err)
	}
	vp, err := linkOf(ProxyIface)
	if err != nil {
		return nil, err
	}
	if err := hp.AddrAdd(vp, &netlink.Addr{IPNet: ipnet(gw, bits)}); err != nil {
		return nil, fmt.Errorf("address %s/%d on %s: %w", gw, bits, ProxyIface, err)
	}
	if err := hp.LinkSetUp(vp); err != nil {
		return nil, fmt.Errorf("set %s up: %w", ProxyIface, err)
	}
	// Policy routing for TPROXY: marked packets (whatever their destination) are
	// delivered locally, to the socket the tproxy expression assigned
	// (Documentation/networking/tproxy.rst).
	rule := netlink.NewRule()
	rule.Family = unix.AF_INET
	rule.Mark = TProxyMark
	rule.Table = TProxyTable
	rule.Priority = 100
	if err := hp.RuleAdd(rule); err != nil {
		return nil, fmt.Errorf("ip rule fwmark %d lookup %d: %w", TProxyMark, TProxyTable, err)
	}
	if err := hp.RouteAdd(&netlink.Route{
		Family: unix.AF_INET, Type: unix.RTN_LOCAL, Scope: unix.RT_SCOPE_HOST,
		Dst: ipnet(netip.IPv4Unspecified(), 0), LinkIndex: loP, Table: TProxyTable,
	}); err != nil {
		return nil, fmt.Errorf("ip route local 0.0.0.0/0 dev lo table %d: %w", TProxyTable, err)
	}

	dns, err := udpSocket(netip.AddrPortFrom(gw, 53))
	if err != nil {
		return nil, err
	}
	files.add(dns)

	// Back to S on this same thread (it is discarded afterwards anyway) to configure
	// the sandbox side with sockets that are certainly in S.
	if err := unix.Setns(fdS, unix.CLONE_NEWNET); err != nil {
		return nil, os.NewSyscallError("setns(sandbox netns)", err)
	}
	hs, err := netlink.NewHandle()
	if err != nil {
		return nil, fmt.Errorf("netlink handle in sandbox namespace: %w", err)
	}
	defer hs.Close()
	if _, err := loopbackUp(); err != nil { // in S now: this thread's namespace
		return nil, err
	}
	if err := disableIPv6(SandboxIface); err != nil {
		return nil, err
	}
	vs, err := linkOf(SandboxIface)
	if err != nil {
		return nil, fmt.Errorf("in sandbox: %w", err)
	}
	if err := hs.AddrAdd(vs, &netlink.Addr{IPNet: ipnet(sb, bits)}); err != nil {
		return nil, fmt.Errorf("address %s/%d on %s: %w", sb, bits, SandboxIface, err)
	}
	if err := hs.LinkSetUp(vs); err != nil {
		return nil, fmt.Errorf("set %s up: %w", SandboxIface, err)
	}
	if err := hs.RouteAdd(&netlink.Route{LinkIndex: vs.Attrs().Index, Gw: gw.AsSlice(),
		Dst: ipnet(netip.IPv4Unspecified(), 0), Family: unix.AF_INET}); err != nil {
		return nil, fmt.Errorf("default route via %s in sandbox: %w", gw, err)
	}
	if err := sandboxRules(hs, gw); err != nil {
		return nil, err
	}
	// Carrier comes up asynchronously (linkwatch work); until then the qdisc drops
	// every packet, and the agent's first SYN would wait for a 1 s retransmit.
	// Both ends: an ARP reply from P sent before P's qdisc is active is lost too.
	if err := waitOperUp(hs, SandboxIface, 2*time.Second); err != nil {
		return nil, err
	}
	if err := waitOperUp(hp, ProxyIface, 2*time.Second); err != nil {
		return nil, err
	}
	// Verify rather than trust: S must have no IPv6 address or route on eth0.
	if a, err := hs.AddrList(vs, unix.AF_INET6); err != nil || len(a) > 0 {
		return nil, fmt.Errorf("sandbox %s still has IPv6 addresses %v (err %v): refusing to leave IPv6 to chance", SandboxIface, a, err)
	}
	if r, err := hs.RouteList(vs, unix.AF_INET6); err != nil || len(r) > 0 {
		return nil, fmt.Errorf("sandbox %s still has IPv6 routes %v (err %v): refusing to leave IPv6 to chance", SandboxIface, r, err)
	}
	return &Result{TCP: tcp, DNS: dns, SandboxAddr: sb, GatewayAddr: gw, ProxyAddr: tcpAddr, Mode: ModeTProxy}, nil
}

// waitOperUp polls until name is operationally up (carrier on, qdisc active).
func waitOperUp(h *netlink.Handle, name string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		l, err := h.LinkByName(name)
		if err != nil {
			return fmt.Errorf("find %s: %w", name, err)
		}
		if l.Attrs().OperState == netlink.OperUp {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not operationally up after %v (state %v)", name, limit, l.Attrs().OperState)
		}
		time.Sleep(500 * time.Microsecond)
	}
}

// sandboxRules makes non-DNS UDP and ICMP fail at the sender in S, before any
// packet exists: policy rules (ipproto/dport selectors, Linux >= 4.17) send them to
// a table whose only route is "unreachable" (connect/sendto fail with EHOSTUNREACH).
// Destinations in S's local table (127.0.0.0/8, its own address) are looked up
// first (rule 0), so UDP inside the sandbox keeps working. P rejects the same
// traffic again (a raw socket could bypass these rules; the agent has no
// CAP_NET_RAW, and P has no uplink anyway).
func sandboxRules(h *netlink.Handle, gw netip.Addr) error {
	dns := netlink.NewRule()
	dns.Family, dns.Priority, dns.Table = unix.AF_INET, 100, unix.RT_TABLE_MAIN
	dns.IPProto, dns.Dst, dns.Dport = unix.IPPROTO_UDP, ipnet(gw, 32), netlink.NewRulePortRange(53, 53)
	rules := []*netlink.Rule{dns}
	for i, proto := range []int{unix.IPPROTO_UDP, unix.IPPROTO_ICMP} {
		r := netlink.NewRule()
		r.Family, r.Priority, r.Table, r.IPProto = unix.AF_INET, 101+i, SandboxDenyTable, proto
		rules = append(rules, r)
	}
	for _, r := range rules {
		if err := h.RuleAdd(r); err != nil {
			return fmt.Errorf("sandbox ip rule %v: %w", r, err)
		}
	}
	if err := h.RouteAdd(&netlink.Route{Family: unix.AF_INET, Type: unix.RTN_UNREACHABLE,
		Dst: ipnet(netip.IPv4Unspecified(), 0), Table: SandboxDenyTable}); err != nil {
		return fmt.Errorf("sandbox route unreachable default table %d: %w", SandboxDenyTable, err)
	}
	return nil
}

// setupFallback builds the proxy-aware mode in S: loopback up, a TCP listener on
// 127.0.0.1:<ephemeral> for HTTP CONNECT / SOCKS5, and a DNS socket on 127.0.0.1:53.
// With a valid fake range, also SetupNone's refusal listeners (best effort), so
// that a program that ignores the proxy variables hears why it got nowhere.
func setupFallback(fdS int, fake netip.Prefix) (res *Result, err error) {
	loIndex, err := sandboxLoopback(fdS)
	if err != nil {
		return nil, err
	}
	lo := netip.AddrFrom4([4]byte{127, 0, 0, 1})
	tcp, addr, err := listener(netip.AddrPortFrom(lo, 0), false)
	if err != nil {
		return nil, err
	}
	res = &Result{TCP: tcp, SandboxAddr: lo, GatewayAddr: lo, ProxyAddr: addr, Mode: ModeProxyAware}
	// DNS is optional here: proxy-aware clients send names to the proxy. Port 53
	// needs CAP_NET_BIND_SERVICE in U, which init still has at this point.
	if dns, err := udpSocket(netip.AddrPortFrom(lo, 53)); err == nil {
		res.DNS = dns
	}
	if fake.IsValid() {
		if ls, err := refusalListeners(loIndex, fake); err == nil {
			res.Listeners = ls
		}
	}
	return res, nil
}

// refusalListeners routes fake to S's loopback (`local FAKE dev lo` in the local
// table) and listens on 0.0.0.0 at each of RefusalPorts; see SetupNone.
func refusalListeners(lo int, fake netip.Prefix) (ls []*os.File, err error) {
	if !fake.IsValid() || !fake.Addr().Is4() {
		return nil, fmt.Errorf("nsnet: fake range %v: %w", fake, ErrBadSubnet)
	}
	if err := addLocalRoute(lo, fake); err != nil {
		return nil, fmt.Errorf("route local %s dev lo in sandbox: %w", fake, err)
	}
	var files cleanup
	defer func() {
		if err != nil {
			files.close()
		}
	}()
	for _, port := range RefusalPorts {
		f, _, err := listener(netip.AddrPortFrom(netip.IPv4Unspecified(), port), false)
		if err != nil {
			return nil, err
		}
		ls = append(ls, files.add(f))
	}
	return ls, nil
}

// SetupNone builds --net none's refusal plumbing in S, the sandbox's own
// network namespace. It runs where Setup runs (init, CAP_NET_ADMIN and
// CAP_NET_BIND_SERVICE in U, before Landlock and seccomp) and gives S no
// route anywhere but itself:
//
//   - lo up;
//   - `local FAKE dev lo` in S's local table: every address of fake (jail's
//     fake range, which its DNS hands out) is the sandbox's own, so a connect
//     to one reaches a listener in S instead of failing with ENETUNREACH;
//   - a UDP socket on 127.0.0.1:53 for the resolver (ResolvConf(127.0.0.1));
//   - TCP listeners on 0.0.0.0 at ports 80, 443 and 22 (RefusalPorts),
//     which the supervisor serves with refusals only: a 403 naming the
//     host, a TLS alert, a reset. 127.0.0.1:80 (ProxyAddr) is the proxy the
//     *_PROXY variables name;
//   - the reset watch (Result.Resets; CAP_NET_RAW in U), through which the
//     supervisor hears of the connects to a fake address at any other
//     port, which the loopback resets.
//
// Ports below 1024 need CAP_NET_BIND_SERVICE in U, which only init has: the
// agent can never bind one of these ports itself.
func SetupNone(fake netip.Prefix) (*Result, error) {
	start := time.Now()
	if !fake.IsValid() || !fake.Addr().Is4() {
		return nil, fmt.Errorf("nsnet: fake range %v: %w", fake, ErrBadSubnet)
	}
	// S is the calling thread's namespace and nothing here changes a
	// thread's namespace, so no thread is made and discarded for it (as
	// Setup must): the goroutine is only kept on its thread, so that every
	// socket below is made in the same namespace even in a caller whose
	// threads are not all in S.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	res, err := setupNone(fake)
	if err != nil {
		return nil, fmt.Errorf("nsnet: `net` none refusal plumbing: %w", err)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// setupNone is SetupNone's work on the calling (locked) thread: lo up, the
// fake range's local route (raw rtnetlink: no netlink handle), the
// refusal listeners and the DNS socket.
func setupNone(fake netip.Prefix) (res *Result, err error) {
	lo, err := loopbackUp()
	if err != nil {
		return nil, err
	}
	ls, err := refusalListeners(lo, fake)
	if err != nil {
		return nil, err
	}
	loAddr := netip.AddrFrom4([4]byte{127, 0, 0, 1})
	res = &Result{Mode: ModeNone, SandboxAddr: loAddr, GatewayAddr: loAddr,
		ProxyAddr: netip.AddrPortFrom(loAddr, RefusalPorts[0]), Listeners: ls}
	if res.DNS, err = udpSocket(netip.AddrPortFrom(loAddr, 53)); err != nil {
		cleanup(ls).close()
		return nil, err
	}
	// Best effort: without the watch, a refused name's other ports are
	// reset unsaid, as before it.
	if w, err := resetWatch(fake, RefusalPorts); err == nil {
		res.Resets = w
	}
	return res, nil
}

// sandboxLoopback moves this thread (locked, discarded afterwards) into the
// sandbox's namespace S and brings lo up there: the start of the fallback's
// sandbox side. It returns lo's index.
func sandboxLoopback(fdS int) (int, error) {
	if err := enterNetNS(fdS); err != nil {
		return 0, err
	}
	return loopbackUp()
}

// loopbackUp sets IFF_UP on lo of the calling thread's network namespace and
// returns lo's index, with three ioctls on a datagram socket: the same
// result as a netlink LinkByName and LinkSetUp, whose first lookup in a
// process (link attribute parsing) cost 1.5 to 8 ms of every --net none
// start.
func loopbackUp() (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, os.NewSyscallError("socket(lo ioctl)", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return 0, err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFINDEX, ifr); err != nil {
		return 0, fmt.Errorf("find lo: %w", err)
	}
	index := int(int32(ifr.Uint32()))
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return 0, fmt.Errorf("read lo's flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return 0, fmt.Errorf("set lo up: %w", err)
	}
	return index, nil
}

// linkOf is the device called name in the calling thread's network
// namespace, as its index (found by ioctl), for the netlink calls that act
// on a device by index (AddrAdd, LinkSetUp, RouteAdd's LinkIndex): a
// LinkByName dumps and parses all of the device's attributes (0.1-0.3 ms
// each here) only for that index.
func linkOf(name string) (netlink.Link, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket(index ioctl)", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return nil, err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFINDEX, ifr); err != nil {
		return nil, fmt.Errorf("find %s: %w", name, err)
	}
	return &netlink.Device{LinkAttrs: netlink.LinkAttrs{Name: name, Index: int(int32(ifr.Uint32()))}}, nil
}

// enterNetNS moves the calling (locked, to-be-discarded) thread into the namespace
// fd refers to, unless it is already there.
func enterNetNS(fd int) error {
	var want, have unix.Stat_t
	if err := unix.Fstat(fd, &want); err != nil {
		return os.NewSyscallError("fstat(netns)", err)
	}
	const p = "/proc/thread-self/ns/net"
	if err := unix.Stat(p, &have); err != nil {
		return &os.PathError{Op: "stat", Path: p, Err: err}
	}
	if want.Dev == have.Dev && want.Ino == have.Ino {
		return nil
	}
	return os.NewSyscallError("setns(sandbox netns)", unix.Setns(fd, unix.CLONE_NEWNET))
}

func ipnet(a netip.Addr, bits int) *net.IPNet {
	return &net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(bits, a.BitLen())}
}

// writeSysctl writes /proc/sys/<name> for the calling thread's network namespace
// (net sysctls are looked up in current->nsproxy->net_ns, i.e. per thread).
func writeSysctl(name, val string) error {
	p := "/proc/sys/" + name
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err // *os.PathError names the path
	}
	_, err = f.WriteString(val)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// disableIPv6 sets net.ipv6.conf.<dev>.disable_ipv6=1; a kernel without IPv6 (no
// /proc/sys/net/ipv6) needs nothing.
func disableIPv6(dev string) error {
	if _, err := os.Stat("/proc/sys/net/ipv6"); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return writeSysctl("net/ipv6/conf/"+dev+"/disable_ipv6", "1")
}

// transparentListener is the TPROXY target: IP_TRANSPARENT lets it accept flows
// addressed to any destination, and the accepted socket's local address is that
// original destination (Documentation/networking/tproxy.rst). Bound to 127.0.0.1 so
// that nothing reaches it except through the tproxy rule.
func transparentListener() (*os.File, netip.AddrPort, error) {
	return listener(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), 0), true)
}

func listener(ap netip.AddrPort, transparent bool) (*os.File, netip.AddrPort, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, ap, os.NewSyscallError("socket(tcp)", err)
	}
	fail := func(op string, err error) (*os.File, netip.AddrPort, error) {
		unix.Close(fd)
		return nil, ap, os.NewSyscallError(op, err)
	}
	if transparent {
		if err := unix.SetsockoptInt(fd, unix.SOL_IP, unix.IP_TRANSPARENT, 1); err != nil {
			return fail("setsockopt(IP_TRANSPARENT)", err)
		}
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return fail("setsockopt(SO_REUSEADDR)", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: ap.Addr().As4(), Port: int(ap.Port())}); err != nil {
		return fail("bind(tcp "+ap.String()+")", err)
	}
	if err := unix.Listen(fd, 4096); err != nil {
		return fail("listen", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return fail("getsockname", err)
	}
	in4, ok := sa.(*unix.SockaddrInet4)
	if !ok {
		return fail("getsockname", unix.EAFNOSUPPORT)
	}
	bound := netip.AddrPortFrom(netip.AddrFrom4(in4.Addr), uint16(in4.Port))
	return os.NewFile(uintptr(fd), "tcp-listener:"+bound.String()), bound, nil
}

func udpSocket(ap netip.AddrPort) (*os.File, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket(udp)", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: ap.Addr().As4(), Port: int(ap.Port())}); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("bind(udp "+ap.String()+")", err)
	}
	return os.NewFile(uintptr(fd), "udp:"+ap.String()), nil
}

// DialInSandbox connects to a server listening inside the sandbox on port, for
// port publishing (-p HOSTPORT:PORT). Call it in init (any thread: all of init's
// threads are in S) when the supervisor asks, once per incoming connection, and send
// the returned connected socket to the supervisor with SCM_RIGHTS; the supervisor
// wraps it with net.FileConn and splices it to the host-side connection.
//
// It tries 127.0.0.1, then ::1 (servers that listen on "localhost" only), so servers
// bound to loopback, to 0.0.0.0 or to [::] are all reachable; a server bound only to
// the sandbox's eth0 address is reached through 127.0.0.1 too when it binds 0.0.0.0,
// and otherwise through sandboxAddr if that is valid. Nothing here needs a
// capability, so it works after init dropped them; a Landlock ruleset that handles
// LANDLOCK_ACCESS_NET_CONNECT_TCP on init must allow the published ports.
func DialInSandbox(ctx context.Context, port uint16, sandboxAddr netip.Addr) (*os.File, error) {
	targets := []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}
	if sandboxAddr.IsValid() && !sandboxAddr.IsLoopback() {
		targets = append(targets, sandboxAddr)
	}
	var d net.Dialer
	var last error
	for _, a := range targets {
		c, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(a, port).String())
		if err != nil {
			last = err
			if ctx.Err() != nil {
				break
			}
			continue
		}
		f, err := c.(*net.TCPConn).File()
		c.Close()
		if err != nil {
			return nil, fmt.Errorf("nsnet: dial in sandbox port %d: %w", port, err)
		}
		return f, nil
	}
	return nil, fmt.Errorf("nsnet: nothing accepts connections on port %s inside the sandbox (start the server first, listening on 127.0.0.1, ::1 or 0.0.0.0): %w",
		strconv.Itoa(int(port)), last)
}

// Probe builds the transparent path in a throwaway network namespace (veth pair,
// nftables table with the tproxy rule, policy routing) and tears it down, for
// `jail doctor`. Like Setup it needs CAP_NET_ADMIN and CAP_SYS_ADMIN in the caller's
// user namespace (run it in a sandbox init); on the host as an ordinary user it
// reports that. A nil error means Setup will use ModeTProxy.
func Probe() error {
	_, err := onDiscardedThread(func() (*Result, error) {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return nil, os.NewSyscallError("unshare(CLONE_NEWNET)", err)
		}
		fd, err := openThreadNetNS()
		if err != nil {
			return nil, err
		}
		defer unix.Close(fd)
		h, err := netlink.NewHandle()
		if err != nil {
			return nil, fmt.Errorf("netlink handle: %w", err)
		}
		defer h.Close()
		if _, err := loopbackUp(); err != nil {
			return nil, err
		}
		la := netlink.NewLinkAttrs()
		la.Name = ProxyIface
		if err := h.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: SandboxIface, PeerTxQLen: -1}); err != nil {
			return nil, fmt.Errorf("create veth: %w", err)
		}
		l, a, err := transparentListener()
		if err != nil {
			return nil, err
		}
		defer l.Close()
		if err := installRules(fd, netip.MustParseAddr("10.201.0.1"), a.Port()); err != nil {
			return nil, err
		}
		return nil, nil
	})
	if err != nil {
		return fmt.Errorf("nsnet: probe: %w: %w", ErrTProxyUnavailable, err)
	}
	return nil
}
