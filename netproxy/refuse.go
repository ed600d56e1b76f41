package netproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"
)

// This file: how a refusal sounds to the client. A refused flow is not just
// reset: a reset (or NXDOMAIN, or a timeout) is what a flaky network looks
// like, and clients retry it for a minute or more (npm, pip, agent CLIs). The
// client is answered in its own protocol with a failure no client retries:
//
//   - HTTP/1: "403 Forbidden" whose body names the refused host and the flag
//     that would allow it, as JSON {"error": "..."} (npm prints a JSON
//     body's "error" after the status line, whatever its Content-Type)
//     labelled text/plain; charset=utf-8 (the go command prints a text/plain
//     body as "server response:"; curl prints it as it is);
//   - TLS: a fatal access_denied alert after reading the ClientHello (RFC
//     8446 6.2): "tlsv1 alert access denied" in OpenSSL, "remote error: tls:
//     access denied" in Go. Never a certificate: jail has none to offer and
//     forges none;
//   - anything else (SSH, a database protocol, a silent client): a reset.

// tlsAccessDenied is one TLS record: alert, legacy version 3.3, length 2,
// level fatal (2), description access_denied (49).
var tlsAccessDenied = []byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x31}

// drainLimit bounds what is read from a refused client after the answer, so
// that closing does not reset the answer away with unread data.
const drainLimit = 1 << 20

// refusalBody is the 403 body: one line of JSON, see above.
func refusalBody(text string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Error string `json:"error"`
	}{"jail: " + text})
	return b.Bytes() // Encode ends it with "\n"
}

// refusal403 is the whole HTTP response for a refused request.
func refusal403(text string) []byte {
	body := refusalBody(text)
	return append(fmt.Appendf(nil, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n", len(body)), body...)
}

// spell renders option references in text for the client (Spell).
func (p *Proxy) spell(s string) string {
	if p.Spell == nil {
		return plainRefs(s)
	}
	return p.Spell(s)
}

// publicText is the refusal as the sandbox may read it, its option
// references unrendered (see spell).
func publicText(target string, d Decision) string {
	if d.Public != "" {
		return RefusalText(target, d.Public, "")
	}
	return RefusalText(target, d.Reason, d.Hint)
}

// refuse records a refused flow and answers the client in its protocol (see
// the top of this file). res is the verdict on the client's first bytes when
// sniffed is set; otherwise they are read here first (up to RefuseWait for
// the first byte, SniffTimeout for the rest). The event is
// emitted before the answer, so that the sandbox's record of refusals holds
// the line by the time the client reports the failure.
func (p *Proxy) refuse(f *flow, c net.Conn, d Decision, res sniffResult, sniffed bool) {
	d = p.Policy.Expected(f.name, d)
	if !sniffed {
		if _, r, err := p.sniffWait(c, p.refuseWait()); err == nil {
			res = r
		}
	}
	ev := p.event(f, false, d.Reason, netip.AddrPort{}, 0, 0)
	ev.Hint, ev.Public = d.Hint, d.Public
	if ev.Public == "" {
		ev.Public = d.Reason
	}
	p.emit(ev)
	var answer []byte
	switch res.kind {
	case kindHTTP:
		answer = refusal403(p.spell(publicText(f.target(), d)))
	case kindTLS:
		answer = tlsAccessDenied
	default:
		reset(c)
		return
	}
	c.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := c.Write(answer); err != nil {
		reset(c)
		return
	}
	closeGently(c)
}

// closeGently ends a connection after an answer: FIN first, then what the
// client still sends is read and dropped (a bounded amount, for a bounded
// time) so that close(2) does not turn into a reset that could overtake the
// answer.
func closeGently(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	c.SetReadDeadline(time.Now().Add(time.Second))
	io.CopyN(io.Discard, c, drainLimit)
	c.Close()
}

// refusalConnect403 is the answer to a refused CONNECT (a proxy-aware
// client's https:// URL). The refusal is in the reason phrase, where clients
// that report a failed tunnel put it: Go's transport prints the phrase,
// Python's http.client says "Tunnel connection failed: 403 PHRASE" (pip shows
// it on each retry); curl and git show only the code. The body says it once
// more as plain text: npm hands a CONNECT answer to the client as the
// origin's and prints its status line and a JSON body's "error", so JSON
// here would say it twice.
func refusalConnect403(text string) []byte {
	return connectAnswer("403 Forbidden", text)
}

// connectFailed502 is the answer to an allowed CONNECT whose upstream
// could not be reached (no such host, refused, timed out): the cause in
// the reason phrase as for a refusal, so that a client's error says that
// jail could not reach the host, not that it refused it (pip printed
// "Tunnel connection failed: 502 Bad Gateway", and Claude Code reads a
// failed tunnel as the proxy refusing it).
func connectFailed502(text string) []byte {
	return connectAnswer("502 Bad Gateway", text)
}

// connectAnswer is a CONNECT's answer with jail's text in its reason
// phrase (made safe there) and once in a plain-text body.
func connectAnswer(status, text string) []byte {
	body := "jail: " + text + "\n"
	return fmt.Appendf(nil, "HTTP/1.1 %s (%s)\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n%s",
		status, reasonPhrase("jail: "+text), len(body), body)
}

// reasonPhrase keeps s to what a reason phrase may hold (RFC 9112 4: HTAB,
// SP, visible ASCII; obs-text is left out, as clients differ on it). A CR or
// LF from a reason would otherwise end the status line and let the text
// inject headers into the client's view of the answer.
func reasonPhrase(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c != '\t' && (c < 0x20 || c > 0x7e) {
			b[i] = '?'
		}
	}
	return string(b)
}
