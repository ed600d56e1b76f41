package hostgit

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The cached identity is git's answer until anything git reads changes:
// an edit of ~/.gitconfig, a new XDG config, a repository config, another
// HOME. With an include, git runs every time.
func TestReadIdentityCached(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	home := t.TempDir()
	ws := t.TempDir()
	cache := filepath.Join(t.TempDir(), "git-identity.json")
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
	write := func(p, body string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, env []string, want Identity) {
		t.Helper()
		if got := ReadIdentityCached(git, ws, env, cache); got != want {
			t.Errorf("%s: %+v, want %+v", what, got, want)
		}
	}
	gc := filepath.Join(home, ".gitconfig")
	write(gc, "[user]\n\tname = One\n\temail = one@example.com\n")
	check("first (git runs)", env, Identity{"One", "one@example.com"})
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	// The cache answers: a forged entry with the right key is believed
	// (the file is jail's, in its state directory), which shows git did
	// not run.
	b, _ := os.ReadFile(cache)
	forged := []byte(string(b[:len(b)-len(`"name":"One","email":"one@example.com"}`)]) + `"name":"Cached","email":"one@example.com"}`)
	os.WriteFile(cache, forged, 0o600)
	check("unchanged (cache)", env, Identity{"Cached", "one@example.com"})

	// Same size, same second: only mtime/ctime nanoseconds tell.
	time.Sleep(10 * time.Millisecond)
	write(gc, "[user]\n\tname = Two\n\temail = one@example.com\n")
	check("~/.gitconfig edited", env, Identity{"Two", "one@example.com"})
	// A file that did not exist: the XDG config.
	write(filepath.Join(home, ".config", "git", "config"), "[user]\n\tname = Xdg\n")
	write(gc, "[user]\n\temail = two@example.com\n")
	check("XDG config created", env, Identity{"Xdg", "two@example.com"})
	// The repository's own config.
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	check("repository without identity", env, Identity{"Xdg", "two@example.com"})
	write(filepath.Join(ws, ".git", "config"), "[core]\n\trepositoryformatversion = 0\n[user]\n\tname = Repo\n")
	check("repository config", env, Identity{"Repo", "two@example.com"})
	// Another HOME.
	home2 := t.TempDir()
	write(filepath.Join(home2, ".gitconfig"), "[user]\n\tname = Home2\n")
	env2 := []string{"HOME=" + home2, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
	check("other HOME", env2, Identity{Name: "Repo"})
	os.RemoveAll(filepath.Join(ws, ".git"))
	check("repository gone", env2, Identity{Name: "Home2"})

	// An include: the files git reads are not known from outside; git
	// runs every time, and a change in the included file shows at once.
	inc := filepath.Join(home, "inc")
	write(inc, "[user]\n\tname = Inc1\n")
	write(gc, "[include]\n\tpath = "+inc+"\n")
	os.Remove(filepath.Join(home, ".config", "git", "config"))
	check("include", env, Identity{Name: "Inc1"})
	write(inc, "[user]\n\tname = Inc2\n")
	check("included file edited", env, Identity{Name: "Inc2"})
	if _, ok := identityKey(git, ws, env); ok {
		t.Error("identityKey: a key for a config with an include")
	}
	if _, ok := identityKey(git, ws, append(env2, "GIT_DIR=/elsewhere")); ok {
		t.Error("identityKey: a key with GIT_DIR set")
	}
}

// A worktree's or submodule's .git file leaves the cache out.
func TestIdentityKeyGitFile(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, ".git"), []byte("gitdir: /elsewhere\n"), 0o644)
	sub := filepath.Join(ws, "sub")
	os.Mkdir(sub, 0o755)
	if _, ok := identityKey(git, sub, []string{"HOME=" + t.TempDir()}); ok {
		t.Error("identityKey: a key under a .git file")
	}
}
