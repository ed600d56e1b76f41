package netproxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// This file: HTTP/1 request heads and their message framing (RFC 9112), as
// far as the proxy needs them to check every request of a plaintext flow.
//
// The proxy never rewrites a request. It reads each head whole, checks the
// names it claims against the flow's name, and only then forwards it; the
// body follows under the framing the head declares. Anything a server could
// frame differently from us (both Content-Length and Transfer-Encoding,
// duplicate lengths, a transfer coding other than "chunked", whitespace
// before a colon, bare CR, folded lines, chunk lines without CRLF) is
// refused rather than guessed: a disagreement on where a body ends is what
// request smuggling is made of, and here it would carry a second, unchecked
// request to another virtual host.

// maxChunkLine bounds a chunk-size line (size + extensions).
const maxChunkLine = 4096

// reqHead is what the proxy needs from one HTTP/1 request head.
type reqHead struct {
	method string
	// names are the hosts the request claims: the authority of an
	// absolute-form or authority-form (CONNECT) target, then Host.
	names []string
	// length is the body length from Content-Length (0 when absent).
	length int64
	// chunked: Transfer-Encoding: chunked; length is then unused.
	chunked bool
	// upgrade: CONNECT or an Upgrade header: if the server agrees, what
	// follows this request is another protocol, not HTTP/1.
	upgrade bool
}

// parseHTTPHead returns the names a complete head claims (inspect's view).
func parseHTTPHead(b []byte) ([]string, error) {
	h, err := parseRequestHead(b)
	return h.names, err
}

// parseRequestHead parses the request head at the start of b (leading empty
// lines already skipped). It returns errNeedMore until the blank line that
// ends the head has arrived, and an error wrapping errMalformed for a head
// the proxy refuses.
func parseRequestHead(b []byte) (reqHead, error) {
	var h reqHead
	end := headEnd(b)
	if end < 0 {
		if len(b) >= maxSniff {
			return h, malformed("HTTP request head larger than 64 KiB")
		}
		return h, errNeedMore
	}
	head := string(b[:end])
	if i := strings.IndexByte(head, 0); i >= 0 {
		return h, malformed("NUL byte in the HTTP request head")
	}
	lines := strings.Split(strings.ReplaceAll(head, "\r\n", "\n"), "\n")
	for _, l := range lines {
		if strings.IndexByte(l, '\r') >= 0 {
			// RFC 9112 2.2: a bare CR is invalid; some servers end a line there.
			return h, malformed("bare CR in the HTTP request head")
		}
	}
	reqLine := strings.Fields(lines[0])
	if len(reqLine) != 3 {
		return h, malformed("HTTP request line is not METHOD TARGET VERSION")
	}
	h.method = reqLine[0]
	target, version := reqLine[1], strings.ToUpper(reqLine[2])
	switch {
	case version == "HTTP/1.1" || version == "HTTP/1.0":
	case h.method == "PRI" || strings.HasPrefix(version, "HTTP/2"):
		// The HTTP/2 connection preface (RFC 9113 3.4): frames follow whose
		// :authority the proxy cannot check without an HPACK decoder.
		return h, malformed("cleartext HTTP/2 (prior knowledge) is refused: its :authority cannot be checked; use https:// or HTTP/1.1")
	default:
		return h, malformed("HTTP version " + reqLine[2] + " is not HTTP/1.0 or HTTP/1.1")
	}
	if !isToken(h.method) {
		return h, malformed("HTTP method is not a token")
	}
	if i := strings.Index(target, "://"); i >= 0 {
		auth := target[i+3:]
		if j := strings.IndexAny(auth, "/?#"); j >= 0 {
			auth = auth[:j]
		}
		if j := strings.LastIndexByte(auth, '@'); j >= 0 {
			auth = auth[j+1:]
		}
		h.names = append(h.names, stripPort(auth))
	} else if h.method == "CONNECT" {
		// Authority-form (RFC 9112 3.2.3): a proxy behind the allowed name
		// would open a tunnel to this host.
		h.names = append(h.names, stripPort(target))
	}
	h.upgrade = h.method == "CONNECT"
	hosts, lengths, encodings := 0, 0, 0
	for _, l := range lines[1:] {
		if l == "" {
			break
		}
		if l[0] == ' ' || l[0] == '\t' {
			// Obsolete line folding: a smuggling vector, refused (RFC 9112 5.2).
			return h, malformed("folded HTTP header line")
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return h, malformed("HTTP header line without colon")
		}
		if !isToken(k) {
			// RFC 9112 5.1: whitespace between name and colon must be
			// rejected; a lenient server would read "Transfer-Encoding :".
			return h, malformed(fmt.Sprintf("invalid HTTP header name %q", k))
		}
		v = strings.Trim(v, " \t")
		switch strings.ToLower(k) {
		case "host":
			hosts++
			h.names = append(h.names, stripPort(v))
		case "content-length":
			lengths++
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 || strings.Trim(v, "0123456789") != "" || len(v) > 18 {
				return h, malformed(fmt.Sprintf("HTTP Content-Length %q is not a plain decimal", v))
			}
			h.length = n
		case "transfer-encoding":
			encodings++
			if !strings.EqualFold(v, "chunked") {
				return h, malformed(fmt.Sprintf("HTTP Transfer-Encoding %q: only a single \"chunked\" is accepted", v))
			}
			h.chunked = true
		case "upgrade":
			h.upgrade = true
			for _, proto := range strings.Split(v, ",") {
				name, _, _ := strings.Cut(strings.TrimSpace(proto), "/")
				if strings.EqualFold(name, "h2c") {
					return h, malformed("Upgrade: h2c is refused: HTTP/2 frames carry an :authority the proxy cannot check")
				}
			}
		case "http2-settings":
			return h, malformed("HTTP2-Settings (an h2c upgrade) is refused: HTTP/2 frames carry an :authority the proxy cannot check")
		}
	}
	switch {
	case hosts > 1:
		// RFC 9112 3.2: more than one Host is a 400; servers disagree on which wins.
		return h, malformed("several Host headers")
	case lengths > 1:
		return h, malformed("several Content-Length headers")
	case encodings > 1:
		return h, malformed("several Transfer-Encoding headers")
	case lengths > 0 && encodings > 0:
		// RFC 9112 6.1: a server may take either; the classic smuggling pair.
		return h, malformed("both Content-Length and Transfer-Encoding")
	case encodings > 0 && version == "HTTP/1.0":
		return h, malformed("Transfer-Encoding in an HTTP/1.0 request")
	}
	return h, nil
}

// isToken reports whether s is a non-empty RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

// parseChunkLine parses a chunk-size line without its CRLF: hex size,
// optional extensions (";name[=value]"), nothing a server could split
// differently.
func parseChunkLine(l []byte) (int64, error) {
	size, ext, _ := bytes.Cut(l, []byte(";"))
	size = bytes.TrimRight(size, " \t")
	if len(size) == 0 || len(size) > 15 {
		return 0, malformed(fmt.Sprintf("HTTP chunk size %q", size))
	}
	var n int64
	for _, c := range size {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, malformed(fmt.Sprintf("HTTP chunk size %q is not hex", size))
		}
		n = n<<4 | int64(d)
	}
	for _, c := range ext {
		if c < 0x20 && c != '\t' || c == 0x7f {
			return 0, malformed("control byte in an HTTP chunk extension")
		}
	}
	return n, nil
}

// errNotHTTP: after a complete request, the client sent bytes that are no
// HTTP/1 request line (and no Upgrade or CONNECT made another protocol
// plausible).
var errNotHTTP = errors.New("not an HTTP/1 request")

// reqRelay forwards the client's side of a plaintext HTTP/1 flow upstream,
// request by request, checking each head against the flow's name before a
// byte of it leaves.
//
// Throughput (why framing and not "one request per connection"): a limit of
// one request would still need the same framing to know where the first
// request ends, and it would break keep-alive for every client. Following
// the framing costs one user-space read per head (and per chunk-size line);
// bodies of known length, and the data of each chunk, are moved with
// io.CopyN, which splices socket to socket, and the response direction is
// never parsed at all: a large download is spliced exactly as before.
//
// What is assumed of the server: RFC 9112 framing. A server that answers
// early (417 to Expect: 100-continue, 413) either reads the body it was
// announced or closes the connection (RFC 9110 10.1.1); a server that did
// neither would take body bytes for a request jail never saw.
type reqRelay struct {
	p   *Proxy
	f   *flow
	src net.Conn // the sandbox side
	dst net.Conn // upstream
	buf []byte   // read from src, not yet forwarded
	n   int64    // bytes written upstream
	// requests counts the request heads forwarded.
	requests int
}

// run relays until the client ends its side (nil error; dst is then
// half-closed), a request is refused (deny is set; nothing of that request
// went upstream) or an I/O error.
func (r *reqRelay) run() (deny string, err error) {
	mayUpgrade := false
	for {
		h, err := r.head(mayUpgrade)
		switch {
		case errors.Is(err, io.EOF):
			return "", r.closeWrite()
		case errors.Is(err, errOpaque):
			// The previous request asked for another protocol and the client
			// now speaks one: what follows is no longer HTTP/1 (WebSocket
			// frames, a CONNECT tunnel's TLS). Relay it as is.
			if err := r.write(r.buf); err != nil {
				return "", err
			}
			r.buf = nil
			n, err := copyHalf(r.dst, r.src)
			r.n += n
			return "", err
		case err != nil:
			var deny denyError
			if errors.As(err, &deny) {
				return string(deny), nil
			}
			return "", err
		}
		mayUpgrade = h.upgrade
		if h.chunked {
			err = r.chunks()
		} else {
			err = r.forward(h.length)
		}
		if err != nil {
			var deny denyError
			if errors.As(err, &deny) {
				return string(deny), nil
			}
			if errors.Is(err, io.EOF) {
				return "", r.closeWrite()
			}
			return "", err
		}
	}
}

// denyError carries a refusal reason through run's helpers.
type denyError string

func (d denyError) Error() string { return string(d) }

var errOpaque = errors.New("another protocol follows")

func (r *reqRelay) closeWrite() error {
	if cw, ok := r.dst.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	} else {
		r.dst.Close()
	}
	return nil
}

func (r *reqRelay) write(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	n, err := r.dst.Write(b)
	r.n += int64(n)
	return err
}

// read appends what src has to buf (at least one byte, or an error).
func (r *reqRelay) read() error {
	if len(r.buf) == cap(r.buf) {
		nb := make([]byte, len(r.buf), max(2*cap(r.buf), 4096))
		copy(nb, r.buf)
		r.buf = nb
	}
	n, err := r.src.Read(r.buf[len(r.buf):cap(r.buf)])
	r.buf = r.buf[:len(r.buf)+n]
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// head reads, checks and forwards the next request head. Empty lines before
// it are skipped (servers skip them too, RFC 9112 2.2). io.EOF: the client
// ended its side between requests.
func (r *reqRelay) head(mayUpgrade bool) (reqHead, error) {
	deadline := time.Time{}
	defer r.src.SetReadDeadline(time.Time{})
	for {
		r.buf = bytes.TrimLeft(r.buf, "\r\n")
		if len(r.buf) > 0 {
			res, err := inspect(r.buf)
			switch {
			case errors.Is(err, errNeedMore):
			case err != nil:
				return reqHead{}, denyError(r.reason(err.Error()))
			case res.kind != kindHTTP:
				if mayUpgrade {
					return reqHead{}, errOpaque
				}
				return reqHead{}, denyError(r.reason(errNotHTTP.Error() + " after a complete request"))
			default:
				if reason := r.p.checkClaims(r.f, res); reason != "" {
					return reqHead{}, denyError(r.reason(reason))
				}
				h, err := parseRequestHead(r.buf)
				if err != nil { // inspect parsed the same head: cannot differ
					return reqHead{}, denyError(r.reason(err.Error()))
				}
				end := headEnd(r.buf)
				if err := r.write(r.buf[:end]); err != nil {
					return reqHead{}, err
				}
				r.buf = r.buf[end:]
				r.requests++
				return h, nil
			}
			if len(r.buf) >= maxSniff {
				return reqHead{}, denyError(r.reason("no complete HTTP request head in 64 KiB"))
			}
			if deadline.IsZero() {
				// From the head's first byte: a client gets SniffTimeout to
				// send the rest. Idle time between requests is not limited.
				deadline = time.Now().Add(r.p.sniffTimeout())
				r.src.SetReadDeadline(deadline)
			}
		}
		if err := r.read(); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return reqHead{}, denyError(r.reason(fmt.Sprintf("incomplete HTTP request head after %v", r.p.sniffTimeout())))
			}
			if errors.Is(err, io.EOF) && len(bytes.TrimLeft(r.buf, "\r\n")) == 0 {
				return reqHead{}, io.EOF
			}
			if errors.Is(err, io.EOF) {
				// A partial head, then the end: never checked, never sent.
				return reqHead{}, io.EOF
			}
			return reqHead{}, err
		}
	}
}

// reason adds which request of the connection was refused.
func (r *reqRelay) reason(why string) string {
	if r.requests == 0 {
		return why
	}
	return fmt.Sprintf("%s (request %d on this connection)", why, r.requests+1)
}

// forward moves n body bytes upstream: what is buffered, then a splice.
func (r *reqRelay) forward(n int64) error {
	if k := min(n, int64(len(r.buf))); k > 0 {
		if err := r.write(r.buf[:k]); err != nil {
			return err
		}
		r.buf = r.buf[k:]
		n -= k
	}
	if n == 0 {
		return nil
	}
	m, err := io.CopyN(r.dst, r.src, n) // (*net.TCPConn).ReadFrom: splice(2)
	r.n += m
	return err
}

// line returns the next CRLF-terminated line (without CRLF) from buf,
// reading as needed, and consumes it. A bare LF or CR, or a line longer
// than max, is refused: servers disagree on them.
func (r *reqRelay) line(max int, what string) ([]byte, error) {
	for {
		if i := bytes.IndexByte(r.buf, '\n'); i >= 0 {
			if i == 0 || r.buf[i-1] != '\r' {
				return nil, denyError(r.reason(what + " line ends with a bare LF"))
			}
			l := r.buf[:i-1]
			if bytes.IndexByte(l, '\r') >= 0 {
				return nil, denyError(r.reason("bare CR in an HTTP " + what + " line"))
			}
			r.buf = r.buf[i+1:]
			return l, nil
		}
		if len(r.buf) > max {
			return nil, denyError(r.reason(fmt.Sprintf("HTTP %s line longer than %d bytes", what, max)))
		}
		if err := r.read(); err != nil {
			return nil, err
		}
	}
}

// chunks forwards a chunked body (RFC 9112 7.1): each size line is parsed
// in user space, each chunk's data is spliced, then the trailer section.
func (r *reqRelay) chunks() error {
	for {
		l, err := r.line(maxChunkLine, "chunk-size")
		if err != nil {
			return err
		}
		size, err := parseChunkLine(l)
		if err != nil {
			return denyError(r.reason(err.Error()))
		}
		if err := r.write(append(l, '\r', '\n')); err != nil {
			return err
		}
		if size == 0 {
			break
		}
		if err := r.forward(size); err != nil {
			return err
		}
		for len(r.buf) < 2 {
			if err := r.read(); err != nil {
				return err
			}
		}
		if r.buf[0] != '\r' || r.buf[1] != '\n' {
			return denyError(r.reason("HTTP chunk data is not followed by CRLF"))
		}
		if err := r.write(r.buf[:2]); err != nil {
			return err
		}
		r.buf = r.buf[2:]
	}
	// Trailer fields, then the empty line that ends the message.
	total := 0
	for {
		l, err := r.line(maxSniff, "trailer")
		if err != nil {
			return err
		}
		total += len(l) + 2
		if total > maxSniff {
			return denyError(r.reason("HTTP trailer section larger than 64 KiB"))
		}
		if len(l) > 0 {
			k, _, ok := bytes.Cut(l, []byte(":"))
			if !ok || !isToken(string(k)) {
				return denyError(r.reason("malformed HTTP trailer field"))
			}
		}
		if err := r.write(append(l, '\r', '\n')); err != nil {
			return err
		}
		if len(l) == 0 {
			return nil
		}
	}
}
