package netproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// PublishSpec is one -p/--publish [HOSTIP:]HOSTPORT:PORT.
type PublishSpec struct {
	HostIP   netip.Addr // default 127.0.0.1: published ports stay on the host's loopback unless asked
	HostPort uint16
	Port     uint16 // the port inside the sandbox
}

// HostAddr is the address to listen on, for Publish.
func (s PublishSpec) HostAddr() string {
	return netip.AddrPortFrom(s.HostIP, s.HostPort).String()
}

// ParsePublish parses a -p/--publish value: HOSTPORT:PORT, HOSTIP:HOSTPORT:PORT
// or [IPV6]:HOSTPORT:PORT, with an optional "/tcp" suffix (UDP is refused).
func ParsePublish(s string) (PublishSpec, error) {
	bad := func(reason string) (PublishSpec, error) {
		return PublishSpec{}, &ParseError{Key: "publish", Value: s, Reason: reason}
	}
	v := s
	if i := strings.LastIndexByte(v, '/'); i >= 0 {
		switch strings.ToLower(v[i+1:]) {
		case "tcp":
			v = v[:i]
		case "udp", "sctp":
			return bad("only TCP ports can be published")
		default:
			return bad("unknown protocol suffix; use /tcp or nothing")
		}
	}
	spec := PublishSpec{HostIP: netip.AddrFrom4([4]byte{127, 0, 0, 1})}
	var parts []string
	if strings.HasPrefix(v, "[") {
		end := strings.IndexByte(v, ']')
		if end < 0 || end+1 >= len(v) || v[end+1] != ':' {
			return bad("expected [IPV6]:HOSTPORT:PORT")
		}
		a, err := netip.ParseAddr(v[1:end])
		if err != nil || a.Zone() != "" {
			return bad("not an IPv6 address: " + v[1:end])
		}
		spec.HostIP = a
		parts = strings.Split(v[end+2:], ":")
		if len(parts) != 2 {
			return bad("expected [IPV6]:HOSTPORT:PORT")
		}
	} else {
		parts = strings.Split(v, ":")
		switch len(parts) {
		case 2:
		case 3:
			a, err := netip.ParseAddr(parts[0])
			if err != nil || !a.Is4() {
				return bad("host address " + parts[0] + " is not an IPv4 address (IPv6 goes in brackets)")
			}
			spec.HostIP = a
			parts = parts[1:]
		case 1:
			if _, err := parsePort(parts[0]); err == nil {
				// Docker's -p PORT picks a host port; jail publishes
				// where the user says.
				return bad("expected [HOSTIP:]HOSTPORT:PORT: the host's port and the sandbox's, e.g. " + parts[0] + ":" + parts[0])
			}
			return bad("expected [HOSTIP:]HOSTPORT:PORT")
		default:
			return bad("expected [HOSTIP:]HOSTPORT:PORT")
		}
	}
	hp, err := parsePort(parts[0])
	if err != nil {
		return bad("host port: " + err.Error())
	}
	cp, err := parsePort(parts[1])
	if err != nil {
		return bad("sandbox port: " + err.Error())
	}
	spec.HostPort, spec.Port = hp, cp
	return spec, nil
}

// PublishOptions bounds ServePublish.
type PublishOptions struct {
	// MaxConns bounds the connections forwarded at once (0:
	// DefaultMaxFlows); past it a new connection is reset at once. A
	// published port listens on the host, where any local user can connect
	// to it (loopback is no barrier), and each forwarded connection costs
	// the supervisor 2 sockets, 2 splice pipes and 2 goroutines: unbounded,
	// another user could exhaust the supervisor's fds and stop that run's
	// egress, trail and published ports.
	MaxConns int
	// OnFull, if set, is called (from the accept loop: it must not block)
	// for each connection reset because MaxConns were open.
	OnFull func(max int)
}

// Publish listens on hostAddr (in the supervisor's, i.e. the host's, network
// namespace) and forwards every connection to a fresh conn from dial (which
// reaches the server inside the sandbox). It blocks until ctx is done; a
// listen error comes back at once.
func Publish(ctx context.Context, hostAddr string, dial func(context.Context) (net.Conn, error)) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", hostAddr)
	if err != nil {
		return fmt.Errorf("publish: listen on %s: %w (is the port in use? pick another with -p HOSTPORT:PORT)", hostAddr, err)
	}
	return ServePublish(ctx, ln, dial, PublishOptions{})
}

// ServePublish is Publish on a listener the caller opened (so it can report
// listen errors before the sandbox starts). It closes ln when ctx is done and
// returns after every forwarded connection has ended.
func ServePublish(ctx context.Context, ln net.Listener, dial func(context.Context) (net.Conn, error), o PublishOptions) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	maxConns := o.MaxConns
	if maxConns <= 0 {
		maxConns = DefaultMaxFlows
	}
	// A slot is taken before anything is spent on a connection (the dial
	// inside waits its turn holding one), and given back when it ends.
	slots := make(chan struct{}, maxConns)
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			select {
			case <-time.After(10 * time.Millisecond):
				continue
			case <-ctx.Done():
				return nil
			}
		}
		select {
		case slots <- struct{}{}:
		default:
			// Said before the client sees its reset: whoever watches both
			// (the trail, a test) never sees the refusal before its record.
			if o.OnFull != nil {
				o.OnFull(maxConns)
			}
			reset(c)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			stopConn := context.AfterFunc(ctx, func() { c.Close() })
			defer stopConn()
			dctx, dcancel := context.WithTimeout(ctx, DefaultDialTimeout)
			in, err := dial(dctx)
			dcancel()
			if err != nil {
				reset(c) // nothing listens inside: the host client sees a reset, like a closed port
				return
			}
			stopIn := context.AfterFunc(ctx, func() { in.Close() })
			defer stopIn()
			relay(c, in)
		}()
	}
}
