package gitguard

import (
	"os"
	"slices"
	"testing"
)

// git reads a path-valued key (core.hooksPath, init.templateDir,
// include.path, includeIf.*.path) through interpolate_path: "~name/..." is
// name's home directory from the password database, not only "~/..."
// ($HOME). A user config that names the user's own workspace as
// ~alice/proj/... (git 2.39 tried by hand: -c include.path=~root/x.cfg
// applies x.cfg's core.hooksPath) was read as a path relative to the
// config's directory (or not at all): the agent's hooks there ran in every
// repository of the host. Seen failing on main (review19a): none of the
// four was read-only.
func TestScanUserConfigTildeUser(t *testing.T) {
	alice := tmp(t)
	ws, home := alice+"/proj", tmp(t)
	os.MkdirAll(ws+"/githooks", 0o755)
	os.MkdirAll(ws+"/tmpl/hooks", 0o755)
	old := lookupHome
	lookupHome = func(name string) string {
		if name == "alice" {
			return alice
		}
		return ""
	}
	t.Cleanup(func() { lookupHome = old })
	for _, c := range []struct {
		name, config string
		env          []string
		ro           string
	}{
		{"hooksPath", "[core]\n\thooksPath = ~alice/proj/githooks\n", nil, "githooks"},
		{"templateDir", "[init]\n\ttemplateDir = ~alice/proj/tmpl\n", nil, "tmpl"},
		{"include", "[include]\n\tpath = ~alice/proj/inc.cfg\n", nil, "inc.cfg"},
		{"includeIf", "[includeIf \"gitdir:~/\"]\n\tpath = ~alice/proj/inc.cfg\n", nil, "inc.cfg"},
		{"env include", "", []string{"GIT_CONFIG_PARAMETERS='include.path'='~alice/proj/inc.cfg'"}, "inc.cfg"},
		{"included hooksPath", "[include]\n\tpath = ~alice/proj/inc.cfg\n", nil, "githooks"},
	} {
		write(t, home+"/.gitconfig", c.config, 0o644)
		write(t, ws+"/inc.cfg", "[core]\n\thooksPath = ~alice/proj/githooks\n", 0o644)
		p := scan(t, ws, func(in *Input) {
			in.UserConfigs = []string{home + "/.gitconfig"}
			in.Home = home
			in.EnvConfig = EnvConfig(c.env)
		})
		if ro := paths(p.ReadOnly, ws); !slices.Contains(ro, c.ro) {
			t.Errorf("%s: %s not read-only: %v", c.name, c.ro, ro)
		}
	}
}

// userPath is interpolate_path: "~", "~/x", "~name", "~name/x", absolute
// paths as they are (never cleaned: a ".." is the kernel's to walk),
// anything else "" (relative: the caller's to place).
func TestUserPath(t *testing.T) {
	s := &scanner{in: Input{Home: "/h"}}
	old := lookupHome
	lookupHome = func(name string) string {
		if name == "bob" {
			return "/home/bob"
		}
		return ""
	}
	t.Cleanup(func() { lookupHome = old })
	for v, want := range map[string]string{
		"~": "/h", "~/x/y": "/h/x/y", "~bob": "/home/bob", "~bob/x": "/home/bob/x",
		"~nobody/x": "", "/a/../b": "/a/../b", "~/l/../x": "/h/l/../x", "rel/x": "", "": "",
	} {
		if got := s.userPath(v); got != want {
			t.Errorf("userPath(%q) = %q, want %q", v, got, want)
		}
	}
	if got := (&scanner{}).userPath("~/x"); got != "" {
		t.Errorf("userPath(~/x) without a home = %q, want \"\"", got)
	}
}

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
