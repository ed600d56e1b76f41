package termsafe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestControl(t *testing.T) {
	for _, tc := range []struct {
		r    rune
		want bool
	}{
		{'a', false}, {' ', false}, {'é', false}, {'\u00a0', false}, {'\u4e2d', false},
		{'\n', true}, {'\t', true}, {0x1b, true}, {0x7f, true}, {0x9b, true}, {0x9f, true},
		{'\u202e', true}, {'\u2066', true}, {'\u200f', true},
	} {
		if got := Control(tc.r); got != tc.want {
			t.Errorf("Control(%U) = %v, want %v", tc.r, got, tc.want)
		}
	}
}

// TestEscape: nothing that acts on a terminal is left, and printable text
// (spaces, UTF-8) stays as it is.
func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"/var/lib/db/my sock é": "/var/lib/db/my sock é",
		"/x/e\x1b]0;PWNED\x07":  `/x/e\x1b]0;PWNED\x07`,
		"/x/a\nb\tc\r":          `/x/a\x0ab\x09c\x0d`,
		"/x/\x9b2J\xff":         `/x/\x9b2J\xff`,
		"/x/\u009b\u202efdp.sh": `/x/\x9b\u202efdp.sh`,
	} {
		got := Escape(in)
		if got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
		if strings.ContainsFunc(got, Control) {
			t.Errorf("Escape(%q) = %q keeps a control character", in, got)
		}
	}
}

// FuzzEscape: no output keeps a control character or a byte that is not
// UTF-8.
func FuzzEscape(f *testing.F) {
	f.Add("/x/e\x1b]0;T\x07\n\x9b\u202e")
	f.Fuzz(func(t *testing.T, s string) {
		got := Escape(s)
		if strings.ContainsFunc(got, Control) || !utf8.ValidString(got) {
			t.Fatalf("Escape(%q) = %q", s, got)
		}
	})
}
