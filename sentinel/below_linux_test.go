package sentinel

import (
	"strings"
	"testing"
)

// below and trimDir answer as the concatenations they replace.
func TestBelowIsHasPrefixSlash(t *testing.T) {
	for _, c := range []struct{ p, dir string }{
		{"/ws/a", "/ws"}, {"/ws", "/ws"}, {"/wsx/a", "/ws"}, {"/ws/", "/ws"}, {"/w", "/ws"},
		{"/a", "/"}, {"//a", "/"}, {"/", "/"}, {"", ""}, {"/a", ""}, {"a/b", "a"},
		{"/home/user/.claude/projects/x", "/home/user/.claude"}, {"/home/user/.claude.json", "/home/user/.claude"},
	} {
		if got, want := below(c.p, c.dir), strings.HasPrefix(c.p, c.dir+"/"); got != want {
			t.Errorf("below(%q, %q) = %v, HasPrefix %v", c.p, c.dir, got, want)
		}
		if got, want := trimDir(c.p, c.dir), strings.TrimPrefix(c.p, c.dir+"/"); got != want {
			t.Errorf("trimDir(%q, %q) = %q, TrimPrefix %q", c.p, c.dir, got, want)
		}
	}
}

// FuzzBelow: the same for any pair.
func FuzzBelow(f *testing.F) {
	f.Add("/ws/a", "/ws")
	f.Add("/", "/")
	f.Fuzz(func(t *testing.T, p, dir string) {
		if below(p, dir) != strings.HasPrefix(p, dir+"/") || trimDir(p, dir) != strings.TrimPrefix(p, dir+"/") {
			t.Fatalf("below/trimDir(%q, %q) differ from the concatenation", p, dir)
		}
	})
}
