//go:build linux

package netproxy

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hungListener returns a loopback port whose handshakes never complete: a
// listener with a backlog of 0 whose one queue place is taken, so the
// kernel drops every further SYN and a connect waits on retransmissions.
func hungListener(t *testing.T) uint16 {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	port := sa.(*syscall.SockaddrInet4).Port
	fill, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fill.Close() })
	// Prove the port hangs before relying on it.
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond); err == nil {
		c.Close()
		t.Fatal("the full listener accepted a second handshake")
	}
	return uint16(port)
}

// TestDialTimeoutBoundsHungDials: the proxy's own dialer (no Dial hook)
// gives up on an upstream that never answers the handshake after
// DialTimeout, for every dial of a run that started at different times
// and records each flow as failed
// with the timeout, as a Dialer's Timeout did.
func TestDialTimeoutBoundsHungDials(t *testing.T) {
	port := hungListener(t)
	ps := strconv.Itoa(int(port))
	const timeout = 300 * time.Millisecond
	h := newHarness(t, flags{allow: []string{"hang.test"}, hosts: []string{"hang.test:127.0.0.1"}, ips: []string{"127.0.0.1/32:" + ps}}, func(p *Proxy) {
		p.DialTimeout = timeout
	})
	dst := netip.AddrPortFrom(h.mustLookup("hang.test"), port)
	const flows = 3
	type res struct {
		took time.Duration
		err  error
	}
	out := make(chan res, flows)
	for i := 0; i < flows; i++ {
		go func() {
			start := time.Now()
			c, err := h.dial(dst)
			if err != nil {
				out <- res{err: err}
				return
			}
			defer c.Close()
			c.Write([]byte{0x02})
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			var b [1]byte
			_, err = c.Read(b[:])
			out <- res{took: time.Since(start), err: err}
		}()
		time.Sleep(timeout / 3)
	}
	for i := 0; i < flows; i++ {
		r := <-out
		if r.err == nil {
			t.Fatal("a flow to a hung upstream was answered")
		}
		if ne, ok := r.err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("a flow to a hung upstream was still open after 5 s: the dial timeout did not cut it")
		}
		if r.took < timeout || r.took > timeout+2*time.Second {
			t.Errorf("a flow ended %v after it started, want about %v", r.took, timeout)
		}
	}
	for i := 0; i < flows; i++ {
		h.waitEvent(func(ev Event) bool { return ev.Failed && strings.Contains(ev.Reason, "i/o timeout") })
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, ev := range h.events {
		if ev.Failed && ev.Reason == "dial 127.0.0.1:"+ps+": i/o timeout" {
			n++
		}
	}
	if n != flows {
		t.Errorf("%d of %d flows recorded as failed with the dial timeout; events: %+v", n, flows, h.events)
	}
}
