package netproxy

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// stalledListener is a TCP listener whose Accept takes nothing until it is
// closed: every connection stays in the kernel's queue, as one does that
// arrives between the serve loop's last Accept and the run's end.
type stalledListener struct {
	*net.TCPListener
	once   sync.Once
	closed chan struct{}
}

func (l *stalledListener) Accept() (net.Conn, error) {
	<-l.closed
	return nil, net.ErrClosed
}

func (l *stalledListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.TCPListener.Close()
}

// TestRefusalQueuedAtEnd: a refusal listener that ends with flows still in
// its queue (the sandbox's last command connected and exited in the run's
// last instant) refuses and records each of them instead of dropping them
// unseen with the listener: `jail -- npm install` that fails on its last
// request still names the registry. Nothing is dialled. On the old serve,
// which closed the listener at once, no event came.
func TestRefusalQueuedAtEnd(t *testing.T) {
	var mu sync.Mutex
	var events []Event
	dst := netip.MustParseAddrPort("203.0.113.7:443")
	p := &Proxy{
		Policy: mustPolicy(t, flags{}), Fakes: NewFakeIPs(), InSandbox: true,
		RefuseWait: 200 * time.Millisecond,
		OrigDst:    func(net.Conn) (netip.AddrPort, error) { return dst, nil },
		OnEvent: func(ev Event) {
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
		},
		Dial: func(context.Context, netip.AddrPort) (net.Conn, error) {
			t.Error("ATTACK WORKED: a queued flow was dialled")
			return nil, errors.New("no upstream")
		},
	}
	tl, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	ln := &stalledListener{TCPListener: tl, closed: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()

	const clients = 3
	for i := 0; i < clients; i++ {
		c, err := net.Dial("tcp4", tl.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			c.Write(clientHello(t, "late.example"))
		}
		// The client is gone before the proxy ever accepts it.
		c.Close()
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != clients {
		t.Fatalf("%d events for %d queued flows, want one each: %+v", len(events), clients, events)
	}
	for _, ev := range events {
		if ev.Decision != decDeny || ev.Addr != dst.Addr().String() || ev.Port != dst.Port() {
			t.Errorf("event %+v, want a refusal of %v", ev, dst)
		}
	}
}

// TestQueuedEmpty: queued returns nil for a listener
// without a file descriptor, and never blocks on an empty queue.
func TestQueuedEmpty(t *testing.T) {
	tl, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	start := time.Now()
	if got := queued(tl); len(got) != 0 {
		t.Errorf("queued on an empty listener: %d conns", len(got))
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("queued blocked %v on an empty queue", d)
	}
	if got := queued(struct{ net.Listener }{tl}); got != nil {
		t.Errorf("queued on a listener without SyscallConn: %d conns", len(got))
	}
}
