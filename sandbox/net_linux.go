package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/netproxy"
	"github.com/jail-sandbox/jail/ns"
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
		r.bg.Add(1)
		go func(ln net.Listener) {
			defer r.bg.Done()
			_ = netproxy.ServePublish(r.ctx, ln, dial)
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

// serveNet runs the egress proxy and DNS on the sockets init made.
func (r *runner) serveNet(tcp, dns *os.File, mode string) {
	ln, err := net.FileListener(tcp)
	tcp.Close()
	if err != nil {
		r.errorf("egress proxy: %v", err)
		return
	}
	fakes := netproxy.NewFakeIPs()
	onEvent := func(ev netproxy.Event) { r.recordNet(ev) }
	px := &netproxy.Proxy{Policy: r.netPol, Fakes: fakes, OnEvent: onEvent, Log: r.stderr, Quiet: r.pol.Quiet, Upstream: r.upstream}
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		if mode == "proxy-aware" {
			_ = px.ServeFallback(r.ctx, ln)
		} else {
			_ = px.Serve(r.ctx, ln)
		}
	}()
	if dns != nil {
		pc, err := net.FilePacketConn(dns)
		dns.Close()
		if err != nil {
			r.errorf("sandbox DNS: %v", err)
			return
		}
		d := netproxy.NewDNS(r.netPol, fakes, onEvent)
		r.bg.Add(1)
		go func() {
			defer r.bg.Done()
			_ = d.Serve(r.ctx, pc)
		}()
	}
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
		r.record(audit.Net{Decision: ev.Decision, Proto: "tcp", Name: ev.Name, Address: ev.Addr, Port: int(ev.Port),
			BytesUp: ev.BytesUp, BytesDown: ev.BytesDown, DurationMS: float64(ev.DurationMs), Reason: ev.Reason, Requests: ev.Requests, Via: ev.Via})
	}
}
