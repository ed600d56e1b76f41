package fsrules

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestGlobsPlanned: the home-anchored read-only pattern ~/.codex/*.sqlite*
// gets its directory watched where that directory lies in a writable root
// (the root itself, inside it, missing from it, through a symlink into
// it), and not where nothing can be written, in jail's own root, or under
// --no-default-deny. So does ~/.codex/*.config.toml (Codex's profile
// settings), beside it; no other built-in pattern does.
func TestGlobsPlanned(t *testing.T) {
	base := tmp(t)
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	codex := filepath.Join(home, ".codex")
	mk(t, ws, "x.go")
	mk(t, home, ".codex/state_5.sqlite")
	dots := filepath.Join(base, "dots")
	mk(t, dots, "codex/config.toml")
	lhome := filepath.Join(base, "lhome")
	if err := os.MkdirAll(lhome, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dots, "codex"), filepath.Join(lhome, ".codex")); err != nil {
		t.Fatal(err)
	}
	want := func(dir string) []Glob {
		return []Glob{{Dir: dir, Pattern: "*.sqlite*", Rule: "default: ~/.codex/*.sqlite*"}, {Dir: dir, Pattern: "*.config.toml", Rule: "default: ~/.codex/*.config.toml"}}
	}
	for _, tc := range []struct {
		name string
		in   Input
		want []Glob
	}{
		{"root", Input{Workspace: ws, Home: home, Writable: []string{codex}}, want(codex)},
		{"home-writable", Input{Workspace: ws, Home: home, Writable: []string{home}}, want(codex)},
		{"missing", Input{Workspace: ws, Home: filepath.Join(base, "empty"), Writable: []string{filepath.Join(base, "empty")}}, want(filepath.Join(base, "empty", ".codex"))},
		{"via-symlink", Input{Workspace: ws, Home: lhome, Writable: []string{dots}}, want(filepath.Join(dots, "codex"))},
		{"read-only", Input{Workspace: ws, Home: home, Readable: []string{codex}}, nil},
		{"own", Input{Workspace: ws, Home: home, Writable: []string{codex}, Own: []string{codex}}, nil},
		{"no-default-deny", Input{Workspace: ws, Home: home, Writable: []string{codex}, NoDefaultDeny: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "missing" {
				if err := os.MkdirAll(tc.in.Home, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			plan, err := Expand(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(plan.Globs, tc.want) {
				t.Errorf("Globs %+v, want %+v", plan.Globs, tc.want)
			}
		})
	}
}
