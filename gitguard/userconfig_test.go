package gitguard

import (
	"os"
	"slices"
	"testing"
)

// The user's own git config names directories and programs by absolute
// path: inside a writable tree they are protected even when no repository
// is there (a global core.hooksPath runs in every repository of the host;
// init.templateDir's hooks are copied into every new one).
func TestScanUserConfigPathsNoRepo(t *testing.T) {
	ws, home := tmp(t), tmp(t)
	os.MkdirAll(ws+"/githooks", 0o755)
	os.MkdirAll(ws+"/tmpl/hooks", 0o755)
	write(t, ws+"/bin/key.sh", "#!/bin/sh\n", 0o755)
	write(t, home+"/.gitconfig", "[core]\n\thooksPath = "+ws+"/githooks\n[init]\n\ttemplateDir = "+ws+"/tmpl\n"+
		"[gpg \"ssh\"]\n\tdefaultKeyCommand = "+ws+"/bin/key.sh\n[credential]\n\thelper = "+ws+"/bin/absent-helper\n", 0o644)
	p := scan(t, ws, func(in *Input) { in.UserConfigs = []string{home + "/.gitconfig"}; in.Home = home })
	ro := paths(p.ReadOnly, ws)
	for _, want := range []string{"githooks", "tmpl", "bin/key.sh"} {
		if !slices.Contains(ro, want) {
			t.Errorf("%s not read-only: %v", want, ro)
		}
	}
	if ab := paths(p.Absent, ws); !slices.Contains(ab, "bin/absent-helper") {
		t.Errorf("credential.helper's absent program not watched: %v", ab)
	}
}

// Every symlink on the way to a path the user's git config names is kept
// (Plan.Links), not only the first one met or the path itself: with
// core.hooksPath = ws/a/c/hooks, a -> b and b/c -> ../d, the agent that
// repoints b/c at a directory of its own gets its hooks run in every
// repository of the host, though d/hooks stays read-only; likewise the
// link e on the way from hl -> e/hooks. Seen failing on main (review13e):
// Links had a and hl only.
func TestScanUserConfigEveryLinkOnTheWay(t *testing.T) {
	ws, home := tmp(t), tmp(t)
	for _, d := range []string{"b", "d/hooks", "f/hooks"} {
		os.MkdirAll(ws+"/"+d, 0o755)
	}
	for l, to := range map[string]string{"a": "b", "b/c": "../d", "hl": "e/hooks", "e": "f"} {
		if err := os.Symlink(to, ws+"/"+l); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ hooks, ro string }{{ws + "/a/c/hooks", "d/hooks"}, {ws + "/hl", "f/hooks"}} {
		write(t, home+"/.gitconfig", "[core]\n\thooksPath = "+c.hooks+"\n", 0o644)
		p := scan(t, ws, func(in *Input) { in.UserConfigs = []string{home + "/.gitconfig"}; in.Home = home })
		if ro := paths(p.ReadOnly, ws); !slices.Contains(ro, c.ro) {
			t.Errorf("hooksPath %s: %s not read-only: %v", c.hooks, c.ro, ro)
		}
		want := []string{"a", "b/c"}
		if c.ro == "f/hooks" {
			want = []string{"e", "hl"}
		}
		if got := paths(p.Links, ws); !slices.Equal(got, want) {
			t.Errorf("hooksPath %s: links %v, want %v", c.hooks, got, want)
		}
	}
	// A loop ends (the kernel's 40 links), with the link kept.
	os.Symlink("loop/x", ws+"/loop")
	write(t, home+"/.gitconfig", "[core]\n\thooksPath = "+ws+"/loop/hooks\n", 0o644)
	p := scan(t, ws, func(in *Input) { in.UserConfigs = []string{home + "/.gitconfig"}; in.Home = home })
	if got := paths(p.Links, ws); !slices.Equal(got, []string{"loop"}) {
		t.Errorf("a link loop: links %v", got)
	}
}
