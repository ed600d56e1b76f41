package gitkeep

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A git dir whose path holds a newline (a repository the agent made at
// ws/"x\n"/ws/evil, kept by the next start) split the store's alternates
// line in two: git then read the store's objects from a second directory
// the agent chose (a forged object under an id the history has). The line
// is C-quoted as git reads it (parse_alt_odb_entry); the store still
// reaches the repository's own objects, and Sweep still reads its git dir.
// Session 19.
func TestKeepAlternatesNewline(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no git: %v", err)
		}
		t.Skip("no git")
	}
	base := t.TempDir()
	evil := filepath.Join(base, "evil", ".git")
	bad := filepath.Join(base, "ws", "x\n"+filepath.Dir(evil))
	g := filepath.Join(bad, ".git")
	git := func(dir string, args ...string) string {
		t.Helper()
		c := exec.Command("git", append([]string{"-C", dir}, args...)...)
		c.Env = append(os.Environ(), "HOME="+base, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	for _, d := range []string{bad, filepath.Dir(evil)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		git(d, "init", "-q")
	}
	os.WriteFile(filepath.Join(bad, "f"), []byte("real\n"), 0o644)
	git(bad, "add", "f")
	git(bad, "commit", "-q", "-m", "c")
	git(bad, "repack", "-qad") // the repository's objects in its pack only
	head := git(bad, "rev-parse", "HEAD")
	forged := writeBlob(t, evil, "evil\n")
	forgedID := filepath.Base(filepath.Dir(forged)) + filepath.Base(forged)

	stores := t.TempDir()
	st := Store(stores, g)
	budget := testBudget()
	if _, err := Keep(st, g, &budget); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.Command("git", "-C", st, "cat-file", "-e", forgedID).CombinedOutput(); err == nil {
		alt, _ := os.ReadFile(filepath.Join(st, "objects", "info", "alternates"))
		t.Errorf("the store reads %s's objects (alternates %q)", evil, alt)
	}
	if out, err := exec.Command("git", "-C", st, "cat-file", "-e", head).CombinedOutput(); err != nil {
		t.Errorf("the store does not reach the repository's commit: %v\n%s", err, out)
	}
	// Sweep judges the store by the git dir its alternates name: gone
	// now, so the store is marked.
	os.Remove(filepath.Join(g, "HEAD"))
	if _, err := Sweep(stores, nil, time.Now(), time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(st, goneFile)); err != nil {
		t.Errorf("Sweep did not read the store's git dir: %v", err)
	}
}

// altGitDir reads back every git dir altLine writes, byte for byte.
func TestAltLineRoundTrip(t *testing.T) {
	for _, d := range []string{"/w/.git", "/w/x\n/e/.git", "/w/\"q\\\"/.git", "/w/\t\x7f\x01é\xff/.git", "/w/é/.git"} {
		if got := altGitDir(altLine(d)); got != d {
			t.Errorf("altGitDir(altLine(%q)) = %q (%q)", d, got, altLine(d))
		}
	}
}
