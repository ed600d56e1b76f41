package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// linksOn names every symlink the kernel follows on the way to a path, by
// the path it has at that point: a link in a parent, a link to a link,
// a dangling last link; none for a plain path.
func TestLinksOn(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(d, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ln := func(target, p string) {
		if err := os.Symlink(target, filepath.Join(d, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("dot/config/jail")
	mk("home")
	ln(filepath.Join(d, "dot/config"), "home/.config") // a parent
	mk("stow")
	ln(filepath.Join(d, "stow/jail2"), "dot/config/jail-link") // to a link
	ln(filepath.Join(d, "dot/config/jail"), "stow/jail2")
	ln(filepath.Join(d, "nowhere"), "dot/config/dangling")
	for _, c := range []struct {
		path string
		want []string
	}{
		{"dot/config/jail", nil},
		{"home/.config/jail", []string{"home/.config"}},
		{"home/.config/jail-link", []string{"home/.config", "dot/config/jail-link", "stow/jail2"}},
		{"home/.config/dangling/x", []string{"home/.config", "dot/config/dangling"}},
		{"home/absent/jail", nil},
	} {
		var want []string
		for _, w := range c.want {
			want = append(want, filepath.Join(d, w))
		}
		if got := linksOn(filepath.Join(d, c.path)); !slices.Equal(got, want) {
			t.Errorf("linksOn(%s) = %q, want %q", c.path, got, want)
		}
	}
	// A loop ends (as the kernel's ELOOP does).
	ln(filepath.Join(d, "loopb"), "loopa")
	ln(filepath.Join(d, "loopa"), "loopb")
	if got := linksOn(filepath.Join(d, "loopa/x")); len(got) == 0 || len(got) > 41 {
		t.Errorf("loop: %d links", len(got))
	}
}
