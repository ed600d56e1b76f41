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
