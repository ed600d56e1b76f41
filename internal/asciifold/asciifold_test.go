package asciifold

import "testing"

func TestLower(t *testing.T) {
	for in, want := range map[string]string{
		"": "", ".env": ".env", "SERVER.PEM": "server.pem", ".BashRC": ".bashrc",
		"Ä.ENV": "Ä.env", "\u212a.KEY": "\u212a.key", // non-ASCII kept as written
	} {
		if got := Lower(in); got != want {
			t.Errorf("Lower(%q) = %q, want %q", in, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = Lower(".tool-versions") }); n != 0 {
		t.Errorf("a lower-case name allocated %v times", n)
	}
}
