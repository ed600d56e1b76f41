package fsrules

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAbsentThroughLinkedHomeDir: ~/.claude a symlink to dots/claude (a
// dotfiles repository, the workspace), the home itself not writable. The
// protected names missing under it (.claude/commands/, .claude/agents/: the
// host's claude loads what appears there) must be watched where the link
// leads, dots/claude/commands: the name there has no .claude in it, so only
// the home-anchored view finds it. Seen failing on main (e12b02b): not
// listed, and the agent's commands/ and agents/ stayed on the host.
func TestAbsentThroughLinkedHomeDir(t *testing.T) {
	base := tmp(t)
	home, dots := filepath.Join(base, "home"), filepath.Join(base, "dots")
	mk(t, dots, "claude/settings.json", "x.go")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dots, "claude"), filepath.Join(home, ".claude")); err != nil {
		t.Fatal(err)
	}
	plan, err := Expand(Input{Workspace: dots, Home: home, Writable: []string{dots, filepath.Join(dots, "claude")}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, a := range plan.Absent {
		got[a.Path] = true
	}
	for _, n := range []string{"commands", "agents", "skills", "plugins"} {
		if p := filepath.Join(dots, "claude", n); !got[p] {
			t.Errorf("%s (~/.claude/%s/ through the link) is not watched: %v", p, n, plan.Absent)
		}
	}
}
