//go:build linux

package tests

import (
	"strings"
	"testing"
)

// init is cloned before the plan (its start overlaps the supervisor's):
// a setup that fails afterwards (here the guard rail refusing the command,
// judged after the plan) still ends the run with its one line and its
// code, and the init that never had its spec is killed without a word (a
// closed socket would make it say "no spec" on the user's terminal).
func TestSetupErrorAfterEarlyInit(t *testing.T) {
	ws := workspace(t)
	for i := 0; i < 5; i++ {
		r := run(t, runOpts{dir: ws}, "--", "mkfs.ext4", "/dev/null")
		mustCode(t, r, 126)
		if strings.Contains(r.stderr, "init") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Fatalf("a setup error after init's clone: want one line, got:\n%s", r.stderr)
		}
		if !strings.Contains(r.stderr, "blocked command") {
			t.Fatalf("the setup's error is not said:\n%s", r.stderr)
		}
	}
}
