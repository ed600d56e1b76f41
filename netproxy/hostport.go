package netproxy

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"time"
)

// ServeHostPort relays the flows accepted on ln, a listener on the
// sandbox's own 127.0.0.1 at an --allow-host-port port (nsnet's
// Result.HostPorts), to the host's loopback at the same port: the flow
// host.jail.internal:PORT would be, with its decision, its dial of
// 127.0.0.1 (then ::1) and its event (mode "host-port"). So a program that knows the
// host's server as localhost:PORT (an Ollama client, an MCP server's URL,
// a database's default) reaches it unchanged inside.
//
// The client's first bytes are not held to a name: the name it dialled
// is its own loopback, which any Host header may name (localhost,
// 127.0.0.1); the port is what the user allowed, as for
// host.jail.internal. A port the policy does not open (it cannot
// happen: init listens only at the policy's ports) is refused.
func (p *Proxy) ServeHostPort(ctx context.Context, ln net.Listener) error {
	return p.serve(ctx, ln, p.hostPort, nil)
}

func (p *Proxy) hostPort(ctx context.Context, c net.Conn) {
	f := &flow{start: time.Now(), mode: "host-port", client: c.RemoteAddr().String(), name: HostInternal}
	dst, err := p.origDst(c)
	if err != nil || !dst.IsValid() {
		p.reject(f, c, "no original destination")
		return
	}
	f.dst = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), dst.Port())
	if d := p.decide(HostInternal, netip.Addr{}, dst.Port()); !d.Allow {
		p.refuse(f, c, d, sniffResult{}, false)
		return
	}
	p.connectAndRelay(ctx, f, c, netip.Addr{}, false)
}

// HostLoopbackRefusal is the event of a connect the sandbox's own
// loopback refused at port (nothing inside listens there) while the
// host's loopback has a server at that port: a program that knows the
// host's server as localhost:PORT (an Ollama client, an MCP server's URL)
// hears "connection refused", which reads as a server that is down. The
// kernel refused the flow; the event says why and the flag that makes
// the sandbox's 127.0.0.1:PORT the host's (ServeHostPort). Mode
// "connect", as Unheard's.
func HostLoopbackRefusal(port uint16) Event {
	reason := "the sandbox's loopback is its own; the server listening there is the host's"
	return Event{Time: time.Now(), Type: "net", Decision: decDeny, Addr: "127.0.0.1", Port: port, Mode: "connect",
		Reason: reason, Public: reason, Hint: "`allow-host-port` " + strconv.Itoa(int(port))}
}
