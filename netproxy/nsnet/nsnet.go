// Package nsnet builds the network plumbing for jail's egress mode "allow": it runs
// inside the sandbox's init (user namespace U, network namespace S, full capabilities
// in U, before they are dropped) and produces two sockets that the supervisor uses to
// see every TCP flow and every DNS query the sandbox makes.
//
// Shape (see /work/shared/DESIGN.md "Network"):
//
//	S (sandbox)                       P (proxy side, owned by U, no uplink)
//	eth0 10.201.0.2/30  <--veth-->    veth0 10.201.0.1/30
//	default via .1                    nftables: TCP from veth0 -> TPROXY to one
//	IPv6 disabled                     IP_TRANSPARENT listener; UDP .1:53 -> DNS socket;
//	UDP except .1:53, ICMP ->         other UDP -> ICMP port unreachable; ICMP/IPv6 dropped;
//	  table 200: unreachable          nothing forwarded; no uplink at all;
//	                                  fwmark 1 -> table 100: local 0.0.0.0/0 dev lo
//
// Setup creates P on one locked OS thread with unshare(CLONE_NEWNET); that thread is
// never unlocked, so the Go runtime destroys it when Setup returns and no thread of
// the process stays in P. P lives only as long as the two returned sockets: once the
// supervisor and init have closed every copy, the kernel destroys P and the veth pair
// with it (teardown leaves nothing on the host; nothing was ever on the host).
//
// Kernel behaviour: needs CONFIG_VETH, CONFIG_NF_TABLES(_INET), CONFIG_NFT_TPROXY,
// CONFIG_NF_TPROXY_IPV4, CONFIG_NFT_REJECT_INET and policy routing (all mainstream
// since Linux 4.19, when nft_tproxy was merged). Creating a network namespace from a
// user namespace and running nf_tables in it is allowed since Linux 3.8 / 3.13; some
// distributions restrict unprivileged user namespaces (Ubuntu 24.04 AppArmor,
// kernel.unprivileged_userns_clone=0), which is the runtime's concern, not this
// package's. When the TPROXY path cannot be built, Setup falls back to a listener on
// S's loopback (Mode "proxy-aware") and says why, so the runtime can warn and set
// *_PROXY variables. Available gives `jail doctor` a static answer; Probe a live one.
package nsnet

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"
)

// Modes reported in Result.Mode.
const (
	ModeTProxy     = "tproxy"
	ModeProxyAware = "proxy-aware"
	// ModeNone is --net none with jail's refusal plumbing (SetupNone): no
	// route out of the sandbox, only jail's answers inside it.
	ModeNone = "none"
)

// RefusalPorts are the ports SetupNone listens on for flows to refusal
// addresses: HTTP and HTTPS, where a refusal can be answered in the client's
// protocol, and SSH (git push over ssh), whose client hears a reset, which
// the user hears explained: without a listener there the sandbox's loopback
// refused the connect and jail never learnt of it. Only ports below 1024:
// a listener on another port would take it from the agent's own servers.
// The first one is also the proxy port (ProxyAddr).
var RefusalPorts = []uint16{80, 443, 22}

// Interface names. SandboxIface is what the agent sees in S; ProxyIface lives in P.
const (
	SandboxIface = "eth0"
	ProxyIface   = "veth0"
)

// Routing constants in P: packets marked TProxyMark by the nftables rule are routed
// by table TProxyTable, which delivers every destination locally (to the listener).
const (
	TProxyMark  = 1
	TProxyTable = 100
	// SandboxDenyTable (in S) holds only "unreachable default": non-DNS UDP and
	// ICMP are routed there.
	SandboxDenyTable = 200
	// NFTTable is the name of the nftables tables (families ip and ip6) created in P.
	NFTTable = "jail"
)

// DefaultSubnet is used when Config.Subnet is the zero value. It is a /30 in 10/8
// that is unlikely to collide with a real destination; a destination inside the
// subnet is unreachable from the sandbox (it is on-link), so pick another one with
// Config.Subnet if the allowlist needs 10.201.0.0/30.
var DefaultSubnet = netip.MustParsePrefix("10.201.0.0/30")

// Config says how to build the plumbing.
type Config struct {
	// Subnet is an IPv4 prefix of length 30 or shorter; the gateway (P side) gets
	// the first host address (.1), the sandbox the second (.2). Zero: DefaultSubnet.
	Subnet netip.Prefix
	// Fallback forces the proxy-aware mode (hidden test flag).
	Fallback bool
	// Fake is jail's fake range. The proxy-aware mode routes it to the
	// sandbox's loopback and listens on RefusalPorts there (Result.Listeners),
	// so that a program that ignores the proxy variables still meets jail.
	Fake netip.Prefix
	// HostPorts are the host loopback ports the sandbox may reach
	// (--allow-host-port): Setup listens on 127.0.0.1 in S at each
	// (Result.HostPorts), so that the sandbox's own localhost:PORT is the
	// host's, as host.jail.internal:PORT is.
	HostPorts []uint16
}

// Result is what Setup built. TCP and DNS are owned by the caller: send them to the
// supervisor with SCM_RIGHTS and close the local copies (close through the *os.File,
// exactly once).
type Result struct {
	// Listeners, in ModeNone (and in ModeProxyAware when Config.Fake is set
	// and they could be made), are TCP listeners on 0.0.0.0 in S, one per
	// RefusalPorts entry, in that order. An accepted conn's LocalAddr is the
	// address the sandbox dialled (a fake address, or in ModeNone ProxyAddr
	// for a proxy request). In ModeNone TCP is nil.
	Listeners []*os.File
	// TCP is a listening TCP socket. In ModeTProxy it lives in P, has IP_TRANSPARENT,
	// and every TCP connection from the sandbox arrives on it; wrap it with
	// net.FileListener: an accepted conn's LocalAddr() is the ORIGINAL destination
	// the sandbox dialled, RemoteAddr() is SandboxAddr:port. In ModeProxyAware it
	// lives in S on 127.0.0.1 (ProxyAddr) and expects HTTP CONNECT or SOCKS5.
	TCP *os.File
	// DNS is a bound UDP socket (GatewayAddr:53); wrap it with net.FilePacketConn.
	// Nil only in ModeProxyAware when port 53 could not be bound.
	DNS *os.File
	// SandboxAddr is the sandbox's address (S side); GatewayAddr the resolver and
	// default gateway the sandbox uses. In ModeProxyAware both are 127.0.0.1.
	SandboxAddr, GatewayAddr netip.Addr
	// ProxyAddr is the address TCP is bound to: 127.0.0.1:<port> in P (ModeTProxy,
	// not reachable as such by the sandbox) or in S (ModeProxyAware, what *_PROXY
	// variables must name).
	ProxyAddr netip.AddrPort
	// Mode is ModeTProxy, ModeProxyAware or ModeNone.
	Mode string
	// Reason says, in ModeProxyAware, why the transparent path is not in use; it
	// wraps ErrTProxyUnavailable or ErrFallbackForced. Nil in ModeTProxy.
	Reason error
	// Resets is the reset watch: a non-blocking raw TCP socket in S that
	// receives only the kernel's resets of connects to the sandbox's own
	// loopback at a port where nothing listens (every mode: the host's
	// loopback may have a server there, which --allow-host-port would
	// make the sandbox's) and, in ModeNone, to a fake address at a port no
	// refusal listener has (a refused name's database port, ssh -p 2222,
	// git://), which no listener hears; read each packet with ParseReset.
	// Nil where it could not be made (best effort: those flows are then
	// unsaid).
	Resets *os.File
	// HostPorts, in the egress modes, are TCP listeners on 127.0.0.1 in S,
	// one per Config.HostPorts entry that could be bound, in that order:
	// the supervisor relays what they accept to the host's loopback at
	// the same port (an accepted conn's LocalAddr names it).
	// HostPortsTaken are the ports jail's own listeners in S hold already
	// (the fallback's refusal listeners on 80, 443, 22): the sandbox
	// reaches those only as host.jail.internal:PORT.
	HostPorts      []*os.File
	HostPortsTaken []uint16
	// Elapsed is how long Setup took.
	Elapsed time.Duration
}

// ErrTProxyUnavailable is wrapped by Result.Reason when the kernel or the
// environment cannot build the transparent path.
var ErrTProxyUnavailable = errors.New("transparent egress (veth + nftables TPROXY) unavailable")

// ErrFallbackForced is wrapped by Result.Reason when Config.Fallback was set.
var ErrFallbackForced = errors.New("proxy-aware mode forced by configuration")

// ErrBadSubnet is returned for a Config.Subnet that is not IPv4 with room for two hosts.
var ErrBadSubnet = errors.New("subnet must be IPv4 with prefix length <= 30")

// ErrUnsupported is returned on systems other than Linux.
var ErrUnsupported = errors.New("network namespaces are Linux-only")

// addrs returns the gateway (.1) and sandbox (.2) addresses of the subnet.
func addrs(p netip.Prefix) (gw, sb netip.Addr, bits int, err error) {
	if !p.IsValid() {
		p = DefaultSubnet
	}
	if !p.Addr().Is4() || p.Bits() > 30 || p.Bits() < 1 {
		return gw, sb, 0, fmt.Errorf("nsnet: subnet %s: %w", p, ErrBadSubnet)
	}
	p = p.Masked()
	gw = p.Addr().Next()
	sb = gw.Next()
	return gw, sb, p.Bits(), nil
}

// ResolvConf returns the resolv.conf the sandbox must see (bound over
// /etc/resolv.conf by the runtime): only gw as nameserver, no search domains (a
// search list would turn every short name into extra queries that only produce
// NXDOMAIN), and short timeouts because the resolver is local.
func ResolvConf(gw netip.Addr) []byte {
	var b strings.Builder
	b.WriteString("# generated by jail: DNS goes to jail's filtering resolver\n")
	if gw.IsValid() {
		fmt.Fprintf(&b, "nameserver %s\n", gw.Unmap().WithZone(""))
	}
	b.WriteString("options timeout:2 attempts:2\n")
	return []byte(b.String())
}

// ProxyEnv returns the environment lines that point proxy-aware programs at
// jail's proxy at addr (netproxy) (host:port the sandbox can reach: the fallback
// listener, or the Endpoint of the transparent mode and --net none), in both
// spellings since tools disagree on case. socks5h makes the proxy resolve
// names, which is the only way names resolve in fallback mode. noProxy adds
// names that stay direct besides loopback (the sandbox's own hostname).
func ProxyEnv(addr string, noProxy ...string) []string {
	httpURL := "http://" + addr
	vals := [][2]string{
		{"HTTP_PROXY", httpURL},
		{"HTTPS_PROXY", httpURL},
		{"ALL_PROXY", "socks5h://" + addr},
		{"NO_PROXY", strings.Join(append([]string{"localhost", "127.0.0.1", "::1"}, noProxy...), ",")},
	}
	out := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		out = append(out, v[0]+"="+v[1], strings.ToLower(v[0])+"="+v[1])
	}
	return out
}
