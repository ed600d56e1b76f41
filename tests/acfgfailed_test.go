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
// agent's modes back but the owner's read and search), and the host's
// hooks must be there after the run.
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
	// The agent's 000 back, but for the owner's read and search: an
	// unreadable settings file is read as none by its loader, the user's
	// restrictions in it gone outside jail (TestAgentConfigLeftUnreadable).
	// Or its 555 before: the guard's live restore of the second write
	// gives the directory 755 and then puts back the 555 it saw, each a
	// stat then a chmod (a mode has no compare-and-swap), and an agent's
	// chmod 000 landing between the two is overwritten with the agent's
	// own earlier mode: its owner's read and search with it either way
	// (seen once in CI as jailtest, session 29).
	if m := fi.Mode().Perm(); m != 0o500 && m != 0o555 {
		t.Errorf("%s: mode %v after the run, want the agent's 000 back with u+rx (or its 555 before, the restore having raced its chmod)", dir, m)
	}
	if strings.Contains(r.stderr, "agent configuration: "+settings) {
		t.Errorf("the guard reported a failure:\n%s", r.stderr)
	}
	if fi, err := os.Stat(settings); err != nil || fi.Mode().Perm()&0o400 == 0 {
		t.Errorf("%s: not readable by its owner after the run: %v %v", settings, fi.Mode(), err)
	}
	// The agent's write bits stay: the user gives them back, as the test does.
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

// TestAgentConfigLeftUnreadable: the agent leaves ~/.claude/settings.json,
// whose content is the host's, unreadable (chmod 000 on the file, chmod
// 100 on ~/.claude) and exits. Claude Code reads an unreadable settings
// file as none: the user's own restrictions in it (a permissions.deny
// rule here) would be gone from their next run of the agent outside jail,
// as if the agent had deleted the file, which the guard puts back. Seen
// failing with main's binary as jailtest: the file stayed mode 0000 and
// ~/.claude 0100, with no word. The owner's read comes back, and is said.
func TestAgentConfigLeftUnreadable(t *testing.T) {
	e := acfgSetup(t)
	dir := filepath.Join(e.home, ".claude")
	settings := filepath.Join(dir, "settings.json")
	t.Cleanup(func() { os.Chmod(dir, 0o755); os.Chmod(settings, 0o644) })
	before, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	r := sh(t, runOpts{dir: e.ws, env: e.env}, `chmod 000 "$HOME/.claude/settings.json" && chmod 100 "$HOME/.claude"`, e.flags()...)
	mustCode(t, r, 0)
	for p, want := range map[string]os.FileMode{dir: 0o500, settings: 0o400} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&want != want {
			t.Errorf("ATTACK WORKED: %s: mode %v after the run: its owner cannot read it (want %v at least)", p, fi.Mode().Perm(), want)
		}
	}
	if !strings.Contains(r.stderr, "read access given back") {
		t.Errorf("no notice that the agent had made it unreadable:\n%s", r.stderr)
	}
	os.Chmod(dir, 0o755)
	if after, err := os.ReadFile(settings); err != nil || string(after) != string(before) {
		t.Errorf("content changed: %q, %v", after, err)
	}
}
