package netproxy

import (
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// This file: destinations whose server speaks first. A flow for a name is
// dialled only once the client's first bytes have been checked (the SNI or
// Host must be that name), so that a refused flow opens no connection to the
// server at all. A client of a server-first protocol (MySQL, SMTP, FTP,
// IMAP, POP3) sends nothing until the server's greeting, so each of its
// connections waited FirstByteWait (200 ms) for bytes that could not come
// before the proxy dialled: 0.2 s against 0.2 ms direct, on every
// connection of a test suite or a connection pool (issue 16).
//
// The proxy learns such destinations from what it sees: when, on a flow
// whose client stayed silent, the server's first bytes come before any of
// the client's and within serverFirstWindow of the dial, the flow's name and
// port are a server-first destination, and later flows to them are dialled
// at once. Nothing is checked less: the client's first bytes are still read
// and checked before any of them goes upstream (relayFlow's late path), as
// they were after FirstByteWait. What changes for those destinations only
// is that a flow refused for its first bytes has opened a connection to the
// server first, as a silent client's flow always has. A server that speaks
// only once spoken to (TLS, HTTP) cannot be taught: it sends nothing before
// the client's bytes, which the proxy holds until they pass. The window
// keeps out servers that speak after a long silence (an HTTP server's 408
// after its idle timeout); the cap bounds the memory a sandbox can make the
// proxy spend on names.

// The well-known ports of server-first protocols start learned, so that a
// run's first connection to them does not wait either (it waited 200 ms:
// a run's first MySQL query, a CI job's one mail): it costs nothing the
// learned destinations do not, and a port in the table that a server uses
// for a client-first protocol is dialled at once with the same check. Nothing
// is lost to a sandbox that would abuse it: a client silent for
// FirstByteWait has its flow dialled before its first bytes are checked
// anyway; what the check holds, for every flow, is that none of a refused
// flow's bytes reaches the server.

// wellKnownServerFirst reports whether port is one whose servers greet
// first, by the protocols' own specifications. A switch, not a map:
// nothing allocated at the program's start (tests' TestPackageInitIsLight).
func wellKnownServerFirst(port uint16) bool {
	switch port {
	case 21, // FTP (RFC 959)
		22,   // SSH (RFC 4253; clients that wait for the server's version line)
		25,   // SMTP (RFC 5321)
		110,  // POP3 (RFC 1939)
		119,  // NNTP (RFC 3977)
		143,  // IMAP (RFC 9051)
		587,  // SMTP submission (RFC 6409)
		2525, // SMTP, the mail services' port beside 587
		3306: // MySQL and MariaDB
		return true
	}
	return false
}

// serverFirstWindow is how soon after the dial a server's first bytes must
// come for its destination to be learned. A greeting comes within a round
// trip; a tarpitting SMTP server's later one is not learned (its flows keep
// the first-byte wait).
const serverFirstWindow = time.Second

// maxServerFirst bounds the destinations learned in a run; past it no more
// are learned (their flows keep the first-byte wait).
const maxServerFirst = 1024

// serverFirst is the set of learned destinations (name:port). The zero value
// is empty and ready.
type serverFirst struct {
	mu    sync.Mutex
	m     map[string]struct{}
	ports map[uint16]bool // the well-known ports (nil: wellKnownServerFirst's; tests set their own)
}

// wellKnown says whether port is a well-known server-first port.
func (s *serverFirst) wellKnown(port uint16) bool {
	if s.ports == nil {
		return wellKnownServerFirst(port)
	}
	return s.ports[port]
}

func serverFirstKey(name string, port uint16) string {
	return net.JoinHostPort(name, strconv.Itoa(int(port)))
}

// known says whether name:port is server-first: a well-known port, or
// learned.
func (s *serverFirst) known(name string, port uint16) bool {
	if s.wellKnown(port) {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[serverFirstKey(name, port)]
	return ok
}

// learn records name:port as server-first, unless the set is full or the
// port is a well-known one (known already, for every name).
func (s *serverFirst) learn(name string, port uint16) {
	if s.wellKnown(port) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]struct{}{}
	}
	if len(s.m) < maxServerFirst {
		s.m[serverFirstKey(name, port)] = struct{}{}
	}
}

// firstWatch is what relayFlow's two directions share to tell who spoke
// first on a flow whose client was silent.
type firstWatch struct {
	start       time.Time
	clientSpoke atomic.Bool // set once the client's first bytes were read
}

// watchDown waits on a watched flow until the server's side is readable
// (its first bytes, its end or an error) and learns the destination when
// bytes came before the client's first (see the top of this file). It only
// peeks: the bytes stay in the socket for copyHalf to splice. It returns at
// once when up is not a socket it can wait on (a test's pipe).
func (p *Proxy) watchDown(f *flow, w *firstWatch, up net.Conn) {
	sc, ok := up.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	rc.Read(func(fd uintptr) bool {
		n, err := peekByte(fd)
		if errors.Is(err, syscall.EAGAIN) {
			return false // nothing yet: wait in the poller
		}
		if n > 0 && !w.clientSpoke.Load() && time.Since(w.start) < serverFirstWindow {
			p.speakers.learn(f.name, f.dst.Port())
		}
		return true
	})
}
