package termfilter

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// csiDeny decides a complete CSI sequence, given what follows "ESC [":
// parameters, intermediates and the final byte. It returns why the
// sequence is dropped, or "" to pass it. Everything that draws or sets a
// mode passes; what follows are the exceptions, each a way for the bytes
// to act on the host beyond the screen, or to make the terminal answer
// with content the sandbox chose or the host's own.
func csiDeny(b []byte) string {
	final := b[len(b)-1]
	if strings.IndexByte("tTiynwu|}~q]lh", final) < 0 && b[0] < 0x3c {
		return "" // the common case (m, H, K, J...): well-formed or not, nothing to check
	}
	b = b[:len(b)-1]
	var prefix byte
	if len(b) > 0 && b[0] >= 0x3c && b[0] <= 0x3f {
		prefix, b = b[0], b[1:]
	}
	if prefix == '>' && final == 'm' && modKeysQuery(b) {
		// "CSI > Pp ; ? m", the key modifier query as Gemini CLI asks it
		// (xterm's own is "CSI ? Pp m", which passes below). The answer is
		// "CSI > Pp ; Pv m", digits only; a terminal that does not know
		// the form ignores it. Dropped, every Gemini run ended with a
		// notice of a "malformed" sequence and without the keys' level.
		return ""
	}
	k := 0
	for k < len(b) && b[k] >= 0x30 && b[k] <= 0x3f {
		if b[k] >= 0x3c {
			// A private marker after the first byte: terminals disagree
			// on such sequences, so none passes.
			return "CSI (malformed)"
		}
		k++
	}
	params, inter := b[:k], string(b[k:])
	if strings.IndexFunc(inter, func(r rune) bool { return r < 0x20 || r > 0x2f }) >= 0 || len(inter) > 2 {
		return "CSI (malformed)"
	}
	p0 := firstParam(params)
	plain := prefix == 0 && inter == ""
	switch final {
	case 't':
		switch {
		case plain && (p0 == 22 || p0 == 23):
			return "" // push/pop the title stack (vim, less)
		case prefix == 0 && inter == "$":
			return "" // DECCARA: attributes of a rectangle
		case plain && (p0 == 20 || p0 == 21):
			// The reply is the title or icon label, which the sandbox
			// set: typed into the user's shell after jail exits.
			return "CSI 20/21 t (title report)"
		case plain && (p0 == 11 || p0 == 13 || p0 == 14 || p0 == 15 || p0 == 16 || p0 == 18 || p0 == 19):
			// The window's state, place or size, in pixels or cells
			// (Claude Code asks 16 t, the cell's size): dropped, the
			// host's screen is not the sandbox's to measure; unanswered,
			// the program goes on without (Quiet).
			return "CSI t (a size or state query)"
		case plain:
			return "CSI t (window operation or report)"
		case prefix == '>':
			return "CSI > t (XTSMTITLE title modes)"
		}
		return "CSI t (window operation)"
	case 'T':
		if prefix == '>' {
			return "CSI > T (XTRMTITLE title modes)"
		}
	case 'i':
		// Media copy: printer controller mode sends what follows to the
		// printer command instead of the screen.
		return "CSI i (media copy)"
	case 'y':
		// DECRQCRA (*y) answers a checksum of screen areas, which can
		// leak what the host showed; XTCHECKSUM (#y); DECTST (y) runs a
		// self-test.
		return "CSI y (screen checksum or self-test)"
	case 'n':
		if prefix == '?' && hasParam(params, 63) {
			return "CSI ? 63 n (DECCKSR memory checksum)"
		}
	case 'w':
		if inter == "$" {
			return "CSI $ w (DECRQPSR presentation state report)"
		}
	case 'u':
		if inter == "$" || inter == "&" {
			return "CSI $ u / & u (terminal state report)"
		}
	case '|':
		if inter == "'" {
			return "CSI ' | (DECRQLP locator report)"
		}
	case '}', '~':
		if inter == "$" {
			return "CSI $ } / $ ~ (status line)"
		}
	case 'q':
		if inter == "," {
			return "CSI , q (DECTID terminal id)"
		}
	case ']':
		return "CSI ] (Linux console setterm)"
	case 'l':
		if prefix == '?' && inter == "" && hasParam(params, 2) {
			// VT52 mode parses escapes differently from everything here.
			return "CSI ? 2 l (DECANM VT52 mode)"
		}
	case 'h':
		if plain && hasParam(params, 2) {
			return "CSI 2 h (KAM keyboard lock)"
		}
	}
	return ""
}

// modKeysQuery tells whether p (after the '>') is "Pp;?": a resource's
// number (one to three digits) and a question mark.
func modKeysQuery(p []byte) bool {
	d, ok := bytes.CutSuffix(p, []byte(";?"))
	if !ok || len(d) == 0 || len(d) > 3 {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// firstParam is the first numeric parameter, -1 when absent or too long.
func firstParam(p []byte) int {
	n, digits := 0, 0
	for _, c := range p {
		if c < '0' || c > '9' {
			break
		}
		if digits++; digits > 6 {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	if digits == 0 {
		return -1
	}
	return n
}

func hasParam(p []byte, want int) bool {
	for _, f := range strings.FieldsFunc(string(p), func(r rune) bool { return r == ';' || r == ':' }) {
		if firstParam([]byte(f)) == want {
			return true
		}
	}
	return false
}

// sanitize returns what of an allowed OSC's payload may pass, or false
// when the payload itself is refused.
func (f *Writer) sanitize(n int, s string) (string, bool) {
	switch oscClass(n) {
	case cClipboard:
		// "Pc;Pd": selection letters, then base64. "?" asks the terminal
		// to answer with the host's clipboard: never.
		sel, data, ok := strings.Cut(s, ";")
		if !ok || data == "?" || !only(sel, "cpqs01234567") || !only(data, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") {
			return "", false
		}
		return s, true
	case cHyperlinks, cCwd, cColors:
		// URIs and colour specs are printable ASCII.
		for i := 0; i < len(s); i++ {
			if s[i] < 0x20 || s[i] > 0x7e {
				return "", false
			}
		}
		return s, true
	}
	// Titles and notifications: text, with every control removed.
	var b strings.Builder
	for i := 0; i < len(s); {
		if f.eight {
			if c := s[i]; c >= 0x20 && c != 0x7f && (c < 0x80 || c >= 0xa0) {
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !(r == utf8.RuneError && size <= 1) && r >= 0x20 && (r < 0x7f || r >= 0xa0) {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String(), true
}

func only(s, set string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) < 0 {
			return false
		}
	}
	return true
}
