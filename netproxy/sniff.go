package netproxy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// What the client's first bytes turned out to be.
const (
	kindUnknown = iota // nothing recognizable yet
	kindOther          // not TLS, not HTTP/1: no name to check
	kindTLS            // a TLS ClientHello
	kindHTTP           // an HTTP/1 request head
)

// maxSniff bounds what the proxy buffers before it has a verdict. A ClientHello
// with post-quantum key shares is about 2 KiB; 64 KiB leaves room for huge
// cookies while keeping 1,000 stalled flows under 64 MiB.
const maxSniff = 64 << 10

var (
	errNeedMore  = errors.New("need more bytes")
	errMalformed = errors.New("malformed")
)

// sniffResult is the verdict of inspect on a complete prefix.
type sniffResult struct {
	kind  int
	names []string // every name the client claims (SNI entries; Host and absolute-URI authority)
}

// inspect classifies the client's first bytes and extracts the names they
// claim. It returns errNeedMore while the prefix is too short to decide, and
// an error wrapping errMalformed for a TLS record or HTTP head that a server
// might read differently from us (the proxy refuses those rather than guess).
func inspect(b []byte) (sniffResult, error) {
	if len(b) == 0 {
		return sniffResult{}, errNeedMore
	}
	if b[0] == 0x16 { // TLS handshake record (RFC 8446 5.1)
		names, err := parseClientHello(b)
		return sniffResult{kind: kindTLS, names: names}, err
	}
	// RFC 9112 2.2: servers skip empty lines before the request line, so a
	// client could hide "GET ... Host: other" behind a CRLF. Skip them too.
	b = bytes.TrimLeft(b, "\r\n")
	if len(b) == 0 {
		return sniffResult{}, errNeedMore
	}
	switch looksHTTP(b) {
	case 1:
		names, err := parseHTTPHead(b)
		return sniffResult{kind: kindHTTP, names: names}, err
	case 0:
		return sniffResult{}, errNeedMore
	}
	return sniffResult{kind: kindOther}, nil
}

// looksHTTP: 1 = an HTTP/1 request line, -1 = certainly not, 0 = undecided.
// A request line is METHOD SP+ TARGET SP+ "HTTP/" (runs of spaces because
// nginx accepts them). Only an input that no HTTP server would take as a
// request line is classified as "not HTTP": a control byte in the target,
// or something other than "HTTP/" after it. Anything else stays undecided,
// so that a long target cannot push an unchecked Host header past us; the
// caller refuses the flow at maxSniff.
func looksHTTP(b []byte) int {
	i := 0
	for i < len(b) && i < 32 && (b[i] >= 'A' && b[i] <= 'Z' || b[i] >= 'a' && b[i] <= 'z') {
		i++
	}
	if i == len(b) && i < 32 {
		return 0
	}
	if i == 0 || i >= 32 || b[i] != ' ' {
		return -1
	}
	j := i
	for j < len(b) && b[j] == ' ' {
		j++
	}
	// The target: up to the next space; CTLs (including CR/LF: HTTP/0.9,
	// which has no Host to check) end any chance of a request line.
	for ; j < len(b) && b[j] != ' '; j++ {
		if b[j] < 0x20 || b[j] == 0x7f {
			return -1
		}
	}
	for j < len(b) && b[j] == ' ' {
		j++
	}
	if j == len(b) {
		return 0
	}
	rest := b[j:]
	const version = "HTTP/"
	n := min(len(rest), len(version))
	if !bytes.EqualFold(rest[:n], []byte(version[:n])) {
		return -1
	}
	if n < len(version) {
		return 0
	}
	return 1
}

// headEnd returns the offset just past the blank line ending an HTTP head
// (CRLFCRLF or LFLF or a mix), or -1.
func headEnd(b []byte) int {
	for i := 0; i < len(b); i++ {
		if b[i] != '\n' {
			continue
		}
		j := i + 1
		if j < len(b) && b[j] == '\r' {
			j++
		}
		if j < len(b) && b[j] == '\n' {
			return j + 1
		}
	}
	return -1
}

func stripPort(h string) string {
	h = strings.ToLower(h)
	if strings.HasPrefix(h, "[") {
		// An IPv6 literal ([2001:db8::1], [2001:db8::1]:8080) is its
		// address as netip prints it, the form the flow's address is
		// compared in: written any other way, the very address a client
		// connected to was refused as domain fronting. Anything else in
		// brackets (a name, a zone, trailing bytes) stays whole and
		// matches no name and no address.
		end := strings.IndexByte(h, ']')
		if end < 0 || (end+1 < len(h) && h[end+1] != ':') {
			return h
		}
		if a, err := netip.ParseAddr(h[1:end]); err == nil && a.Is6() && a.Zone() == "" {
			return a.String()
		}
		return h
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	return strings.TrimSuffix(h, ".")
}

// parseClientHello reassembles the first handshake message from one or more
// TLS records (clients and evasion tools both fragment it) and returns every
// host_name in its server_name extension (RFC 6066 3).
func parseClientHello(b []byte) ([]string, error) {
	var msg []byte
	for {
		if len(b) < 5 {
			return nil, errNeedMore
		}
		if b[0] != 0x16 {
			return nil, malformed("TLS record is not a handshake")
		}
		if b[1] != 3 {
			return nil, malformed("TLS record version is not 3.x")
		}
		n := int(binary.BigEndian.Uint16(b[3:5]))
		if n == 0 || n > 1<<14 {
			return nil, malformed("TLS record length out of range")
		}
		if len(b) < 5+n {
			return nil, errNeedMore
		}
		msg = append(msg, b[5:5+n]...)
		b = b[5+n:]
		if len(msg) >= 4 {
			if msg[0] != 1 {
				return nil, malformed("first TLS handshake message is not a ClientHello")
			}
			hl := int(msg[1])<<16 | int(msg[2])<<8 | int(msg[3])
			if hl > maxSniff {
				return nil, malformed("ClientHello larger than 64 KiB")
			}
			if len(msg) >= 4+hl {
				return parseHelloBody(msg[4 : 4+hl])
			}
		}
	}
}

// reader is a tiny bounds-checked cursor over a ClientHello.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) take(n int) []byte {
	if r.bad || n < 0 || n > len(r.b) {
		r.bad = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u8() int {
	v := r.take(1)
	if v == nil {
		return 0
	}
	return int(v[0])
}

func (r *reader) u16() int {
	v := r.take(2)
	if v == nil {
		return 0
	}
	return int(binary.BigEndian.Uint16(v))
}

func parseHelloBody(body []byte) ([]string, error) {
	r := &reader{b: body}
	r.take(2)       // legacy_version
	r.take(32)      // random
	r.take(r.u8())  // legacy_session_id
	r.take(r.u16()) // cipher_suites
	r.take(r.u8())  // legacy_compression_methods
	if r.bad {
		return nil, malformed("truncated ClientHello")
	}
	if len(r.b) == 0 {
		return nil, nil // no extensions at all: no SNI
	}
	ext := &reader{b: r.take(r.u16())}
	if r.bad {
		return nil, malformed("truncated ClientHello extensions")
	}
	var names []string
	seen := false
	for len(ext.b) > 0 && !ext.bad {
		typ := ext.u16()
		data := ext.take(ext.u16())
		if ext.bad {
			break
		}
		if typ != 0 { // server_name
			continue
		}
		if seen {
			return nil, malformed("two server_name extensions")
		}
		seen = true
		sn := &reader{b: data}
		list := &reader{b: sn.take(sn.u16())}
		if sn.bad || len(sn.b) != 0 {
			return nil, malformed("bad server_name extension")
		}
		for len(list.b) > 0 {
			nt := list.u8()
			name := list.take(list.u16())
			if list.bad {
				return nil, malformed("bad server_name entry")
			}
			if nt != 0 { // host_name is the only defined type
				return nil, malformed("unknown server_name type")
			}
			names = append(names, strings.TrimSuffix(strings.ToLower(string(name)), "."))
		}
	}
	if ext.bad {
		return nil, malformed("truncated ClientHello extension")
	}
	return names, nil
}

func malformed(msg string) error { return fmt.Errorf("%s: %w", msg, errMalformed) }
