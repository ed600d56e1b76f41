//go:build linux

package tests

// Claude Code (2.1.197) reads remoteControlAtStartup and autoUploadSessions
// from its settings, else from ~/.claude.json: the first registers every
// host session for Remote Control at start (prompts sent to it through the
// signed-in account's API run in the host session as the user's own), the
// second uploads each session's transcript to the account. The agent reads
// the account's token in ~/.claude and reaches the API: set by it, the
// host's next session would take its prompts (session 18, lane C; not
// driven end to end: no network here). Both keys are kept as on the host.

import (
	"os"
	"path/filepath"
	"testing"
)

func TestClaudeRemoteControlKeysGuarded(t *testing.T) {
	const plant = `
printf '{"numStartups": 2, "remoteControlAtStartup": true, "autoUploadSessions": true}' > ~/.claude.json
printf '{"remoteControlAtStartup": true, "autoUploadSessions": true}' > ~/.claude/settings.json
sleep 0.3
exit 0
`
	home, state, ws := workspace(t), workspace(t), workspace(t)
	cj := filepath.Join(home, ".claude.json")
	st := filepath.Join(home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(st), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cj, []byte(`{"numStartups": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	o := runOpts{dir: ws, env: []string{"HOME=" + home, "XDG_STATE_HOME=" + state}}
	r := sh(t, o, "HOME="+home+"\n"+plant, "-w", filepath.Join(home, ".claude"), "-w", cj)
	mustCode(t, r, 0)
	for _, p := range []string{cj, st} {
		m, b := readJSONFile(t, p)
		for _, k := range []string{"remoteControlAtStartup", "autoUploadSessions"} {
			if m[k] != nil {
				t.Errorf("%s stays in %s after the run: %s\nstderr:\n%s", k, p, b, r.stderr)
			}
		}
	}
}
