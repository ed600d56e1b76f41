package netproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Resolver resolves names on the host. *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Defaults for the Proxy's zero-valued knobs.
const (
	DefaultFirstByteWait = 200 * time.Millisecond
	DefaultSniffTimeout  = 5 * time.Second
	DefaultDialTimeout   = 10 * time.Second
	// DefaultRefuseWait is how long a refused flow's client may take to send
	// its first bytes (for a refusal in its protocol) before it is reset.
	// Longer than FirstByteWait, since nothing waits upstream: GnuTLS (git)
	// loads the system's certificates between connect and ClientHello, which
	// took 0.7 s on a loaded machine.
	DefaultRefuseWait = 3 * time.Second
	// DefaultMaxFlows bounds concurrent flows per Serve. Each flow costs the
	// supervisor 2 sockets + 2 splice pipes (6 fds), 2 goroutines and up to
	// 64 KiB while its first bytes are inspected: the bound keeps a hostile
	// sandbox from exhausting the supervisor's fds (it is not in the
	// sandbox's cgroup) or its memory (worst case 128 MiB).
	DefaultMaxFlows = 2048
)

// Proxy relays the sandbox's TCP flows that the Policy allows. Set Policy and
// Fakes (shared with the DNS); everything else has a working zero value.
type Proxy struct {
	Policy *Policy
	Fakes  *FakeIPs
	// OnEvent receives every flow's event (audit trail, the user's notices,
	// the sandbox's denial record); may be nil. Called from many goroutines,
	// synchronously: a refusal's event is handled before the client hears
	// the refusal. The proxy itself writes nothing for the user.
	OnEvent func(Event)
	// Endpoint, when valid, is the address the sandbox's *_PROXY variables
	// name: a flow to it is served as a proxy request (HTTP CONNECT,
	// absolute-form HTTP, SOCKS5; see ServeFallback) instead of a flow to
	// that address, with the same policy and checks.
	Endpoint netip.AddrPort
	// InSandbox says the listeners Serve is given live in the sandbox's own
	// network namespace (--net none, the fallback's refusal listeners) rather
	// than behind TPROXY: a flow to a loopback address there is the sandbox
	// reaching its own loopback, not a destination.
	InSandbox bool
	// Bypass, when set, refuses with this reason every flow that the policy
	// would let through: these listeners catch programs that ignore the
	// proxy variables in the proxy-aware fallback, where only the proxy may
	// reach out. Flows the policy refuses are refused as usual.
	Bypass string

	// FirstByteWait is how long the proxy waits for the client's first bytes
	// before dialing anyway (server-speaks-first protocols such as SMTP or
	// MySQL send nothing until the server does). The first client bytes are
	// inspected whenever they come, before anything is forwarded upstream, so
	// waiting longer never skips the SNI/Host check. A destination whose
	// server was seen to speak first is dialled without the wait
	// (serverfirst.go).
	FirstByteWait time.Duration
	// SniffTimeout bounds the time from the first client byte to a complete
	// ClientHello or HTTP head; a client slower than that is refused.
	SniffTimeout time.Duration
	// RefuseWait is FirstByteWait for a flow already refused (0 =
	// DefaultRefuseWait).
	RefuseWait  time.Duration
	DialTimeout time.Duration
	// MaxFlows bounds concurrently open flows; 0 = DefaultMaxFlows. Flows
	// beyond it are reset and audited as denied.
	MaxFlows int

	Resolver Resolver // nil = net.DefaultResolver (the host's resolver)
	// OrigDst returns a flow's original destination; nil = the accepted
	// conn's LocalAddr, which is what TPROXY provides. Tests inject it.
	OrigDst func(net.Conn) (netip.AddrPort, error)
	// HostAddrs lists the host's own addresses for the guard; nil = the
	// addresses of the supervisor's (host) network interfaces, cached 5 s.
	HostAddrs func() []netip.Addr
	// Dial opens the upstream connection to an address the guard passed;
	// nil = a net.Dialer with DialTimeout. Tests inject it to prove that a
	// refused address is never dialled at all.
	Dial func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)
	// Spell renders the option references (`allow-domain`) of the refusals
	// the sandbox reads (403 bodies and status lines) as its user would type
	// them; nil writes bare keys. The Events keep the references.
	Spell func(string) string
	// Upstream, when set, is the host's own proxy (UpstreamFromEnv): allowed
	// flows go through it with CONNECT unless NO_PROXY says otherwise.
	Upstream *Upstream

	addrMu   sync.Mutex
	addrs    []netip.Addr
	addrTime time.Time
	// speakers are the destinations learned to speak first (serverfirst.go).
	speakers serverFirst
}

// Serve accepts flows on ln until ctx is done or ln fails, handling each in
// its own goroutine. When ctx is done it closes ln and every open flow and
// returns nil after they have finished.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	return p.serve(ctx, ln, p.handleTransparent, p.handleQueued)
}

// handleQueued is a flow found queued at Serve's end: a refusal is made,
// said and recorded as any other; nothing is relayed (the run is ending).
func (p *Proxy) handleQueued(ctx context.Context, c net.Conn) { p.transparent(ctx, c, false) }

// serve accepts flows on ln, handling each with handle. At its end, the
// flows the kernel queued that Accept did not take yet (a client that
// connected and exited in the run's last instant) are given to atEnd (nil:
// closed unseen), so that their refusal is said and recorded, not lost
// with the listener.
func (p *Proxy) serve(ctx context.Context, ln net.Listener, handle, atEnd func(context.Context, net.Conn)) error {
	if p.Policy == nil || p.Fakes == nil {
		return errors.New("netproxy: Proxy needs Policy and Fakes")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	// The listener's end: each queued flow gets refuseWait to say what it
	// is. Nothing is relayed on this path: the listeners InSandbox marks
	// only refuse (the sandbox gives their proxy no way out), and the
	// host side's atEnd stops short of the relay (handleQueued).
	stop := context.AfterFunc(ctx, func() {
		if atEnd != nil {
			late, lateCancel := context.WithTimeout(context.Background(), p.refuseWait()+100*time.Millisecond)
			var lw sync.WaitGroup
			for _, c := range queued(ln) {
				lw.Add(1)
				go func() {
					defer lw.Done()
					// Bounded like any flow at Serve's end: closing
					// the conn unblocks a handler still reading.
					stopConn := context.AfterFunc(late, func() { c.Close() })
					defer stopConn()
					defer c.Close()
					atEnd(late, c)
				}()
			}
			lw.Wait()
			lateCancel()
		}
		ln.Close()
	})
	defer stop()
	maxFlows := p.MaxFlows
	if maxFlows <= 0 {
		maxFlows = DefaultMaxFlows
	}
	slots := make(chan struct{}, maxFlows)
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			// EMFILE and friends: back off like net/http does instead of spinning.
			if delay == 0 {
				delay = 5 * time.Millisecond
			} else if delay < time.Second {
				delay *= 2
			}
			select {
			case <-time.After(delay):
				continue
			case <-ctx.Done():
				return nil
			}
		}
		delay = 0
		select {
		case slots <- struct{}{}:
		default:
			f := &flow{start: time.Now(), mode: "tproxy", client: c.RemoteAddr().String()}
			if dst, err := p.origDst(c); err == nil {
				f.dst = dst
			}
			p.reject(f, c, fmt.Sprintf("more than %d open flows", maxFlows))
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			// Closing the conn when Serve stops unblocks a relay in progress.
			stopConn := context.AfterFunc(ctx, func() { c.Close() })
			defer stopConn()
			handle(ctx, c)
		}()
	}
}

func (p *Proxy) origDst(c net.Conn) (netip.AddrPort, error) {
	if p.OrigDst != nil {
		return p.OrigDst(c)
	}
	if ta, ok := c.LocalAddr().(*net.TCPAddr); ok {
		return ta.AddrPort(), nil
	}
	return netip.AddrPort{}, fmt.Errorf("local address %v is not TCP", c.LocalAddr())
}

// flow carries what is known about one connection for its event.
type flow struct {
	start  time.Time
	mode   string
	client string
	name   string // the name the flow is for, "" for a raw address
	dst    netip.AddrPort
	via    string // the upstream proxy it went through (scheme://host:port), "" when dialled directly
}

func (p *Proxy) event(f *flow, allow bool, reason string, dialed netip.AddrPort, up, down int64) Event {
	ev := Event{
		Time: time.Now(), Type: "net", Decision: decDeny, Name: f.name,
		Port: f.dst.Port(), Mode: f.mode, Reason: reason, Client: f.client,
		BytesUp: up, BytesDown: down, DurationMs: time.Since(f.start).Milliseconds(),
		Via: f.via,
	}
	if allow {
		ev.Decision = decAllow
	}
	if dialed.IsValid() {
		ev.Addr = dialed.Addr().String()
	} else if f.dst.IsValid() && f.name == "" {
		ev.Addr = f.dst.Addr().String()
	}
	return ev
}

func (p *Proxy) emit(ev Event) {
	if p.OnEvent != nil {
		p.OnEvent(ev)
	}
}

func (f *flow) target() string {
	if f.name != "" {
		return net.JoinHostPort(f.name, strconv.Itoa(int(f.dst.Port())))
	}
	return f.dst.String()
}

// reject refuses a flow with a reset, without reading from it: for flows
// that are not a policy question (no destination, IPv6, too many flows,
// malformed first bytes). Policy refusals go through refuse, which answers.
func (p *Proxy) reject(f *flow, c net.Conn, reason string) {
	ev := p.event(f, false, reason, netip.AddrPort{}, 0, 0)
	ev.Public = reason
	p.emit(ev)
	reset(c)
}

// failed records an allowed flow whose upstream could not be reached, and
// resets the client (a failed connect, as the client would have seen it).
func (p *Proxy) failed(f *flow, c net.Conn, reason string, dialed netip.AddrPort) {
	ev := p.event(f, true, reason, dialed, 0, 0)
	ev.Failed = true
	p.emit(ev)
	reset(c)
}

// reset closes c with an RST rather than a FIN: the client sees "connection
// reset" at once instead of an empty reply it might retry or misread.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0) // SO_LINGER 0: close(2) sends RST and drops unsent data
	}
	c.Close()
}

func (p *Proxy) firstByteWait() time.Duration {
	if p.FirstByteWait > 0 {
		return p.FirstByteWait
	}
	return DefaultFirstByteWait
}

func (p *Proxy) refuseWait() time.Duration {
	if p.RefuseWait > 0 {
		return p.RefuseWait
	}
	return DefaultRefuseWait
}

func (p *Proxy) sniffTimeout() time.Duration {
	if p.SniffTimeout > 0 {
		return p.SniffTimeout
	}
	return DefaultSniffTimeout
}

// handleTransparent serves one flow from the TPROXY listener.
func (p *Proxy) handleTransparent(ctx context.Context, c net.Conn) { p.transparent(ctx, c, true) }

// transparent handles a flow; relay false stops short of connecting an
// allowed one (closed: a flow queued at the run's end).
func (p *Proxy) transparent(ctx context.Context, c net.Conn, relay bool) {
	f := &flow{start: time.Now(), mode: "tproxy", client: c.RemoteAddr().String()}
	dst, err := p.origDst(c)
	if err != nil || !dst.IsValid() {
		p.reject(f, c, "no original destination")
		return
	}
	f.dst = netip.AddrPortFrom(dst.Addr().Unmap(), dst.Port())
	if p.Endpoint.IsValid() && f.dst == p.Endpoint {
		if !relay && !p.InSandbox {
			c.Close() // a proxy-aware request at the end: nothing to refuse yet
			return
		}
		p.handleFallback(ctx, c)
		return
	}
	ip := f.dst.Addr()
	if !ip.Is4() {
		// IPv6 is not offered (nsnet gives S no IPv6 route); refuse anything
		// that arrives anyway rather than relay it by accident.
		p.reject(f, c, "IPv6 is not offered")
		return
	}
	if p.InSandbox && ip.IsLoopback() {
		// The sandbox dialled its own loopback on a port where only jail
		// listens: nothing to refuse or relay, answer like a closed port.
		reset(c)
		return
	}
	if p.Fakes.Refused(ip) {
		// A name the policy refused: refused by the address range alone,
		// whatever the name or port (nothing here can let it out).
		name, ok := p.Fakes.Lookup(ip)
		if !ok {
			p.refuse(f, c, Decision{Reason: "refusal address not handed out by jail's DNS"}, sniffResult{}, false)
			return
		}
		f.name = name
		d := p.decide(name, netip.Addr{}, f.dst.Port())
		if d.Allow { // cannot happen: the policy never changes
			d = Decision{Reason: reasonNotAllowed}
		}
		p.refuse(f, c, d, sniffResult{}, false)
		return
	}
	if p.Fakes.Contains(ip) {
		name, ok := p.Fakes.Lookup(ip)
		if !ok {
			// Never handed out by our DNS: the sandbox made the address up.
			p.refuse(f, c, Decision{Reason: "fake address not handed out by jail's DNS"}, sniffResult{}, false)
			return
		}
		f.name = name
	}
	d := p.decide(f.name, ip, f.dst.Port())
	if d.Allow && p.Bypass != "" {
		d = Decision{Reason: p.Bypass}
	}
	if !d.Allow {
		p.refuse(f, c, d, sniffResult{}, false)
		return
	}
	if !relay {
		c.Close()
		return
	}
	p.connectAndRelay(ctx, f, c, ip, true)
}

// decide applies the Policy to a flow's name (or raw address) and port.
func (p *Proxy) decide(name string, raw netip.Addr, port uint16) Decision {
	if name == "" {
		return p.Policy.Decide("", raw, port)
	}
	pinned, _ := p.Policy.Pinned(name)
	return p.Policy.Decide(name, pinned, port)
}

// connectAndRelay inspects the client's first bytes (names only), resolves and
// guards the destination, dials it and relays. c is the sandbox side. When
// sniff is false (the caller inspected already), no bytes are inspected.
func (p *Proxy) connectAndRelay(ctx context.Context, f *flow, c net.Conn, raw netip.Addr, sniff bool) {
	var pre []byte
	var res sniffResult
	deferred := false
	if f.name != "" && sniff && p.speakers.known(f.name, f.dst.Port()) {
		// A destination whose server speaks first (serverfirst.go): dial
		// at once; the client's first bytes are checked when they come.
		deferred = true
	} else if f.name != "" && sniff {
		buf, r, err := p.sniffFirst(c)
		switch {
		case errors.Is(err, errNoBytesYet):
			deferred = true
		case err != nil:
			p.reject(f, c, err.Error())
			return
		default:
			if reason := p.checkClaims(f, r); reason != "" {
				p.refuse(f, c, Decision{Reason: reason}, r, true)
				return
			}
		}
		pre, res = buf, r
	}
	up, dialed, d := p.dial(ctx, f, raw, f.dst.Port(), res.kind)
	if up == nil {
		if !d.Allow {
			p.refuse(f, c, d, res, !deferred && sniff && f.name != "")
		} else {
			p.failed(f, c, d.Reason, dialed)
		}
		return
	}
	// When the client stayed silent the server may speak first; whatever
	// the client sends first is still inspected before it goes upstream.
	// Who spoke first is watched then, to learn server-first destinations.
	var watch *firstWatch
	if deferred { // deferred implies a name: only a named flow waits for its client
		watch = &firstWatch{start: time.Now()}
	}
	rel := p.relayFlow(f, c, up, pre, res, deferred, watch)
	if p.refusedLate(f, rel, dialed) {
		return
	}
	reason := "allowed"
	if d := p.decide(f.name, raw, f.dst.Port()); d.Reason != "" {
		reason = d.Reason
	}
	if rel.err != nil {
		reason += "; ended with " + rel.err.Error()
	}
	ev := p.event(f, true, reason, dialed, rel.up, rel.down)
	ev.Requests = rel.requests
	p.emit(ev)
}

// checkClaims compares the names the client's first bytes claim with the
// name the flow is for. Decision (documented): the SNI/Host must be that very
// name (or, for HTTP, the fake address itself), not merely another allowed
// name. A client resolved the name through our DNS and connects to its fake
// address; a different SNI means it wants a different virtual host behind
// the same address: domain fronting.
func (p *Proxy) checkClaims(f *flow, res sniffResult) string {
	for _, n := range res.names {
		if n == f.name || (res.kind == kindHTTP && n == f.dst.Addr().String()) {
			continue
		}
		what := "TLS SNI"
		if res.kind == kindHTTP {
			what = "HTTP Host"
		}
		if n == "" {
			return what + " is empty"
		}
		return fmt.Sprintf("%s %q does not match %s (domain fronting)", what, clip(n), f.name)
	}
	return ""
}

// clip bounds a client-chosen name quoted in a reason: a 64 KiB Host header
// must not become a 64 KiB audit record per refused flow.
func clip(s string) string {
	const max = 255
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

var errNoBytesYet = errors.New("client sent nothing yet")

// sniffFirst waits FirstByteWait for the client's first bytes and then reads
// until inspect has a verdict. errNoBytesYet means the client is silent.
func (p *Proxy) sniffFirst(c net.Conn) ([]byte, sniffResult, error) {
	return p.sniffWait(c, p.firstByteWait())
}

func (p *Proxy) sniffWait(c net.Conn, wait time.Duration) ([]byte, sniffResult, error) {
	buf := make([]byte, 0, 4096)
	c.SetReadDeadline(time.Now().Add(wait))
	n, err := c.Read(buf[:cap(buf)])
	c.SetReadDeadline(time.Time{})
	if n == 0 {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, sniffResult{}, errNoBytesYet
		}
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, sniffResult{}, fmt.Errorf("client closed before sending: %w", err)
	}
	return p.sniffFrom(c, buf[:n], time.Now().Add(p.sniffTimeout()))
}

// sniffFrom reads from c, after the bytes already in buf, until inspect
// decides. With a zero deadline it waits for the first byte without limit,
// then applies SniffTimeout.
func (p *Proxy) sniffFrom(c net.Conn, buf []byte, deadline time.Time) ([]byte, sniffResult, error) {
	if buf == nil {
		buf = make([]byte, 0, 4096)
	}
	defer c.SetReadDeadline(time.Time{})
	for {
		if len(buf) > 0 {
			res, err := inspect(buf)
			if !errors.Is(err, errNeedMore) {
				if err != nil {
					return buf, res, fmt.Errorf("refused first bytes: %w", err)
				}
				return buf, res, nil
			}
			if len(buf) >= maxSniff {
				return buf, res, fmt.Errorf("no complete ClientHello or HTTP head in %d bytes: %w", maxSniff, errMalformed)
			}
			if deadline.IsZero() {
				deadline = time.Now().Add(p.sniffTimeout())
			}
			c.SetReadDeadline(deadline)
		}
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, len(buf))...)[:len(buf)]
		}
		n, err := c.Read(buf[len(buf):min(cap(buf), maxSniff)])
		buf = buf[:len(buf)+n]
		if err != nil && n == 0 {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return buf, sniffResult{}, fmt.Errorf("incomplete ClientHello or HTTP head after %v", p.sniffTimeout())
			}
			if len(buf) == 0 && errors.Is(err, io.EOF) {
				return buf, sniffResult{}, io.EOF
			}
			return buf, sniffResult{}, fmt.Errorf("reading first bytes: %w", err)
		}
	}
}

// dial resolves the destination on the host, applies the address guard and
// dials the first address that passes. With up == nil, d says why: a refusal
// of the guard (!d.Allow), or a failure to resolve or connect (d.Allow).
// Only flows the policy allowed get here, so a refused name never reaches
// an upstream proxy. With an Upstream for the flow (kind: what the client's
// first bytes were, for the choice of variable), a name the policy did not
// pin is sent to the upstream proxy as that name, and the proxy resolves it:
// the address guard cannot see where the upstream connects (decision,
// documented in README: Corporate proxies). Raw addresses and pinned names
// are guarded as for a direct dial and the checked address is what the
// upstream proxy is asked for; host.jail.internal is always direct.
func (p *Proxy) dial(ctx context.Context, f *flow, raw netip.Addr, port uint16, kind int) (up net.Conn, dialed netip.AddrPort, d Decision) {
	name := f.name
	class := flowClass(kind, port)
	var cands []netip.Addr
	var pin netip.Addr
	switch {
	case name == "":
		cands = []netip.Addr{raw}
	case name == HostInternal:
		// 127.0.0.1, then ::1: a dev server bound to "localhost" by a
		// runtime that resolves it to ::1 first (Node 17 and later)
		// listens there alone.
		cands = []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}
	default:
		if a, ok := p.Policy.Pinned(name); ok {
			cands = []netip.Addr{a}
			pin = a
			break
		}
		target := net.JoinHostPort(name, strconv.Itoa(int(port)))
		if u := p.Upstream.For(class, target, netip.AddrPort{}); u != nil {
			f.via = u.String()
			c, err := u.connect(ctx, target, p.dialTimeout())
			if err != nil {
				return nil, netip.AddrPort{}, Decision{Allow: true, Reason: err.Error()}
			}
			return c, netip.AddrPort{}, Decision{Allow: true}
		}
		r := p.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		rctx, cancel := context.WithTimeout(ctx, p.dialTimeout())
		addrs, err := r.LookupNetIP(rctx, "ip", name)
		cancel()
		if err != nil {
			return nil, netip.AddrPort{}, Decision{Allow: true, Reason: "host could not resolve " + name + ": " + trimParseErr(err)}
		}
		cands = addrs
	}
	host := p.hostAddrs()
	var ok []netip.Addr
	var refused Decision
	for _, a := range cands {
		cd := p.Policy.CheckDial(name, a, port, host)
		if cd.Allow {
			ok = append(ok, a.Unmap())
		} else if refused.Reason == "" {
			refused = cd
		}
	}
	if len(ok) == 0 {
		if refused.Reason == "" {
			return nil, netip.AddrPort{}, Decision{Allow: true, Reason: "host has no address for " + name}
		}
		return nil, netip.AddrPort{}, refused
	}
	var lastErr error
	for _, a := range ok {
		dialed = netip.AddrPortFrom(a, port)
		if name == "" || pin.IsValid() {
			// A raw address or a pin: the upstream proxy (if any for it)
			// is asked for the address the guard checked. NO_PROXY may name
			// either the pinned name or its address.
			target, alt := dialed.String(), netip.AddrPort{}
			if pin.IsValid() {
				target, alt = net.JoinHostPort(name, strconv.Itoa(int(port))), dialed
			}
			if u := p.Upstream.For(class, target, alt); u != nil {
				f.via = u.String()
				c, err := u.connect(ctx, dialed.String(), p.dialTimeout())
				if err != nil {
					return nil, dialed, Decision{Allow: true, Reason: err.Error()}
				}
				return c, dialed, Decision{Allow: true}
			}
		}
		// Dial the checked address, never the name again: a second lookup
		// could return a different (rebound) address that skipped the guard.
		c, err := p.dialAddr(ctx, dialed)
		if err == nil {
			return c, dialed, Decision{Allow: true}
		}
		lastErr = err
	}
	return nil, dialed, Decision{Allow: true, Reason: "dial " + dialed.String() + ": " + trimParseErr(lastErr)}
}

func (p *Proxy) dialAddr(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
	if p.Dial != nil {
		return p.Dial(ctx, a)
	}
	d := net.Dialer{Timeout: p.dialTimeout()}
	return d.DialContext(ctx, "tcp", a.String())
}

func (p *Proxy) dialTimeout() time.Duration {
	if p.DialTimeout > 0 {
		return p.DialTimeout
	}
	return DefaultDialTimeout
}

func (p *Proxy) hostAddrs() []netip.Addr {
	if p.HostAddrs != nil {
		return p.HostAddrs()
	}
	p.addrMu.Lock()
	defer p.addrMu.Unlock()
	if time.Since(p.addrTime) < 5*time.Second && p.addrs != nil {
		return p.addrs
	}
	p.addrs = p.addrs[:0]
	ifa, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range ifa {
			if n, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(n.IP); ok {
					p.addrs = append(p.addrs, ip.Unmap())
				}
			}
		}
	}
	p.addrTime = time.Now()
	return p.addrs
}

// relay copies both directions until both are done, propagating
// half-closes. Between two *net.TCPConn, io.Copy ends up in
// (*net.TCPConn).ReadFrom, which uses splice(2) on Linux: payload never
// enters user space. Published ports use it; outbound flows use relayFlow.
func relay(client, up net.Conn) (upN, downN int64, err error) {
	var wg sync.WaitGroup
	var downErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		downN, downErr = copyHalf(client, up)
	}()
	upN, upErr := copyHalf(up, client)
	wg.Wait()
	client.Close()
	up.Close()
	return upN, downN, errors.Join(upErr, downErr)
}

// copyHalf copies src to dst until EOF, then half-closes dst so the peer sees
// the end of the stream while the other direction keeps flowing. On an error
// it aborts both sides so the other direction does not hang.
func copyHalf(dst, src net.Conn) (int64, error) {
	var n int64
	var err error
	if d, ok := dst.(*net.TCPConn); ok {
		if s, ok := src.(*net.TCPConn); ok {
			n, err = d.ReadFrom(s) // splice(2) fast path
		} else {
			n, err = io.Copy(dst, src)
		}
	} else {
		n, err = io.Copy(dst, src)
	}
	if err != nil {
		// A reset on one side, or Serve shutting down: take both sides down
		// so the other direction does not wait forever.
		abort(dst, src)
		if errors.Is(err, net.ErrClosed) {
			return n, nil // closed by the other direction or by Serve: not this half's error
		}
		return n, err
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	} else {
		dst.Close()
	}
	return n, nil
}

// abort resets both conns (RST), mirroring a reset seen on one side.
func abort(a, b net.Conn) {
	reset(a)
	reset(b)
}

// relayed is what relayFlow did.
type relayed struct {
	up, down int64
	requests int    // HTTP/1 request heads checked and forwarded
	deny     string // why the flow was cut; "" when it ran its course
	err      error
}

// relayFlow relays an outbound flow: the response direction is spliced
// untouched; the request direction too, unless the flow is for a name and
// the client speaks HTTP/1, in which case every request head is checked
// against that name before it goes upstream (reqRelay). pre holds client
// bytes already read and res their verdict; with late set, the client has
// not spoken yet and its first bytes are inspected when they come. With
// watch set, the server's first bytes are awaited apart (peeked, not read)
// to see whether they came before the client's (serverfirst.go).
func (p *Proxy) relayFlow(f *flow, client, up net.Conn, pre []byte, res sniffResult, late bool, watch *firstWatch) relayed {
	var rel relayed
	var wg sync.WaitGroup
	var downErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		if watch != nil {
			p.watchDown(f, watch, up)
		}
		rel.down, downErr = copyHalf(client, up)
	}()
	var upErr error
	if late && f.name != "" {
		buf, r, err := p.sniffFrom(client, nil, time.Time{})
		if watch != nil {
			// Set before any of these bytes goes upstream: a server that
			// answers them has not spoken first.
			watch.clientSpoke.Store(true)
		}
		switch {
		case err == nil:
			rel.deny = p.checkClaims(f, r)
		case errors.Is(err, io.EOF):
		default:
			rel.deny = err.Error()
		}
		pre, res = buf, r
	}
	switch {
	case rel.deny != "":
	case f.name != "" && res.kind == kindHTTP:
		rr := &reqRelay{p: p, f: f, src: client, dst: up, buf: pre}
		rel.deny, upErr = rr.run()
		rel.up, rel.requests = rr.n, rr.requests
	default:
		if len(pre) > 0 {
			var n int
			n, upErr = up.Write(pre)
			rel.up = int64(n)
		}
		if upErr == nil {
			var n int64
			n, upErr = copyHalf(up, client)
			rel.up += n
		}
	}
	if rel.deny != "" || upErr != nil {
		abort(client, up)
	}
	wg.Wait()
	client.Close()
	up.Close()
	if rel.deny == "" {
		rel.err = errors.Join(upErr, downErr)
	}
	return rel
}

// refusedLate reports and records a flow cut after the dial: its first
// bytes came late, or a later request head was refused.
func (p *Proxy) refusedLate(f *flow, rel relayed, dialed netip.AddrPort) bool {
	if rel.deny == "" {
		return false
	}
	ev := p.event(f, false, rel.deny, dialed, rel.up, rel.down)
	ev.Public = rel.deny
	ev.Requests = rel.requests
	p.emit(ev)
	return true
}
