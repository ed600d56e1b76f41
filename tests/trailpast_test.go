//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An --audit FILE in a tree another run could write (an earlier or a
// running sandbox's --write path or workspace, as jail's record of such
// trees has them) is that run's agent's to rewrite, now or when it runs
// there again: the chain has no secret, so a whole rewrite passes `jail
// audit --verify`. Refused like a trail in this run's own writable trees,
// in one line naming the tree. Seen failing on main's binary (30093d6), as
// root and as jailtest: run 2 wrote its trail into run 1's --write path
// and workspace and exited 0.
func TestTrailInEarlierWriteTree(t *testing.T) {
	state := workspace(t) // one state directory for every run, this test's own
	env := []string{"XDG_STATE_HOME=" + state}
	data := workspace(t)
	proj1 := workspace(t)
	mustCode(t, sh(t, runOpts{dir: proj1, env: env}, `true`, "--write", data), 0)
	o2 := runOpts{dir: workspace(t), env: env}
	for _, c := range []struct{ name, tree, trail string }{
		{"in an earlier --write path", data, filepath.Join(data, "trail.jsonl")},
		{"in a subdirectory of one", data, filepath.Join(data, "sub", "trail.jsonl")},
		{"in another project's workspace", proj1, filepath.Join(proj1, "trail.jsonl")},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := sh(t, o2, `echo ran`, "--audit", c.trail)
			if _, err := os.Stat(c.trail); err == nil {
				t.Errorf("ATTACK WORKED: the trail was written where another run's agent can rewrite it: %s", c.trail)
			}
			mustCode(t, r, 125)
			if strings.Contains(r.stdout, "ran") {
				t.Errorf("the command ran: %q", r.stdout)
			}
			for _, w := range []string{c.trail, c.tree, "earlier"} {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("refusal lacks %q: %s", w, r.stderr)
				}
			}
			if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("not one line: %q", r.stderr)
			}
		})
	}
	// A place no run could write works as before.
	mine := filepath.Join(workspace(t), "trail.jsonl")
	r := sh(t, o2, `echo ran`, "--audit", mine)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "ran" {
		t.Fatalf("a trail no run could write: %q %s", r.stdout, r.stderr)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Fatalf("no trail: %v", err)
	}
}

// --dry-run says the refusal a real start says for the trail's place
// (trail16): it planned an --audit FILE in this run's workspace, or in a
// tree an earlier run wrote, as if the run would go, and exited 0; the
// start then refused it. Seen failing on main's binary (e4c1d18), as root
// and as jailtest: every --dry-run below exited 0 and printed the plan.
func TestDryRunRefusesTrailPlacement(t *testing.T) {
	state := workspace(t)
	env := []string{"XDG_STATE_HOME=" + state}
	data := workspace(t)
	mustCode(t, sh(t, runOpts{dir: workspace(t), env: env}, `true`, "--write", data), 0)
	ws := workspace(t)
	o := runOpts{dir: ws, env: env}
	for _, c := range []struct{ name, trail string }{
		{"in the workspace", filepath.Join(ws, "trail.jsonl")},
		{"in an earlier run's --write path", filepath.Join(data, "trail.jsonl")},
	} {
		t.Run(c.name, func(t *testing.T) {
			real := sh(t, o, `echo ran`, "--audit", c.trail)
			mustCode(t, real, 125)
			dry := sh(t, o, `echo ran`, "--dry-run", "--audit", c.trail)
			if dry.code != 125 {
				t.Errorf("--dry-run exited %d (printed %d bytes of plan) where the start refuses the trail: %s", dry.code, len(dry.stdout), strings.TrimSpace(real.stderr))
			}
			if dry.stderr != real.stderr {
				t.Errorf("--dry-run's refusal differs from the start's:\n dry-run: %q\n start:   %q", dry.stderr, real.stderr)
			}
			if _, err := os.Stat(c.trail); err == nil {
				t.Errorf("a trail was made at %s", c.trail)
			}
		})
	}
	// A place no run can write is planned, and nothing is made there.
	mine := filepath.Join(workspace(t), "sub", "trail.jsonl")
	r := sh(t, o, `echo ran`, "--dry-run", "--audit", mine)
	mustCode(t, r, 0)
	if _, err := os.Stat(filepath.Dir(mine)); err == nil {
		t.Errorf("--dry-run made the trail's directory %s", filepath.Dir(mine))
	}
}
