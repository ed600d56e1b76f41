package gitguard

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The exit sweep's names (Guard.Names): a file of one of them made during
// the run at any depth is found; one there at start (Kept, or untouched
// since Since), one in a lifted tree, and other names are not. The names
// match in any ASCII case. With NoGit a new .git is not judged.
func TestSweepNames(t *testing.T) {
	ws := tmp(t)
	for _, d := range []string{"a/b", "a/kept", "lifted/x", "old", "hidden"} {
		os.MkdirAll(filepath.Join(ws, d), 0o755)
	}
	write := func(rel string) {
		if err := os.WriteFile(filepath.Join(ws, rel), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("old/.tool-versions")    // there before the start, untouched
	write("hidden/.irbrc")         // there before, never seen by the sandbox
	write("a/kept/rust-toolchain") // there before, kept read-only (Kept)
	time.Sleep(60 * time.Millisecond)
	since := time.Now().UnixNano()
	time.Sleep(60 * time.Millisecond)
	write("a/b/rust-toolchain.toml")
	write("a/.MCP.json")
	write("lifted/x/.tool-versions")
	write("a/b/notes.txt")
	os.MkdirAll(filepath.Join(ws, "a/plugins/p"), 0o755)
	write("a/plugins/p/.mcp.json") // in a directory read-only whole (Covered)
	write("a/kept/rust-toolchain")
	os.MkdirAll(filepath.Join(ws, "a/b/.tool-versions.d"), 0o755) // a directory of another name
	os.MkdirAll(filepath.Join(ws, "new"), 0o755)
	if err := os.Symlink("/elsewhere", filepath.Join(ws, "new/.git")); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"rust-toolchain.toml": "default: rust-toolchain.toml", "rust-toolchain": "default: rust-toolchain",
		".tool-versions": "default: .tool-versions", ".mcp.json": "default: .mcp.json", ".irbrc": "default: .irbrc"}
	for _, noGit := range []bool{true, false} {
		g := &Guard{Roots: []string{ws}, Names: names, Kept: map[string]bool{filepath.Join(ws, "a/kept/rust-toolchain"): true},
			Lifted: []string{filepath.Join(ws, "lifted")}, Covered: []string{filepath.Join(ws, "a/plugins")}, Since: since, NoGit: noGit, Known: map[string]Ident{}, Dirs: map[string]Role{}}
		found, _ := g.Sweep(0)
		var got []string
		for _, f := range found {
			got = append(got, f.Path[len(ws)+1:]+" "+f.Rule)
		}
		want := []string{"a/.MCP.json default: .mcp.json", "a/b/rust-toolchain.toml default: rust-toolchain.toml"}
		if !noGit {
			want = append(want, "new/.git")
			if !slices.ContainsFunc(got, func(s string) bool { return len(s) > 8 && s[:8] == "new/.git" }) {
				t.Errorf("with git judged, the new .git is not found: %q", got)
			}
			got = slices.DeleteFunc(got, func(s string) bool { return len(s) > 8 && s[:8] == "new/.git" })
			want = want[:2]
		}
		if !slices.Equal(got, want) {
			t.Errorf("NoGit %v: found %q, want %q", noGit, got, want)
		}
	}
}

// The names are part of the sweep's view: a listing kept for a sweep of
// other names is not this one's.
func TestSweepViewNames(t *testing.T) {
	a := (&Guard{}).viewOf("/ws")
	b := (&Guard{Names: map[string]string{".irbrc": "x"}}).viewOf("/ws")
	c := (&Guard{Names: map[string]string{".irbrc": "x", ".pryrc": "y"}}).viewOf("/ws")
	if a == b || b == c || a == c {
		t.Errorf("views %q %q %q: not distinct", a, b, c)
	}
}
