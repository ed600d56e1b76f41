package netproxy

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestThousandFlowsHeldAndAudited: issue 16's "1,000 concurrent flows held",
// with the defaults (MaxFlows unset), and the trail of every flow: 1,000
// flows to an allowed name are open at the same time, each one relayed to
// its own upstream connection, and once closed each one has exactly one
// allow event carrying its own byte counts. A bound below 1,000, a flow
// served by another's upstream, or an event lost or merged fails it.
func TestThousandFlowsHeldAndAudited(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 flows: not in -short")
	}
	const n = 1000
	var open, peak atomic.Int64
	srv := newServer(t, func(c net.Conn) {
		cur := open.Add(1)
		defer open.Add(-1)
		for {
			p := peak.Load()
			if cur <= p || peak.CompareAndSwap(p, cur) {
				break
			}
		}
		// Answer the flow's line with its upstream's own view of it, then
		// hold the connection until the client closes.
		r := bufio.NewReader(c)
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		fmt.Fprintf(c, "up %s", line)
		r.ReadByte() // EOF when the client is done
	})
	ps := srv.portStr()
	h := newHarness(t, flags{allow: []string{"many.test"}, hosts: []string{"many.test:127.0.0.1"}, ips: []string{"127.0.0.1/32:" + ps}})
	dst := netip.AddrPortFrom(h.mustLookup("many.test"), srv.port())

	conns := make([]*net.TCPConn, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := h.dial(dst)
			if err != nil {
				errs <- fmt.Errorf("flow %d: %v", i, err)
				return
			}
			conns[i] = c
			c.SetDeadline(time.Now().Add(60 * time.Second))
			msg := fmt.Sprintf("flow %04d\n", i)
			if _, err := c.Write([]byte(msg)); err != nil {
				errs <- fmt.Errorf("flow %d: write: %v", i, err)
				return
			}
			got, err := bufio.NewReader(c).ReadString('\n')
			if err != nil || got != "up "+msg {
				errs <- fmt.Errorf("flow %d: answer %q, %v (want %q)", i, got, err, "up "+msg)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	// Every flow answered while none had closed: all n upstream
	// connections were open at once.
	if got := open.Load(); got != n {
		t.Errorf("%d upstream connections open at once, want %d", got, n)
	}
	for _, c := range conns {
		c.Close()
	}

	want := int64(len("flow 0000\n"))
	deadline := time.Now().Add(30 * time.Second)
	for {
		h.mu.Lock()
		events := append([]Event(nil), h.events...)
		h.mu.Unlock()
		allowed, other := 0, 0
		for _, ev := range events {
			if ev.Type != "net" {
				continue
			}
			if ev.Decision == "allow" && ev.Name == "many.test" && ev.BytesUp == want && ev.BytesDown == want+3 && !ev.Failed {
				allowed++
			} else {
				other++
			}
		}
		if other > 0 {
			t.Fatalf("%d flow events are not a plain allow of %d bytes up, %d down: %+v", other, want, want+3, events)
		}
		if allowed == n {
			break
		}
		if allowed > n || time.Now().After(deadline) {
			t.Fatalf("%d allow events for %d flows, want one each", allowed, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := srv.count(); got != n {
		t.Errorf("upstream accepted %d connections, want %d", got, n)
	}
	t.Logf("%d flows open at once; peak upstream connections %d", n, peak.Load())
}
