package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/netproxy"
	"github.com/jail-sandbox/jail/netproxy/nsnet"
	"github.com/jail-sandbox/jail/ns"
	"golang.org/x/sys/unix"
)

// This file: egress and published ports.

// hostProxy reads the host's proxy variables (HTTPS_PROXY, HTTP_PROXY,
// ALL_PROXY, NO_PROXY and their lower-case forms, from jail's own
// environment: the sandbox's is cleared) for the egress proxy to chain
// allowed flows through. What it found goes to --dry-run and the trail (and
// stderr with -v); a variable it cannot use is said on stderr every time,
// since the flows it would carry are then dialled directly.
func (r *runner) hostProxy() *netproxy.Upstream {
	up, problems := netproxy.UpstreamFromEnv(os.Getenv)
	if up != nil {
		r.plan.Notes = append(r.plan.Notes, up.String())
		if r.pol.Verbose {
			r.errorf("%s", up.String())
		}
	}
	for _, p := range problems {
		r.plan.Notes = append(r.plan.Notes, p)
		r.notef("%s", p)
	}
	return up
}

type dialReply struct {
	f   *os.File
	err string
}

// servePublished forwards connections to the --publish host ports to the
// agent's servers: init connects inside the sandbox and passes the socket.
func (r *runner) servePublished() {
	for i, ln := range r.pubs {
		port := r.pubPorts[i]
		dial := func(ctx context.Context) (net.Conn, error) { return r.dialInside(ctx, port) }
		addr := ln.Addr().String()
		// Any local user can connect to a published port: the bound keeps
		// them from exhausting this supervisor's fds (see PublishOptions).
		// The user is told once per port (the trail has the notice; the
		// exit summary counts the resets).
		full := func(max int) {
			r.notice(noticePublishFull, addr, fmt.Sprintf("published port %s: %d connections open at once, the most jail forwards; new ones are reset until some close", addr, max))
		}
		r.bg.Add(1)
		go func(ln net.Listener) {
			defer r.bg.Done()
			_ = netproxy.ServePublish(r.ctx, ln, dial, netproxy.PublishOptions{OnFull: full})
		}(ln)
	}
}

func (r *runner) dialInside(ctx context.Context, port int) (net.Conn, error) {
	r.dialMu.Lock()
	defer r.dialMu.Unlock()
	if err := r.sb.Conn.Send(ns.Message{Type: ns.MsgDial, Port: port}); err != nil {
		return nil, err
	}
	select {
	case rep := <-r.dialCh:
		if rep.err != "" {
			return nil, errors.New(rep.err)
		}
		if rep.f == nil {
			return nil, fmt.Errorf("connect to port %d inside: no socket", port)
		}
		c, err := net.FileConn(rep.f)
		rep.f.Close()
		return c, err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-r.sb.Done():
		return nil, errors.New("the sandbox has exited")
	}
}

// serveNet runs the egress proxy and DNS on the sockets init made: the
// TPROXY listener (mode tproxy) or the fallback's proxy listener
// (proxy-aware), and the refusal listeners in the sandbox's own namespace
// (--net none; the fallback), which answer flows with refusals and never
// dial.
func (r *runner) serveNet(tcps, refusers, hostPorts []*os.File, dns, resets *os.File, info map[string]string) {
	mode := info["net.mode"]
	pol := r.netPol
	if mode == nsnet.ModeNone || pol == nil {
		// --net none: an empty policy refuses every name and address
		// (those the profiles' programs do without said as such).
		pol, _ = netproxy.NewPolicy(netproxy.Config{Refused: r.pol.Refused})
	}
	fakes := netproxy.NewFakeIPs()
	onEvent := func(ev netproxy.Event) { r.recordNet(ev) }
	// What the sandbox reads (403 bodies) names options as the user types
	// them, like the notices.
	spell := func(s string) string { return Spell(s) }
	px := &netproxy.Proxy{Policy: pol, Fakes: fakes, OnEvent: onEvent, Upstream: r.upstream, Spell: spell}
	if ep, err := netip.ParseAddrPort(info["net.endpoint"]); err == nil {
		px.Endpoint = ep
	}
	// The refusal listeners' proxy: the same policy and names, but its
	// upstream dial and resolver fail by construction, so that not even a
	// mistake in the policy could let a flow out through the supervisor
	// (which, unlike the sandbox, has the host's network), and it has no
	// Upstream: a refusal never reaches the host's proxy either.
	rx := &netproxy.Proxy{Policy: pol, Fakes: fakes, OnEvent: onEvent, Endpoint: px.Endpoint, InSandbox: true, Spell: spell,
		Dial:     func(context.Context, netip.AddrPort) (net.Conn, error) { return nil, errNoEgress },
		Resolver: noResolver{}}
	if mode == nsnet.ModeProxyAware {
		rx.Bypass = "egress is proxy-aware only here: go through HTTP_PROXY/HTTPS_PROXY"
	}
	if resets != nil {
		r.watchResets(resets, rx)
	}
	serve := func(f *os.File, serve func(context.Context, net.Listener) error) {
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil {
			r.errorf("egress proxy: %v", err)
			return
		}
		r.bg.Add(1)
		go func() {
			defer r.bg.Done()
			_ = serve(r.ctx, ln)
		}()
	}
	for _, f := range hostPorts {
		// The sandbox's own 127.0.0.1 at an --allow-host-port port: the
		// host's loopback at that port, through the egress proxy's policy
		// and trail (a flow of host.jail.internal's).
		serve(f, px.ServeHostPort)
	}
	if taken := info["net.host_ports_taken"]; taken != "" {
		r.notice(noticeNet, "host-ports-taken", Spell(fmt.Sprintf("`allow-host-port` %s: jail's own listeners hold these ports of the sandbox's 127.0.0.1 here (no transparent egress), so the host's are reached as %s:PORT only",
			strings.Trim(taken, "[]"), netproxy.HostInternal)))
	}
	for _, f := range tcps {
		if mode == nsnet.ModeProxyAware {
			serve(f, px.ServeFallback)
		} else {
			serve(f, px.Serve)
		}
	}
	for _, f := range refusers {
		serve(f, rx.Serve)
	}
	if dns != nil {
		pc, err := net.FilePacketConn(dns)
		dns.Close()
		if err != nil {
			r.errorf("sandbox DNS: %v", err)
			return
		}
		d := netproxy.NewDNS(pol, fakes, onEvent)
		r.bg.Add(1)
		go func() {
			defer r.bg.Done()
			_ = d.Serve(r.ctx, pc)
		}()
	}
}

// watchResets says the flows the sandbox's loopback reset, which no
// refusal listener heard (nsnet.Result.Resets): under --net none a
// refused name's port other than 80, 443 and 22, where the user hears
// which name jail refused and the flag, as from a listener (rx: the same
// names, policy and record); in every mode a port of the loopback itself
// where the host's loopback has a server (loopbackRefused). The client
// says "connection refused". At the run's end, what the kernel queued
// since the last read is said too, never waited for: a client refused in
// the run's last instant.
func (r *runner) watchResets(f *os.File, rx *netproxy.Proxy) {
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		defer f.Close()
		rc, err := f.SyscallConn()
		if err != nil {
			return
		}
		// A read deadline ends the wait (closing would lose the queue).
		stop := context.AfterFunc(r.ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
		defer stop()
		buf := make([]byte, 256)
		say := func(n int) {
			dst, ok := nsnet.ParseReset(buf[:n])
			switch {
			case !ok:
			case dst.Addr().IsLoopback():
				r.loopbackRefused(dst.Port()) // the host's server, maybe (hostloop_linux.go)
			default:
				rx.Unheard(dst, heardByListener)
			}
		}
		for r.ctx.Err() == nil {
			n, err := f.Read(buf)
			if err != nil {
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					return // the socket failed: nothing more to hear
				}
				break
			}
			say(n)
		}
		// Control runs whatever the deadline; MSG_DONTWAIT never waits.
		rc.Control(func(fd uintptr) {
			for range 256 {
				n, _, err := unix.Recvfrom(int(fd), buf, unix.MSG_DONTWAIT)
				if err != nil {
					return
				}
				say(n)
			}
		})
		r.loopRefusalsAtEnd()
	}()
}

// heardByListener says whether a refusal listener answers a flow itself:
// a port of nsnet.RefusalPorts on a fake address (routed to the sandbox's
// loopback, where they listen on every address).
func heardByListener(a netip.AddrPort) bool {
	return netproxy.FakeRange.Contains(a.Addr()) && slices.Contains(nsnet.RefusalPorts, a.Port())
}

// sshHostOf is the HostName of name when it is a Host alias of the
// user's ssh configuration (sshHostNames), read once, at the first
// refusal that asks.
func (r *runner) sshHostOf(name string) string {
	r.sshHostsOnce.Do(func() {
		if home := sshHome(r.plan.Env); home != "" {
			r.sshHosts = sshHostNames(home)
		}
	})
	return r.sshHosts[strings.ToLower(name)]
}

// errNoEgress is what an upstream dial under --net none returns.
var errNoEgress = errors.New("`net` none: nothing leaves the sandbox")

// noResolver answers no name: under --net none the supervisor never asks
// the host's resolver on the sandbox's behalf.
type noResolver struct{}

func (noResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return nil, errNoEgress
}

func (r *runner) recordNet(ev netproxy.Event) {
	switch ev.Type {
	case "dns":
		var answers []string
		if ev.Addr != "" {
			answers = []string{ev.Addr}
		}
		r.record(audit.DNS{Name: ev.Name, QType: ev.QType, Decision: ev.Decision, Answers: answers, Reason: ev.Reason})
	default:
		switch {
		case ev.Decision == "deny":
			r.deny(netDenial(ev, r.pol.ProfileHints, r.pol.SSHAgent || slices.Contains(r.pol.Env, sshAuthSock), r.sshHostOf))
			r.refusedName(ev)
		case ev.Failed:
			r.notice(noticeNetFail, ev.Target(), "connect to "+ev.Target()+" failed ("+ev.Reason+")")
		}
		r.record(audit.Net{Decision: ev.Decision, Proto: "tcp", Name: ev.Name, Address: ev.Addr, Port: int(ev.Port),
			BytesUp: ev.BytesUp, BytesDown: ev.BytesDown, DurationMS: float64(ev.DurationMs), Reason: ev.Reason, Requests: ev.Requests, Via: ev.Via, Failed: ev.Failed})
	}
}
