package gitguard

import (
	"os"
	"slices"
	"testing"
)

// git reads a path-valued key as written (interpolate_path expands "~"
// only), and the kernel walks its ".." from where a symlink before it
// led: core.hooksPath = WS/l/../githooks with WS/l -> sub/dir is
// WS/sub/githooks. userPath cleaned the text first (WS/githooks), so the
// directory git runs hooks from stayed writable and the link on the way
// unguarded, and an include.path so written had the wrong file read
// (review20a).
func TestScanUserConfigDotDotAfterLink(t *testing.T) {
	ws, home := tmp(t), tmp(t)
	os.MkdirAll(ws+"/sub/dir", 0o755)
	os.MkdirAll(ws+"/sub/githooks", 0o755)
	os.MkdirAll(ws+"/githooks", 0o755)
	if err := os.Symlink("sub/dir", ws+"/l"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, config string }{
		{"absolute", "[core]\n\thooksPath = " + ws + "/l/../githooks\n"},
		{"home", "[core]\n\thooksPath = ~/l/../githooks\n"},
		// git reads WS/sub/inc.cfg (its hooks path), not WS/inc.cfg.
		{"include", "[include]\n\tpath = " + ws + "/l/../inc.cfg\n"},
	} {
		write(t, ws+"/sub/inc.cfg", "[core]\n\thooksPath = "+ws+"/sub/githooks\n", 0o644)
		write(t, ws+"/inc.cfg", "[core]\n\thooksPath = "+ws+"/githooks\n", 0o644)
		write(t, home+"/.gitconfig", c.config, 0o644)
		h := home
		if c.name == "home" {
			h = ws
		}
		p := scan(t, ws, func(in *Input) {
			in.UserConfigs = []string{home + "/.gitconfig"}
			in.Home = h
		})
		if ro := paths(p.ReadOnly, ws); !slices.Contains(ro, "sub/githooks") {
			t.Errorf("%s: sub/githooks (where git runs hooks from) not read-only: %v", c.name, ro)
		}
	}
}
