package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The git identity is cached in jail's state directory between runs (git
// is not run at every start), and an edit of ~/.gitconfig between two runs
// (same size, same second) is seen by the next one. The cache is not
// visible inside.
func TestGitIdentityCacheFollowsEdits(t *testing.T) {
	everydayNeed(t, "git")
	home, env := everydayHome(t)
	os.MkdirAll(filepath.Join(home, ".local", "state", "jail"), 0o700)
	gc := filepath.Join(home, ".gitconfig")
	ws := workspace(t)
	everydayRepo(t, ws)
	script := `echo "id=$GIT_AUTHOR_NAME <$GIT_AUTHOR_EMAIL>"; ls ~/.local/state/jail 2>&1 | grep -c git-identity; true`
	for i, name := range []string{"First One", "Other One", "Other One"} {
		if i < 2 {
			if err := os.WriteFile(gc, []byte("[user]\n\tname = "+name+"\n\temail = me@example.com\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r := sh(t, runOpts{dir: ws, env: env}, script)
		if r.code != 0 || !strings.Contains(r.stdout, "id="+name+" <me@example.com>") {
			t.Fatalf("run %d: exit %d, want %q\nstdout: %s\nstderr: %s", i, r.code, name, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, "\n0\n") {
			t.Errorf("run %d: the identity cache is visible inside:\n%s", i, r.stdout)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "state", "jail", "git-identity.json")); err != nil {
		t.Errorf("no identity cache in the state directory: %v", err)
	}
}
