package ptyrelay

import (
	"strings"
	"testing"
)

// The urgent line is one row: saved and restored around, cut to the width
// less one (a full row would wrap or scroll the agent's screen), inert
// (no control character of the text reaches the terminal).
func TestUrgentLine(t *testing.T) {
	got := UrgentLine("jail: /ws/.env was renamed over \x1b]52;c;x\x07 and more text", 40)
	if !strings.HasPrefix(got, "\a\x1b7") || !strings.HasSuffix(got, "\x1b8") {
		t.Fatalf("not saved and restored: %q", got)
	}
	body := got[strings.Index(got, "\x1b[7m")+len("\x1b[7m") : strings.LastIndex(got, "\x1b[0m")]
	if want := "jail: /ws/.env was renamed over ?]52;c;"; body != want {
		t.Fatalf("body %q, want %q (39 cells, controls as ?)", body, want)
	}
	if n := len([]rune(UrgentLine(strings.Repeat("é", 100), 20))); n > 60 {
		t.Fatalf("wide text not cut: %d runes", n)
	}
}
