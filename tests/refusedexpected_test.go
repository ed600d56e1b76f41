//go:build linux

package tests

// Claude Code 2.1.332 clones its official plugin marketplace at start
// (github.com over https, then ssh) and asks downloads.claude.ai; refused,
// it goes on. Each run under -P claude ended with "refused github.com:443
// - add --allow-domain github.com" (session 50's trial), advice that
// would open every repository there to the agent. The claude profile's
// [refused] names them: their refusal says what Claude Code does without
// them, and names no flag; other names keep the flag.

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestRefusedExpectedByProfile(t *testing.T) {
	home, ws := workspace(t), workspace(t)
	env := runOpts{dir: ws, env: []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"), "PATH=/usr/bin:/bin"}}
	script := "for h in github.com other.hinted.invalid; do (exec 3<>/dev/tcp/$h/443) 2>/dev/null; done; exit 0"
	r := run(t, env, "-P", "claude", "--", "bash", "-c", script)
	mustCode(t, r, 0)
	if !strings.Contains(r.stderr, "jail: refused github.com:443 (Claude Code cloning its official plugin marketplace: it goes on without it") {
		t.Errorf("the refusal of github.com does not say what Claude Code does without it\nstderr:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "--allow-domain github.com") {
		t.Errorf("the refusal of github.com names the flag that would allow all of it\nstderr:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "refused other.hinted.invalid:443 - add --allow-domain other.hinted.invalid") {
		t.Errorf("another name lost its flag\nstderr:\n%s", r.stderr)
	}
	// Without the profile, github.com is refused as any name.
	r = run(t, env, "--allow-domain", "api.example.com", "--", "bash", "-c", script)
	if !strings.Contains(r.stderr, "refused github.com:443 - add --allow-domain github.com") {
		t.Errorf("without -P claude: want the usual refusal\nstderr:\n%s", r.stderr)
	}
}

// Codex 0.171.0, Gemini CLI 0.61.0 and Qwen Code 0.15.10 are refused at
// start what they go on without (sessions 51 and 56's trials, the purposes
// read from their code): their profiles say so too.
func TestRefusedExpectedByAgentProfiles(t *testing.T) {
	home, ws := workspace(t), workspace(t)
	env := runOpts{dir: ws, env: []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"), "PATH=/usr/bin:/bin"}}
	for _, c := range []struct{ profile, host, why string }{
		{"codex", "ab.chatgpt.com", "Codex's usage metrics"},
		{"codex", "api.github.com", "Codex's check for a newer release"},
		{"gemini", "play.googleapis.com", "Gemini CLI's usage statistics"},
		{"gemini", "registry.npmjs.org", "Gemini CLI's check for a newer version of itself"},
		{"qwen", "gb4w8c3ygj-default-sea.rum.aliyuncs.com", "Qwen Code's usage statistics"},
		{"qwen", "registry.npmjs.org", "Qwen Code's check for a newer version of itself"},
	} {
		r := run(t, env, "-P", c.profile, "--", "bash", "-c", "(exec 3<>/dev/tcp/"+c.host+"/443) 2>/dev/null; exit 0")
		mustCode(t, r, 0)
		if !strings.Contains(r.stderr, "jail: refused "+c.host+":443 ("+c.why) || strings.Contains(r.stderr, "--allow-domain "+c.host) {
			t.Errorf("-P %s: the refusal of %s does not say what the agent does without it\nstderr:\n%s", c.profile, c.host, r.stderr)
		}
	}
}
