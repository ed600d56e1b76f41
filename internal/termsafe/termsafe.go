// Package termsafe says which characters of agent-chosen text must not
// reach a terminal as they are: jail's notices (package notice) and
// `jail audit`'s human output (package audit) write them escaped, by one
// rule, so that a class added for one is added for both.
package termsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Control reports whether r acts on a terminal rather than print: C0
// (newline and tab included), DEL, C1 (0x9b is CSI to a terminal reading
// 8-bit controls), and the bidi controls (U+202E RIGHT-TO-LEFT OVERRIDE,
// the isolates), with which a bidi-aware terminal lays out the agent's
// /tmp/invoice<RLO>fdp.sh as /tmp/invoicehs.pdf, a name it did not run.
func Control(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Bidi_Control, r)
}

// Escape returns s inert on a terminal and on one line: each character
// Control reports is written as \xNN (\uNNNN above 0xff), and so is each
// byte that is not UTF-8 (a lone 0x9b is CSI to a terminal reading 8-bit
// controls, and ranging over a string yields U+FFFD for it, which no check
// sees). s is returned as it is when it needs nothing.
func Escape(s string) string {
	if !strings.ContainsFunc(s, Control) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case Control(r) && r > 0xff:
			fmt.Fprintf(&b, `\u%04x`, r)
		case Control(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
