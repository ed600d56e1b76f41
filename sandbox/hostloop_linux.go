package sandbox

// This file: the refusal of a connect to the sandbox's own loopback at a
// port where the host's loopback has a server. The sandbox's network
// namespace is its own, so 127.0.0.1 inside is not the host's: an agent
// whose local model server (Ollama on 11434), MCP server or database
// runs on the host at localhost:PORT meets "connection refused", which
// reads as a server that is down, and jail never saw the flow. The reset
// watch (nsnet) hears the loopback's refusals; one is said, as a refusal
// with the flag that makes the port the host's (--allow-host-port), when
// the host's loopback listens at that port and nothing inside listened
// there during the run (a test that polls for its own server on the
// port meets the same refusals until the server is up: no word then).

import (
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/jail-sandbox/jail/netproxy"
	"github.com/jail-sandbox/jail/procnet"
)

// loopRefusals remembers the loopback ports refused, and those that
// listened inside.
type loopRefusals struct {
	mu sync.Mutex
	// pending: refused ports whose word waits (loopRefusalWait, or the
	// run's end); said: ports said or found not worth it, never looked at
	// again; listened: ports a server inside listened on (the exec
	// audit's listen reports).
	pending, said, listened map[uint16]bool
	// looked: when each port was last weighed: a client polling a
	// closed port makes a refusal every few milliseconds, and the host's
	// table is read at most once a second a port.
	looked map[uint16]time.Time
	// timers: the pending ports' waits, each counted in the runner's bg
	// until it has run or been stopped at the run's end.
	timers map[uint16]*time.Timer
}

// loopRefusalWait is how long a refused port waits for a server inside
// to listen there (a test's own, which it was polling for) before it is
// said.
const loopRefusalWait = listenHintAfter

// hostServes reports whether the host's loopback has a server at port
// that --allow-host-port reaches: one listening on 127.0.0.1, on ::1 or
// on every address (the supervisor's network namespace, which is the
// host's; the relay dials 127.0.0.1, then ::1).
func hostServes(port uint16) bool {
	return procnet.Listens(0, port, func(a netip.Addr) bool {
		a = a.Unmap()
		return a == netip.AddrFrom4([4]byte{127, 0, 0, 1}) || a == netip.IPv6Loopback() || a.IsUnspecified()
	})
}

// loopbackRefused weighs a connect the sandbox's loopback refused at
// port (the reset watch's report).
func (r *runner) loopbackRefused(port uint16) {
	if port == 0 || r.pol == nil || r.degraded {
		return
	}
	l := &r.loops
	l.mu.Lock()
	if l.said[port] || l.pending[port] || l.listened[port] {
		l.mu.Unlock()
		return
	}
	if l.said == nil {
		l.said, l.pending, l.looked, l.timers = map[uint16]bool{}, map[uint16]bool{}, map[uint16]time.Time{}, map[uint16]*time.Timer{}
	}
	if t, ok := l.looked[port]; ok && time.Since(t) < time.Second {
		l.mu.Unlock()
		return
	}
	l.looked[port] = time.Now()
	l.mu.Unlock()
	if slices.Contains(r.hostPorts(), port) {
		return // the port is the host's already (or was taken: said at start)
	}
	// The host's table now, while the refused client is at it: a server
	// the host starts later was not what it missed.
	if !hostServes(port) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending[port] = true
	// Counted as the watch that calls this is (its count is held now):
	// the run's end waits for a wait that runs, or stops it
	// (loopRefusalsAtEnd), so no word comes after the trail's end.
	r.bg.Add(1)
	l.timers[port] = time.AfterFunc(loopRefusalWait, func() {
		defer r.bg.Done()
		r.sayLoopRefusal(port, false)
	})
}

// sayLoopRefusal says a pending refused port unless a server inside
// listened there meanwhile; atEnd: the run is over (the sandbox's table
// is gone: the exec audit's reports decide).
func (r *runner) sayLoopRefusal(port uint16, atEnd bool) {
	l := &r.loops
	l.mu.Lock()
	if !l.pending[port] {
		l.mu.Unlock()
		return
	}
	delete(l.pending, port)
	delete(l.timers, port)
	listened := l.listened[port]
	l.said[port] = true
	l.mu.Unlock()
	if listened {
		return
	}
	if !atEnd && !r.execsSeen.Load() {
		// No listen reports (--no-exec-audit, a host without seccomp
		// user notification): the sandbox's own table, while it runs.
		select {
		case <-r.sb.Done():
		default:
			if procnet.Listens(r.sb.Pid, port, nil) {
				return
			}
		}
	}
	r.recordNet(netproxy.HostLoopbackRefusal(port))
}

// loopRefusalsAtEnd says what still waits at the run's end (a one-shot
// client refused in the run's last half second).
func (r *runner) loopRefusalsAtEnd() {
	l := &r.loops
	l.mu.Lock()
	var ports []uint16
	for p := range l.pending {
		ports = append(ports, p)
		if t := l.timers[p]; t != nil && t.Stop() {
			r.bg.Done() // stopped before it ran: said below instead
		}
	}
	l.mu.Unlock()
	slices.Sort(ports)
	for _, p := range ports {
		r.sayLoopRefusal(p, true)
	}
}

// listenedInside notes a port a server inside listened on.
func (r *runner) listenedInside(port uint16) {
	l := &r.loops
	l.mu.Lock()
	if l.listened == nil {
		l.listened = map[uint16]bool{}
	}
	l.listened[port] = true
	l.mu.Unlock()
}

// hostPorts are the --allow-host-port ports, parsed (the policy checked
// them at start).
func (r *runner) hostPorts() []uint16 {
	var ports []uint16
	for _, s := range r.pol.AllowHostPort {
		if p, err := netproxy.ParseHostPort(s); err == nil {
			ports = append(ports, p)
		}
	}
	return ports
}
