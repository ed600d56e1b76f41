// Package netproxy is the supervisor side of jail's egress allowlist: it turns
// the --allow-domain/--deny-domain/--allow-ip/--add-host/--allow-host-port/
// --publish flags into a Policy, answers the sandbox's DNS with fake addresses,
// and relays every TCP flow the sandbox makes to the real destination only when
// the Policy allows it.
//
// It runs in the supervisor (host user and network namespaces). The sockets it
// serves on are created elsewhere (package netproxy/nsnet, inside the sandbox's
// user namespace) and handed over with SCM_RIGHTS:
//
//   - a TCP listener that receives every flow from the sandbox through nftables
//     TPROXY: an accepted conn's LocalAddr is the original destination;
//   - a UDP socket on the sandbox's gateway port 53, served by DNS.
//
// DNS answers A queries for allowed names (plus host.jail.internal and --add-host
// names) with stable fake addresses from 198.18.0.0/16, and for every other
// valid name with a refusal address from 198.19.0.0/16 (both RFC 2544
// benchmarking space, never routed); AAAA and other types with NOERROR and no
// answer (IPv6 is not offered); invalid names with NXDOMAIN. Nothing is ever
// forwarded to a real resolver from the sandbox. A refused name resolves so
// that its client connects and hears the refusal in its own protocol (see
// refuse.go: an HTTP 403 naming the host and the flag, a TLS access_denied
// alert), where NXDOMAIN, a reset or a timeout make clients such as npm retry
// for more than a minute.
//
// Proxy maps each flow's original destination back to a name (a fake address
// that DNS never handed out is denied), checks name and port against the Policy,
// inspects the client's first bytes (TLS ClientHello SNI or HTTP/1 Host must be
// the very name the fake address stands for, so domain fronting through another
// SNI is refused), resolves the name on the host at dial time and refuses
// loopback, link-local (cloud metadata), private (RFC 1918, ULA), shared
// (CGNAT), unspecified, multicast, reserved and the host's own addresses unless
// --allow-ip (or, for private and shared ranges, an --add-host pin) says
// otherwise, dials the checked address (never the name again, so DNS rebinding
// cannot swap it), replays the inspected bytes and then relays both directions
// with splice(2). A client that sends nothing for FirstByteWait (200 ms) is
// dialled anyway and its first bytes are checked when they come: a
// server-first protocol (SMTP, MySQL) speaks only once dialled. The proxy
// learns such a destination (its server spoke before the client, soon after
// the dial) and dials its later flows at once, with the same check; the
// well-known ports of those protocols (SMTP's, MySQL's) start learned
// (serverfirst.go).
//
// On a plaintext HTTP/1 flow every request head, not only the first, must
// claim the flow's name: the request direction is followed through its
// message framing (Content-Length, chunked, pipelining, Upgrade), each head is
// checked before a byte of it goes upstream, and bodies are still spliced.
// Cleartext HTTP/2 (prior knowledge or Upgrade: h2c) is refused. Inside TLS
// nothing is visible: only the ClientHello's SNI is checked.
//
// Behind the host's own proxy (Upstream, from HTTPS_PROXY, HTTP_PROXY,
// ALL_PROXY and NO_PROXY), allowed flows are chained through it with HTTP
// CONNECT: the policy and the first-bytes check decide before anything is
// sent to it, and names it carries are resolved by it, not by the host.
//
// Every refusal is an Event with the flag that would allow it (Hint) and the
// text the sandbox may read (Public); the proxy writes nothing for the user
// itself: the supervisor turns events into notices and records.
//
// When TPROXY cannot be set up, Proxy.ServeFallback offers the same decisions as
// an HTTP proxy (CONNECT and absolute-form requests) and a SOCKS5 (CONNECT) server,
// which only reaches programs that honour the variables from nsnet.ProxyEnv. The same
// proxy also answers at Proxy.Endpoint in the transparent mode, so that
// proxy-aware clients hear a refusal of an https:// URL as an HTTP 403 too,
// with the refusal in its status line (refusalConnect403).
//
// Two more setups serve refusals only; the supervisor runs them with a Proxy
// whose Dial and Resolver fail by construction, so nothing they accept can
// leave:
//
//   - --net none: nsnet.SetupNone gives the sandbox's own network namespace
//     jail's DNS on 127.0.0.1:53, a local route for the fake ranges and
//     listeners on ports 80, 443 and 22, served with an empty Policy, so every
//     name is refused with its flag (127.0.0.1:80 is also the Endpoint the
//     variables name);
//   - the proxy-aware fallback: the same listeners on the sandbox's loopback,
//     with Proxy.Bypass set, so that a program ignoring the variables hears
//     that egress goes through them, and a refused name its usual refusal.
//
// Kernel behaviour: splice between two TCP sockets has been used by Go's
// (*net.TCPConn).ReadFrom since Go 1.11 on every Linux kernel jail supports; on
// other systems the same code path copies through user space. Nothing here needs
// privileges or a particular kernel version; the package builds on every GOOS.
package netproxy
