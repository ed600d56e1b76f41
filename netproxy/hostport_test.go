package netproxy

import (
	"context"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestServeHostPort: a flow to the sandbox's own 127.0.0.1 at an
// --allow-host-port port reaches the host's loopback at that port,
// whatever Host header it carries (localhost:PORT is what such clients
// send), and is recorded as host.jail.internal's; a port the policy
// does not open is refused, never dialled.
func TestServeHostPort(t *testing.T) {
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	go func() {
		for {
			c, err := host.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b := make([]byte, 512)
				n, _ := c.Read(b)
				io.WriteString(c, "host heard "+string(b[:n]))
			}()
		}
	}()
	port := netip.MustParseAddrPort(host.Addr().String()).Port()
	var mu sync.Mutex
	var events []Event
	var dialled []netip.AddrPort
	var next netip.AddrPort // the connect under way's (they come one at a time)
	p := &Proxy{Policy: mustPolicy(t, flags{hostPorts: []uint16{port}}), Fakes: NewFakeIPs(),
		OnEvent:   func(ev Event) { mu.Lock(); events = append(events, ev); mu.Unlock() },
		HostAddrs: func() []netip.Addr { return nil },
		OrigDst: func(c net.Conn) (netip.AddrPort, error) {
			mu.Lock()
			defer mu.Unlock()
			return next, nil
		},
		Dial: func(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
			mu.Lock()
			dialled = append(dialled, a)
			mu.Unlock()
			var d net.Dialer
			return d.DialContext(ctx, "tcp", a.String())
		},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0") // the sandbox's 127.0.0.1:PORT, as init binds it
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.ServeHostPort(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHostPort: %v", err)
		}
	}()
	connect := func(to uint16, send string) string {
		mu.Lock()
		next = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), to)
		mu.Unlock()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, send)
		b, _ := io.ReadAll(c)
		return string(b)
	}
	req := "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"
	if got := connect(port, req); got != "host heard "+req {
		t.Errorf("the host's server answered %q through the sandbox's loopback", got)
	}
	other := port + 1
	if got := connect(other, req); !strings.Contains(got, "refused host.jail.internal:"+strconv.Itoa(int(other))) {
		t.Errorf("a port not allowed answered %q, want jail's refusal", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(events)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []netip.AddrPort{netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port)}; len(dialled) != 1 || dialled[0] != want[0] {
		t.Errorf("dialled %v, want %v only", dialled, want)
	}
	if len(events) != 2 {
		t.Fatalf("events %+v, want two", events)
	}
	for _, ev := range events {
		switch ev.Port {
		case port:
			if ev.Decision != "allow" || ev.Name != HostInternal || ev.Mode != "host-port" || ev.Addr != "127.0.0.1" || ev.BytesUp != int64(len(req)) {
				t.Errorf("the allowed flow's event: %+v", ev)
			}
		case other:
			if ev.Decision != "deny" || ev.Name != HostInternal || ev.Mode != "host-port" {
				t.Errorf("the refused flow's event: %+v", ev)
			}
		default:
			t.Errorf("an event of port %d: %+v", ev.Port, ev)
		}
	}
}

// A host server on ::1 alone (a dev server bound to "localhost" by a
// runtime that resolves it to ::1 first) is reached too: the relay dials
// 127.0.0.1, then ::1.
func TestServeHostPortIPv6Only(t *testing.T) {
	host, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	defer host.Close()
	go func() {
		c, err := host.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "v6 host")
	}()
	port := netip.MustParseAddrPort(host.Addr().String()).Port()
	evs := make(chan Event, 4)
	p := &Proxy{Policy: mustPolicy(t, flags{hostPorts: []uint16{port}}), Fakes: NewFakeIPs(),
		OnEvent:   func(ev Event) { evs <- ev },
		HostAddrs: func() []netip.Addr { return nil },
		OrigDst: func(net.Conn) (netip.AddrPort, error) {
			return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port), nil
		},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.ServeHostPort(ctx, ln) }()
	defer func() { cancel(); <-done }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if b, _ := io.ReadAll(c); string(b) != "v6 host" {
		t.Errorf("the host's ::1 server through the sandbox's 127.0.0.1: %q", b)
	}
	c.Close() // the flow's event comes at its end
	select {
	case ev := <-evs:
		if ev.Decision != "allow" || ev.Addr != "::1" || ev.Port != port {
			t.Errorf("event %+v, want an allow dialled at ::1", ev)
		}
	case <-time.After(5 * time.Second):
		t.Error("no event")
	}
}
