package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAgentNamedBesideLink: a hook script reached through a symlink in an
// agent's directory (~/.claude/hooks/h.sh -> ~/dotfiles/h.sh) has two
// "besides": its target's directory (python, node and ruby resolve the
// script's path) and the link's (a shell's `. "$(dirname "$0")/lib.sh"`,
// perl's $FindBin::Bin take $0 as given). The link's directory, under the
// agent's directory, must be read-only too, or the agent plants lib.sh
// there and the host runs it. Seen failing on main (30093d6): no mask on
// ~/.claude/hooks.
func TestAgentNamedBesideLink(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	home, _ = filepath.EvalSymlinks(home)
	ws, _ = filepath.EvalSymlinks(ws)
	c := filepath.Join(home, ".claude")
	for _, d := range []string{filepath.Join(c, "hooks"), filepath.Join(home, "dotfiles")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(c, "settings.json"), []byte(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "bash ~/.claude/hooks/h.sh"}]}]}}`), 0o644)
	os.WriteFile(filepath.Join(home, "dotfiles", "h.sh"), []byte(". \"$(dirname \"$0\")/lib.sh\"\n"), 0o644)
	if err := os.Symlink(filepath.Join(home, "dotfiles", "h.sh"), filepath.Join(c, "hooks", "h.sh")); err != nil {
		t.Fatal(err)
	}
	masks, _, links, _ := namedBeside(home, ws, c)
	ro := false
	for _, m := range masks {
		ro = ro || (m.Path == filepath.Join(c, "hooks") && m.Dir)
	}
	if !ro {
		t.Errorf("the link's directory %s is not read-only: masks %+v", filepath.Join(c, "hooks"), masks)
	}
	linked := false
	for _, l := range links {
		linked = linked || l.Path == filepath.Join(c, "hooks", "h.sh")
	}
	if !linked {
		t.Errorf("the link itself is not guarded: %+v", links)
	}
}
