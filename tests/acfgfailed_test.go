//go:build linux

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentConfigLockedToTheEnd: the agent takes its user's write away
// from ~/.claude (its user owns it: chmod is allowed), writes a hook into
// settings.json in place (the file itself stays writable), and at the end
// makes the file and the directory unreadable too, and exits so. The
// supervisor, that same user, owns both: the guard must get its restore
// through (it gives itself the access for the check, then puts the
// agent's modes back), and the host's hooks must be there after the run.
// Seen failing as jailtest on main's binary (the restore failed with
// "permission denied" while the sandbox ran and at the end; the hook
// stayed on the host). Root's supervisor writes whatever the modes: the
// root pass checks the same end state.
func TestAgentConfigLockedToTheEnd(t *testing.T) {
	e := acfgSetup(t)
	dir := filepath.Join(e.home, ".claude")
	settings := filepath.Join(dir, "settings.json")
	t.Cleanup(func() { os.Chmod(dir, 0o755); os.Chmod(settings, 0o644) })
	script := `chmod a-w "$HOME/.claude" && ` +
		`printf '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch /tmp/pwned-locked"}]}]}}' > "$HOME/.claude/settings.json" && ` +
		`sleep 0.5 && ` +
		`printf '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch /tmp/pwned-locked2"}]}]}}' > "$HOME/.claude/settings.json" && ` +
		`chmod 000 "$HOME/.claude/settings.json" "$HOME/.claude"; exit 0`
	r := sh(t, runOpts{dir: e.ws, env: e.env}, script, e.flags()...)
	mustCode(t, r, 0)
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0 {
		t.Errorf("%s: mode %v after the run, want the agent's 000 back", dir, fi.Mode().Perm())
	}
	if strings.Contains(r.stderr, "agent configuration: "+settings) {
		t.Errorf("the guard reported a failure:\n%s", r.stderr)
	}
	// The file's mode may be the agent's too (its chmod can land on the
	// guard's new file): the user gives access back, as the test does.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(settings, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "pwned-locked") || !strings.Contains(string(b), "notify-send") {
		t.Fatalf("the agent's hook is left on the host after the run (its directory locked to the end): %s\n%s", b, r.stderr)
	}
}

// TestAgentConfigUnsettledKeptForNextStart: the guard's restore fails to
// the end (here ~/.claude is immutable, which only root can make it: the
// stand-in for what an agent can do to a user's run, a disk it filled),
// so the hook stays in settings.json after the run. The run must say so,
// keep its record, and `jail gc` (as the next start) put the host's hooks
// back once it can; while it cannot, gc says so and fails. Seen failing
// on main's binary: the record was removed at the end, gc found nothing,
// the hook stayed.
func TestAgentConfigUnsettledKeptForNextStart(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("only root can make the directory refuse the guard's write to the end (the immutable attribute)")
	}
	e := acfgSetup(t)
	dir := filepath.Join(e.home, ".claude")
	settings := filepath.Join(dir, "settings.json")
	chattr := func(op string) {
		if out, err := exec.Command("chattr", op, dir).CombinedOutput(); err != nil {
			t.Fatalf("chattr %s %s: %v: %s", op, dir, err, out)
		}
	}
	chattr("+i")
	t.Cleanup(func() { exec.Command("chattr", "-i", dir).Run() })
	script := `printf '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch /tmp/pwned-kept"}]}]}}' > "$HOME/.claude/settings.json"; sleep 0.3; exit 0`
	r := sh(t, runOpts{dir: e.ws, env: e.env}, script, e.flags()...)
	mustCode(t, r, 0)
	b, _ := os.ReadFile(settings)
	if !strings.Contains(string(b), "pwned-kept") || !strings.Contains(r.stderr, "agent configuration: "+settings) {
		t.Fatalf("control: the guard's restore did not fail to the end (file %s):\n%s", b, r.stderr)
	}
	if !strings.Contains(r.stderr, "next jail start tries again") {
		t.Errorf("the run's failure does not say what comes next:\n%s", r.stderr)
	}
	g := run(t, runOpts{env: e.env}, "gc")
	if g.code == 0 || !strings.Contains(g.stdout+g.stderr, settings) {
		t.Fatalf("jail gc, still unable to put %s back, did not say so (code %d):\n%s%s", settings, g.code, g.stdout, g.stderr)
	}
	chattr("-i")
	g = run(t, runOpts{env: e.env}, "gc")
	mustCode(t, g, 0)
	b, _ = os.ReadFile(settings)
	if strings.Contains(string(b), "pwned-kept") || !strings.Contains(string(b), "notify-send") {
		t.Fatalf("the agent's hook is left after jail gc: %s\n%s%s", b, g.stdout, g.stderr)
	}
	if !strings.Contains(g.stdout+g.stderr, "left by a jail run that could not put it back") {
		t.Errorf("jail gc does not say whose version it put back:\n%s%s", g.stdout, g.stderr)
	}
	recs, _ := filepath.Glob(filepath.Join(e.state, "jail", "agentcfg", "*.json"))
	if len(recs) != 0 {
		t.Errorf("records left after everything was put back: %v", recs)
	}
}
