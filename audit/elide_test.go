package audit

import (
	"strings"
	"testing"
)

// A start note's long list of names is cut to its first few and a count;
// a short one, and a note of another shape, stay whole.
func TestElideNames(t *testing.T) {
	long := "/w: " + strings.Repeat(".a ", 30) + ".z do not exist, so nothing is masked: if the agent creates one, it is moved"
	for _, c := range []struct{ in, want string }{
		{long, "/w: .a .a .a .a .a .a .a .a and 23 more do not exist, so nothing is masked: if the agent creates one, it is moved"},
		{"/w: .ssh/ .aws/ do not exist, so nothing is masked", "/w: .ssh/ .aws/ do not exist, so nothing is masked"},
		{"pids: RLIMIT_NPROC counts processes", "pids: RLIMIT_NPROC counts processes"},
		{"no colon " + strings.Repeat("x ", 40) + "do not exist", "no colon " + strings.Repeat("x ", 40) + "do not exist"},
	} {
		if got := elideNames(c.in); got != c.want {
			t.Errorf("elideNames(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// A destination refused by name has no address: none is shown, not "()".
func TestNetDest(t *testing.T) {
	for _, c := range []struct {
		e    Net
		want string
	}{
		{Net{Name: "example.com", Port: 80}, "example.com:80"},
		{Net{Name: "example.com", Address: "198.18.0.1", Port: 443}, "example.com:443 (198.18.0.1)"},
		{Net{Address: "::1", Port: 22}, "[::1]:22"},
		{Net{Address: "10.0.0.1", Port: 22}, "10.0.0.1:22"},
	} {
		if got := netDest(c.e); got != c.want {
			t.Errorf("netDest(%+v) = %q, want %q", c.e, got, c.want)
		}
	}
}
