//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentConfigFailedRestoreRejudged: the agent takes write away from
// ~/.claude (its user owns it: chmod is allowed), writes a hook into
// settings.json in place (the file itself stays writable), waits for the
// guard's restore to fail (its new file cannot be made in the directory),
// gives write back and exits. The failure is reported while the sandbox
// runs; the end check, with the directory writable again, must still put
// the host's hooks back. Seen failing on the old guard (agentcfg's settle
// accepted what was there after a failed write; every later check, the
// end's too, found no change and the hook stayed on the host). Root's
// supervisor writes whatever the directory's mode, so the attack needs an
// ordinary user's run: the jailtest pass proves it (agentcfg's
// TestGuardFailedWriteRejudgedAtEnd proves the guard's side as root too).
func TestAgentConfigFailedRestoreRejudged(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root's supervisor writes whatever the directory's mode: only a user's run can fail the guard's write")
	}
	e := acfgSetup(t)
	dir := filepath.Join(e.home, ".claude")
	settings := filepath.Join(dir, "settings.json")
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	script := `chmod a-w "$HOME/.claude" && ` +
		`printf '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch /tmp/pwned-failed"}]}]}}' > "$HOME/.claude/settings.json" && ` +
		`sleep 1; chmod u+w "$HOME/.claude"; exit 0`
	r := sh(t, runOpts{dir: e.ws, env: e.env}, script, e.flags()...)
	mustCode(t, r, 0)
	if !strings.Contains(r.stderr, "agent configuration: "+settings) {
		t.Fatalf("control: the guard's restore into the read-only directory did not fail (the test cannot fail):\n%s", r.stderr)
	}
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "pwned-failed") || !strings.Contains(string(b), "notify-send") {
		t.Fatalf("the agent's hook is left on the host after the run (its directory was writable again at the end): %s\n%s", b, r.stderr)
	}
}
