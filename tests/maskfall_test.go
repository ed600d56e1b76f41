//go:build linux

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// When the host renames a new file over a masked one while a sandbox runs
// (an editor's atomic save of the workspace's .env), the kernel takes the
// mask away in every namespace and the sandbox reads the new file. Nothing
// can mount it again (init has no capability left): jail says so at once,
// on stderr and in the trail, naming the path. A file the host writes in
// place (the same dentry: the mask stays) is not reported. On main's
// binary the agent read SECRET=NEW and nothing was said (no "unmasked"
// event, no line naming .env).
func TestHostReplacesMaskedFile(t *testing.T) {
	ws := workspace(t)
	env := fsWrite(t, ws, ".env", "SECRET=old\n", 0o644)
	local := fsWrite(t, ws, ".env.local", "LOCAL=old\n", 0o644)
	trail := filepath.Join(t.TempDir(), "trail.jsonl")
	// The agent reads .env (masked), says it is ready, waits for the
	// host's go, and reads both files again.
	// A mask is an empty mode-0 file: unreadable, or empty for a root
	// that may read it; either way "maskedN".
	script := `show() { c=$(cat "$1" 2>/dev/null); if [ -n "$c" ]; then echo "$c"; else echo "$2"; fi; }
show .env masked1; echo > ready
i=0; while [ ! -e go ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
show .env masked2; show .env.local masked3`
	done := startUntilReady(t, ws, script, "--audit", trail)
	// An editor's atomic save of .env, and a write in place of .env.local.
	fsWrite(t, ws, ".env.tmp", "SECRET=NEW\n", 0o644)
	if err := os.Rename(filepath.Join(ws, ".env.tmp"), env); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(local, []byte("LOCAL=NEW\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := sayGo(t, ws, done)
	mustCode(t, r, 0)
	if !strings.HasPrefix(r.stdout, "masked1\n") || strings.Contains(r.stdout, "old") || !strings.Contains(r.stdout, "masked3") {
		t.Fatalf("the masks did not hold before the replacement (or over the file written in place):\n%s", r.stdout)
	}
	// What the kernel does: the new file is readable inside. If a later
	// kernel or jail keeps the mask, the test says so (update README).
	if !strings.Contains(r.stdout, "SECRET=NEW") {
		t.Logf("the mask held over the replaced file (stdout %q): README's threat model says it falls", r.stdout)
	}
	said := false
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.Contains(l, env) && strings.Contains(l, "renamed over on the host") {
			said = true
		}
		if strings.Contains(l, local) {
			t.Errorf("a file written in place (its mask stays) was reported: %s", l)
		}
	}
	if !said {
		t.Errorf("jail did not say that the host replaced %s (its mask is gone); stderr:\n%s", env, r.stderr)
	}
	evs := eventsOf(trailEvents(t, trail), "unmasked")
	if len(evs) != 1 || evs[0]["path"] != env || evs[0]["how"] != "renamed over" || evs[0]["kind"] != "mask" || evs[0]["action"] != "reported" {
		t.Errorf("want one unmasked event for %s (renamed over, mask, reported), got %v", env, evs)
	}
}

// The host's `git config` rewrites .git/config by renaming a new file over
// it: the sandbox's read-only bind falls, and the agent can write the new
// file (the exit check puts back what it wrote). Said at once, as for a
// mask. On main's binary nothing was said.
func TestHostRewritesReadOnlyGitConfig(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if inCI() {
			t.Fatal("git not on PATH")
		}
		t.Skip("git not on PATH")
	}
	ws := workspace(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", ws}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", ".")
	cfg := filepath.Join(ws, ".git", "config")
	trail := filepath.Join(t.TempDir(), "trail.jsonl")
	done := startUntilReady(t, ws, waitForGo+"; exit 0", "--audit", trail)
	git("config", "user.name", "host-user")
	r := sayGo(t, ws, done)
	mustCode(t, r, 0)
	if !strings.Contains(r.stderr, cfg+" was renamed over on the host") || !strings.Contains(r.stderr, "read-only bind") {
		t.Errorf("jail did not say that the host replaced %s (its read-only bind is gone); stderr:\n%s", cfg, r.stderr)
	}
	evs := eventsOf(trailEvents(t, trail), "unmasked")
	if len(evs) != 1 || evs[0]["path"] != cfg || evs[0]["kind"] != "read-only" {
		t.Errorf("want one unmasked event for %s (read-only), got %v", cfg, evs)
	}
}

// With --end-if-unmasked the run ends when the host replaces a masked
// file: the agent, waiting for the host's go, never reads the new file.
// On main's binary the flag did not exist (exit 125: unknown flag).
func TestEndIfUnmasked(t *testing.T) {
	ws := workspace(t)
	env := fsWrite(t, ws, ".env", "SECRET=old\n", 0o644)
	trail := filepath.Join(t.TempDir(), "trail.jsonl")
	done := startUntilReady(t, ws, waitForGo+"\ncat .env; echo agent-went-on", "--audit", trail, "--end-if-unmasked")
	hostSaves(t, ws)
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		fsWrite(t, ws, "go", "", 0o644)
		r = <-done
		t.Fatalf("the run did not end when the host replaced the masked .env: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r.code != 137 || strings.Contains(r.stdout, "agent-went-on") || strings.Contains(r.stdout, "SECRET=NEW") {
		t.Fatalf("exit %d, want 137 (killed) before the agent went on; stdout %q stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, env+" was renamed over on the host") || !strings.Contains(r.stderr, "ending the run (--end-if-unmasked)") {
		t.Errorf("jail did not say why it ended the run; stderr:\n%s", r.stderr)
	}
	evs := trailEvents(t, trail)
	um, kills := eventsOf(evs, "unmasked"), eventsOf(evs, "kill")
	if len(um) != 1 || um[0]["path"] != env || um[0]["action"] != "ended" {
		t.Errorf("want one unmasked event for %s with action ended, got %v", env, um)
	}
	if len(kills) != 1 || kills[0]["by"] != "unmasked" {
		t.Errorf("want one kill event by unmasked, got %v", kills)
	}
}

// waitForGo is the agent's part of a start-until-ready test: it says it
// is ready and waits (up to 20 s) for the host's go.
const waitForGo = `echo > ready
i=0; while [ ! -e go ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done`

// sayGo gives the agent the host's go once a notice said at once has had
// time to be (well before the run's end), and returns the run's result.
func sayGo(t *testing.T, ws string, done <-chan result) result {
	t.Helper()
	time.Sleep(200 * time.Millisecond)
	fsWrite(t, ws, "go", "", 0o644)
	select {
	case r := <-done:
		return r
	case <-time.After(60 * time.Second):
		t.Fatal("jail did not end")
	}
	return result{}
}

// startUntilReady runs script as the agent under jail (args its flags) in
// ws and returns once it has written "ready", with the channel its result
// comes on: the host acts on the running sandbox from there.
func startUntilReady(t *testing.T, ws, script string, args ...string) <-chan result {
	t.Helper()
	done := make(chan result, 1)
	go func() { done <- sh(t, runOpts{dir: ws}, script, args...) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(ws, "ready")); err == nil {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("jail ended before the agent was ready: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent never said ready")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return done
}
