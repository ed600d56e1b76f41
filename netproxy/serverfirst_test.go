package netproxy

import (
	"bufio"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// bannerFlow dials dst through h, reads the server's first line and returns
// it with the time from the dial to it. The client sends nothing.
func bannerFlow(t *testing.T, h *harness, dst netip.AddrPort) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	c, err := h.dial(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	l, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("banner: %q, %v", l, err)
	}
	return l, time.Since(start)
}

// TestServerFirstLearned: the second connection to a server that speaks
// first (SMTP, MySQL) gets its greeting at once, not after FirstByteWait.
func TestServerFirstLearned(t *testing.T) {
	const wait = 300 * time.Millisecond
	srv := newServer(t, func(c net.Conn) {
		io.WriteString(c, "220 banner\r\n")
		io.Copy(io.Discard, c)
	})
	ps := srv.portStr()
	h := newHarness(t, flags{allow: []string{"smtp.test"}, hosts: []string{"smtp.test:127.0.0.1"}, ips: []string{"127.0.0.1/32:" + ps}},
		func(p *Proxy) { p.FirstByteWait = wait })
	dst := netip.AddrPortFrom(h.mustLookup("smtp.test"), srv.port())
	if l, took := bannerFlow(t, h, dst); l != "220 banner\r\n" || took < wait*3/4 {
		// The first flow cannot know: it waits for the client as before.
		t.Fatalf("first flow: %q after %v, want the banner after about %v", l, took, wait)
	}
	for i := range 3 {
		if l, took := bannerFlow(t, h, dst); l != "220 banner\r\n" || took > wait/2 {
			t.Fatalf("flow %d: %q after %v, want the banner at once (FirstByteWait %v)", i+2, l, took, wait)
		}
	}
	// Another port of the same name was not learned.
	if h.p.speakers.known("smtp.test", srv.port()+1) {
		t.Errorf("a port never seen was learned")
	}
}

// TestServerFirstNotTaught: a sandbox cannot make the proxy dial a server
// that speaks only when spoken to before it has checked the client's first
// bytes. A silent client's flows (the proxy dials after FirstByteWait) teach
// nothing, so a fronted ClientHello sent at once afterwards still opens no
// connection to the server; and where a server does speak first, a fronted
// ClientHello after its greeting is still refused with no byte upstream.
func TestServerFirstNotTaught(t *testing.T) {
	var mu sync.Mutex
	received := 0
	count := func(c net.Conn) {
		n, _ := io.Copy(io.Discard, c)
		mu.Lock()
		received += int(n)
		mu.Unlock()
	}
	quiet := newServer(t, count)  // speaks only when spoken to: says nothing
	answers := newServer(t, echo) // speaks only when spoken to: answers
	speaker := newServer(t, func(c net.Conn) {
		io.WriteString(c, "220 banner\r\n")
		count(c)
	})
	h := newHarness(t, flags{
		allow: []string{"quiet.test", "answers.test", "speaker.test"},
		hosts: []string{"quiet.test:127.0.0.1", "answers.test:127.0.0.1", "speaker.test:127.0.0.1"},
		ips:   []string{"127.0.0.1/32"},
	}, func(p *Proxy) { p.FirstByteWait = 50 * time.Millisecond })
	quietDst := netip.AddrPortFrom(h.mustLookup("quiet.test"), quiet.port())
	for range 3 {
		c, err := h.dial(quietDst)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // silent past FirstByteWait: the proxy dials
		c.Close()
	}
	// A client silent past FirstByteWait that then speaks: the server's
	// answer comes after the client's bytes, which is no greeting.
	answersDst := netip.AddrPortFrom(h.mustLookup("answers.test"), answers.port())
	for range 3 {
		c, err := h.dial(answersDst)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		c.Write([]byte("hi\n"))
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if l, err := bufio.NewReader(c).ReadString('\n'); err != nil || l != "hi\n" {
			t.Fatalf("echo %q, %v", l, err)
		}
		c.Close()
	}
	if h.p.speakers.known("quiet.test", quiet.port()) || h.p.speakers.known("answers.test", answers.port()) {
		t.Fatalf("ATTACK WORKED: silent clients taught a server that never spoke first")
	}
	before := quiet.count()
	c, err := h.dial(quietDst)
	if err != nil {
		t.Fatal(err)
	}
	c.Write(clientHello(t, "evil.example"))
	expectRefused(t, c)
	c.Close()
	h.waitEvent(func(e Event) bool {
		return e.Decision == "deny" && strings.Contains(e.Reason, "domain fronting") && e.Port == quiet.port()
	})
	if quiet.count() != before {
		t.Errorf("ATTACK WORKED: a fronted ClientHello to a server that does not speak first opened a connection to it")
	}

	// A server that speaks first, learned: the greeting comes at once, a
	// fronted ClientHello after it is refused and never reaches the server.
	speakerDst := netip.AddrPortFrom(h.mustLookup("speaker.test"), speaker.port())
	bannerFlow(t, h, speakerDst)
	if !h.p.speakers.known("speaker.test", speaker.port()) {
		t.Fatalf("a server that spoke first was not learned")
	}
	mu.Lock()
	received = 0
	mu.Unlock()
	frontedAfterGreeting(t, h, speakerDst, func() int {
		mu.Lock()
		defer mu.Unlock()
		return received
	})
}

// frontedAfterGreeting: on a flow to dst dialled before its first bytes,
// a fronted ClientHello sent after the server's greeting is refused, and
// the server (received: the bytes it read) receives none of it.
func frontedAfterGreeting(t *testing.T, h *harness, dst netip.AddrPort, received func() int) {
	t.Helper()
	c, err := h.dial(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	if l, err := br.ReadString('\n'); err != nil || l != "220 banner\r\n" {
		t.Fatalf("greeting %q, %v", l, err)
	}
	c.Write(clientHello(t, "evil.example"))
	if rest, _ := io.ReadAll(br); len(rest) > 0 && !isRefusal(rest) {
		t.Fatalf("ATTACK WORKED: %q through a refused flow", rest)
	}
	h.waitEvent(func(e Event) bool {
		return e.Decision == "deny" && strings.Contains(e.Reason, "domain fronting") && e.Port == dst.Port()
	})
	time.Sleep(50 * time.Millisecond) // the server's read of a reset
	if n := received(); n != 0 {
		t.Errorf("ATTACK WORKED: the server received %d bytes of a refused flow", n)
	}
}

// TestServerFirstLate: a server whose first bytes come later than
// serverFirstWindow after the dial (after an idle timeout, a tarpit) is not
// learned.
func TestServerFirstLate(t *testing.T) {
	srv := newServer(t, func(c net.Conn) {
		time.Sleep(serverFirstWindow + 200*time.Millisecond)
		io.WriteString(c, "408 idle\r\n")
	})
	ps := srv.portStr()
	h := newHarness(t, flags{allow: []string{"slow.test"}, hosts: []string{"slow.test:127.0.0.1"}, ips: []string{"127.0.0.1/32:" + ps}},
		func(p *Proxy) { p.FirstByteWait = 30 * time.Millisecond })
	if l, _ := bannerFlow(t, h, netip.AddrPortFrom(h.mustLookup("slow.test"), srv.port())); l != "408 idle\r\n" {
		t.Fatalf("got %q", l)
	}
	if h.p.speakers.known("slow.test", srv.port()) {
		t.Errorf("a server that spoke after %v was learned", serverFirstWindow)
	}
}

func TestServerFirstCap(t *testing.T) {
	s := serverFirst{ports: map[uint16]bool{}} // no well-known port among those learned
	for i := range maxServerFirst + 10 {
		s.learn("n.test", uint16(i))
	}
	if len(s.m) != maxServerFirst {
		t.Fatalf("%d destinations kept, want the cap %d", len(s.m), maxServerFirst)
	}
	if !s.known("n.test", 0) || s.known("n.test", maxServerFirst+1) {
		t.Errorf("known: the first learned must stay, those past the cap must not be kept")
	}
}

// TestServerFirstWellKnown: a run's first connection to a well-known
// server-first port gets its greeting at once, and what the client sends
// after it is still checked before a byte goes upstream: a fronted
// ClientHello is refused and the server receives nothing of it.
func TestServerFirstWellKnown(t *testing.T) {
	const wait = 300 * time.Millisecond
	var mu sync.Mutex
	received := 0
	srv := newServer(t, func(c net.Conn) {
		io.WriteString(c, "220 banner\r\n")
		n, _ := io.Copy(io.Discard, c)
		mu.Lock()
		received += int(n)
		mu.Unlock()
	})
	h := newHarness(t, flags{allow: []string{"mail.test"}, hosts: []string{"mail.test:127.0.0.1"}, ips: []string{"127.0.0.1/32:" + srv.portStr()}},
		func(p *Proxy) {
			p.FirstByteWait = wait
			// The test server's port stands for 25: a test cannot bind it.
			p.speakers.ports = map[uint16]bool{srv.port(): true}
		})
	dst := netip.AddrPortFrom(h.mustLookup("mail.test"), srv.port())
	if l, took := bannerFlow(t, h, dst); l != "220 banner\r\n" || took > wait/2 {
		t.Fatalf("first flow: %q after %v, want the banner at once (FirstByteWait %v)", l, took, wait)
	}
	if len(h.p.speakers.m) != 0 {
		t.Errorf("a well-known port was learned besides: %v", h.p.speakers.m)
	}
	frontedAfterGreeting(t, h, dst, func() int {
		mu.Lock()
		defer mu.Unlock()
		return received
	})
}

// TestWellKnownServerFirstPorts: the table holds the server-first
// protocols' ports and none of the client-first ones (whose flows keep the
// check before the dial).
func TestWellKnownServerFirstPorts(t *testing.T) {
	var s serverFirst
	for _, tc := range []struct {
		port uint16
		want bool
	}{
		{21, true}, {22, true}, {25, true}, {110, true}, {143, true}, {587, true}, {2525, true}, {3306, true},
		{80, false}, {443, false}, {5432, false}, {6379, false}, {8080, false}, {465, false}, {993, false}, {27017, false},
	} {
		if got := s.known("any.test", tc.port); got != tc.want {
			t.Errorf("port %d: known %v, want %v", tc.port, got, tc.want)
		}
	}
}
