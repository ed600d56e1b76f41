package fsrules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeepListingThroughSymlinks: the listings that answer "surely
// missing" for names below a home's directories (~/.local/share/...)
// never list through a symlink. ~/.local is a directory of its own with
// another entry; ~/.local/share is a symlink to a directory of the
// workspace without bash-completion/ or fish/, ~/.config/git one to a
// directory with a config. The home is writable:
// ~/.local/share/bash-completion/ is absent where the agent would create
// it, in the workspace (via the symlink), and gitcfg/ is read-only. A
// listing of share/ through the symlink would find no bash-completion and
// call the home's own path missing: the path watched would not be the
// one the agent creates.
func TestDeepListingThroughSymlinks(t *testing.T) {
	base := tmp(t)
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	mk(t, ws, "share/", "gitcfg/config", "plain")
	mk(t, home, ".local/other/x", ".config/other/x", ".config/fish/config.fish")
	must(t, os.Symlink(filepath.Join(ws, "share"), filepath.Join(home, ".local/share")))
	must(t, os.Symlink(filepath.Join(ws, "gitcfg"), filepath.Join(home, ".config/git")))
	plan, err := Expand(Input{Workspace: ws, Home: home, Writable: []string{ws, home}})
	if err != nil {
		t.Fatal(err)
	}
	var absent []string
	for _, a := range plan.Absent {
		absent = append(absent, a.Path+" "+a.Rule)
	}
	for _, n := range []string{"bash-completion", "fish"} {
		want := filepath.Join(ws, "share", n) + " default: ~/.local/share/" + n + "/ (via symlink " + filepath.Join(home, ".local/share", n) + ")"
		if !contains(absent, want) {
			t.Errorf("absent lacks %q:\n%s", want, strings.Join(absent, "\n"))
		}
	}
	for _, a := range absent {
		if strings.HasPrefix(a, filepath.Join(home, ".local/share")+"/") {
			t.Errorf("absent names the symlink's path itself: %s", a)
		}
	}
	ms := summary(ws, plan.Masks)
	if !contains(ms, "read-only gitcfg/") {
		t.Errorf("masks lack read-only gitcfg/: %q", ms)
	}
}

// TestDeepListingAbsentNames: a home's names missing below a directory
// listed for them are listed as absent exactly as lstat found them: the
// same Absent with and without the listings (statCache off: every name
// lstat'ed).
func TestDeepListingAbsentNames(t *testing.T) {
	base := tmp(t)
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	mk(t, ws, "plain")
	mk(t, home, ".config/other/x", ".config/fish/config.fish", ".config/gh/", ".local/share/x")
	in := Input{Workspace: ws, Home: home, Writable: []string{ws, home}}
	plan, err := Expand(in)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range plan.Absent {
		got = append(got, a.Path+" "+a.Rule)
	}
	noShortcut = true
	defer func() { noShortcut = false }()
	plan2, err := Expand(in)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, a := range plan2.Absent {
		want = append(want, a.Path+" "+a.Rule)
	}
	eq(t, "absent", got, want)
	if !contains(got, filepath.Join(home, ".config/gh/hosts.yml")+" default: .config/gh/hosts.yml") {
		t.Errorf("absent lacks ~/.config/gh/hosts.yml:\n%s", strings.Join(got, "\n"))
	}
	eq(t, "masks", summary(home, plan.Masks), summary(home, plan2.Masks))
}
