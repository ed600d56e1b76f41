//go:build linux

package tests

// The git protection in degraded mode (--degraded, forced here with
// --x-degraded): no mount can make .git/hooks/ or a hooksPath directory
// read-only, so the supervisor watches them instead. Same host-side check as
// git_test.go: the user's own git must not run the agent's payload.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGitDegradedHooks: without namespaces the agent can write into the
// existing .git/hooks/ and into husky's hooksPath directory (.husky/_): a new
// hook, and a payload appended to the user's own hook. Each must leave the
// tree; the user's git runs none of them. The other attacks of class 1 go
// through the same watch as in a normal run (commondir, a .git file): one of
// them is checked here too.
func TestGitDegradedHooks(t *testing.T) {
	attack := func(t *testing.T, h *gitHost, flags ...string) (string, result) {
		ws := workspace(t)
		h.repo(t, ws)
		// The user's own hooks: husky's layout, and a harmless post-checkout.
		os.MkdirAll(filepath.Join(ws, ".husky/_"), 0o755)
		os.WriteFile(filepath.Join(ws, ".husky/_/pre-commit"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
		os.WriteFile(filepath.Join(ws, ".git/hooks/post-checkout"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
		h.mustGit(t, ws, "config", "core.hooksPath", ".husky/_")
		// Each step on its own: what the watch moves out as it appears
		// makes the next one (chmod) fail, which is no failure of the attack.
		r := h.run(t, ws, `payload > .husky/_/post-commit; chmod +x .husky/_/post-commit
payload >> .husky/_/pre-commit
payload > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
payload >> .git/hooks/post-checkout
mkcommon .cache/c; echo ../.cache/c > .git/commondir
echo planted; true`, append([]string{"--x-degraded"}, flags...))
		mustCode(t, r, 0)
		if !strings.Contains(r.stdout, "planted") {
			t.Fatalf("the agent could not plant the attack:\n%s%s", r.stdout, r.stderr)
		}
		hostLog := h.use(ws)
		// And with the repository's own hooks dir (no hooksPath).
		h.mustGit(t, ws, "config", "--unset", "core.hooksPath")
		return hostLog + h.use(ws), r
	}
	h := newGitHost(t)
	hostLog, r := attack(t, h)
	ws := gitLastWorkspace(t, hostLog)
	h.expectSafe(t, r, hostLog,
		ws+"/.husky/_/post-commit", ws+"/.husky/_/pre-commit",
		ws+"/.git/hooks/pre-commit", ws+"/.git/hooks/post-checkout", ws+"/.git/commondir")
	gitControl(t, attack)
}
