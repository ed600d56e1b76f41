//go:build linux

package tests

// End-to-end tests of what the git-kept store learns of a repository
// before it keeps it (lane gitkeep5).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGitHistoryUnreadPackKeptLater: a nested repository past the bound
// of kept repositories (64 shallower ones planted) has no store; the
// agent leaves a lying pack in it that the end cannot read through (said,
// and on main recorded nowhere). The planted repositories go, the next
// start keeps the nested one: on main it hard-linked the agent's pack
// into the new store as the start's own, the end could not read it
// through again (no earlier unchecked record: not dropped), and after the
// host's gc the fetch from the store took the forgery, newest pack first:
// no root commit. Seen failing on main (b5e615a), root and jailtest.
func TestGitHistoryUnreadPackKeptLater(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	sub := filepath.Join(ws, "deep", "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	root := threeCommits(t, h, sub)
	name, pack, idx := bigLyingPack(t, h, sub)
	for i := 0; i < 64; i++ {
		h.mustGit(t, ws, "init", "-q", fmt.Sprintf("p%02d", i))
	}
	plantPack(t, ws, pack, idx)
	script := `cd "$2" || exit 1
git -C deep/sub reflog expire --expire=now --all || exit 1
P=deep/sub/.git/objects/pack/pack-$3
cp plant/q.pack $P.pack && cp plant/q.idx $P.idx || exit 1
rm -rf plant p[0-9][0-9]
git -C deep/sub log --format=%s
`
	r := h.runForging(t, ws, script, []string{"c", "b"}, ws, name)
	if !strings.Contains(r.stderr, "only 64 repositories") || !strings.Contains(r.stderr, "pack-"+name) {
		t.Fatalf("the nested repository was kept in the first run, or its pack not said unread (the attack's precondition):\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "git fetch  '") {
		t.Errorf("the end names an empty store to fetch from for the repository it kept no store of:\n%s", r.stderr)
	}
	r2 := runLater(t, h, ws)
	h.git(sub, "gc", "-q")
	if _, err := h.git(sub, "cat-file", "-e", root); err == nil {
		t.Fatalf("the host's gc kept the root commit %s: the attack did not take", root)
	}
	gitDir, err := filepath.EvalSymlinks(filepath.Join(sub, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	fetchKeptFrom(t, h, keptStoreOf(t, h, gitDir), root, r.stderr+r2.stderr)
}

// keptStoreOf is the store whose alternates name gitDir's objects.
func keptStoreOf(t *testing.T, h *gitHost, gitDir string) string {
	t.Helper()
	alts, _ := filepath.Glob(filepath.Join(h.state, "jail", "git-kept", "*", "objects", "info", "alternates"))
	for _, a := range alts {
		if b, err := os.ReadFile(a); err == nil && strings.TrimSpace(string(b)) == filepath.Join(gitDir, "objects") {
			return filepath.Dir(filepath.Dir(filepath.Dir(a)))
		}
	}
	t.Fatalf("no store of %s among %d", gitDir, len(alts))
	return ""
}
