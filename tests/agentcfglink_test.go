//go:build linux

package tests

// An agent's settings directory that is a symlink on the host (dotfiles:
// ~/.claude -> dotfiles/claude) made writable by its name (-w ~/.claude, as
// the agent profiles do) was not guarded at all: the writable root is the
// resolved directory, which holds no path spelled ~/.claude/..., so the
// agent's hooks written to ~/.claude/settings.json stayed after the run and
// the host's next claude, reading through the symlink, ran them (review17d,
// seen on main e413f85..9f4d378: the hooks file was on the host after the
// run, nothing said).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAgentConfigThroughHomeSymlink(t *testing.T) {
	home, state, ws := workspace(t), workspace(t), workspace(t)
	real := filepath.Join(home, "dotfiles", "claude")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("dotfiles/claude", filepath.Join(home, ".claude")); err != nil {
		t.Fatal(err)
	}
	host := `{"model":"x","hooks":{"Stop":[{"hooks":[{"type":"command","command":"true"}]}]}}`
	p := filepath.Join(real, "settings.json")
	if err := os.WriteFile(p, []byte(host), 0o644); err != nil {
		t.Fatal(err)
	}
	agent := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"touch /tmp/pwned-jail-review17d"}]}]}}`
	env := []string{"HOME=" + home, "XDG_STATE_HOME=" + state}
	r := sh(t, runOpts{dir: ws, env: env}, "printf '%s' '"+agent+"' > \"$HOME/.claude/settings.json\"", "-w", filepath.Join(home, ".claude"))
	mustCode(t, r, 0)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "pwned") {
		t.Fatalf("the agent's hook stayed in %s (reached as ~/.claude/settings.json through the host's symlink): %s\nstderr:\n%s", p, b, r.stderr)
	}
	if !strings.Contains(string(b), `"command":"true"`) {
		t.Errorf("the host's hook is not back in %s: %s", p, b)
	}
}
