// Package termsafe says which characters of agent-chosen text must not
// reach a terminal as they are: jail's notices (package notice) and
// `jail audit`'s human output (package audit) write them escaped, by one
// rule, so that a class added for one is added for both.
package termsafe

import "unicode"

// Control reports whether r acts on a terminal rather than print: C0
// (newline and tab included), DEL, C1 (0x9b is CSI to a terminal reading
// 8-bit controls), and the bidi controls (U+202E RIGHT-TO-LEFT OVERRIDE,
// the isolates), with which a bidi-aware terminal lays out the agent's
// /tmp/invoice<RLO>fdp.sh as /tmp/invoicehs.pdf, a name it did not run.
func Control(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Bidi_Control, r)
}
