package hostgit

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Which remote URLs git opens as a repository on this machine, and where.
func TestLocalPath(t *testing.T) {
	top, home := "/w/proj", "/home/u"
	tests := []struct{ url, want string }{
		{"/srv/git/app.git", "/srv/git/app.git"},
		{"/srv/git/../git/app.git/", "/srv/git/app.git"},
		{"../upstream", "/w/upstream"},
		{"./mirror.git", "/w/proj/mirror.git"},
		{"~/remote.git", "/home/u/remote.git"},
		{"~", "/home/u"},
		{"~bob/remote.git", ""}, // another user's home
		{"file:///srv/app.git", "/srv/app.git"},
		{"file:///srv/my%20app.git", "/srv/my app.git"},
		{"file:///srv/bad%zz.git", ""},
		{"file://host/srv/app.git", ""},
		{"https://example.com/app.git", ""},
		{"ssh://git@example.com/app.git", ""},
		{"git://example.com/app.git", ""},
		{"git@example.com:org/app.git", ""}, // scp-like: ssh
		{"example.com:app.git", ""},
		{"./host:with/colon", "/w/proj/host:with/colon"}, // a slash before the colon: a path
		{"/srv/a:b.git", "/srv/a:b.git"},
		{"ext::ssh -i key host %S repo", ""},
		{"hg::https://example.com/repo", ""},
		{"", ""},
		{"/srv/nul\x00.git", ""},
	}
	for _, tt := range tests {
		if got := localPath(tt.url, top, home); got != tt.want {
			t.Errorf("localPath(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
	if got := localPath("~/r.git", top, ""); got != "" {
		t.Errorf("~ without a home: %q", got)
	}
}

func FuzzLocalPath(f *testing.F) {
	for _, s := range []string{"/srv/a.git", "../x", "~/r", "file:///a%20b", "git@h:p", "ext::x", "a:b/c", "./a:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		p := localPath(u, "/w/proj", "/home/u")
		if p == "" {
			return
		}
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || strings.ContainsRune(p, 0) {
			t.Fatalf("localPath(%q) = %q: not a clean absolute path", u, p)
		}
		if strings.Contains(u, "://") && !strings.HasPrefix(u, "file://") {
			t.Fatalf("localPath(%q) = %q: a network URL taken for a path", u, p)
		}
	})
}

// The remotes read from a repository's config (a linked worktree's from
// its common dir): local ones that exist, each repository once, named as
// the URL names it (p or p.git, a work tree's top); network ones and
// absent paths left out.
func TestLocalRemotes(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home")
	gitDir := func(d string) {
		t.Helper()
		for _, s := range []string{"objects", "refs"} {
			if err := os.MkdirAll(filepath.Join(d, s), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(d, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	proj := filepath.Join(root, "proj")
	gitDir(filepath.Join(proj, ".git"))
	gitDir(filepath.Join(home, "bare.git"))          // named without .git
	gitDir(filepath.Join(root, "sibling", ".git"))   // a clone beside the project
	gitDir(filepath.Join(root, "srv", "mirror.git")) // by file://
	if err := os.Symlink(filepath.Join(root, "srv"), filepath.Join(root, "srvlink")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(proj, ".git", "config"), `[core]
	bare = false
[remote "origin"]
	url = ~/bare
	fetch = +refs/heads/*:refs/remotes/origin/*
[remote "sib"]
	url = ../sibling
	pushurl = ../sibling/.git
[remote "m"]
	url = file://`+root+`/srvlink/mirror.git
[remote "gh"]
	url = git@github.com:org/app.git
	pushurl = https://github.com/org/app.git
[remote "gone"]
	url = /nowhere/at/all.git
[remote "again"]
	url = `+filepath.Join(home, "bare.git")+`
`)
	want := []Remote{
		{"origin", "~/bare", filepath.Join(home, "bare.git")},
		{"sib", "../sibling", filepath.Join(root, "sibling")},
		{"m", "file://" + root + "/srvlink/mirror.git", filepath.Join(root, "srv", "mirror.git")},
	}
	check := func(top string) {
		t.Helper()
		got := LocalRemotes(top, home)
		if len(got) != len(want) {
			t.Fatalf("LocalRemotes(%s) = %+v, want %+v", top, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("remote %d: %+v, want %+v", i, got[i], want[i])
			}
		}
	}
	check(proj)

	// A linked worktree beside the project reads the common dir's config;
	// its relative URLs are taken from its own top.
	wt := filepath.Join(root, "wt")
	wtGit := filepath.Join(proj, ".git", "worktrees", "wt")
	write(filepath.Join(wt, ".git"), "gitdir: "+wtGit+"\n")
	write(filepath.Join(wtGit, "commondir"), "../..\n")
	write(filepath.Join(wtGit, "HEAD"), "ref: refs/heads/wt\n")
	check(wt)

	if got := LocalRemotes(filepath.Join(root, "sibling-none"), home); got != nil {
		t.Errorf("no repository: %+v", got)
	}
	// A config that is not a regular file is not read (a FIFO would hang).
	fifoRepo := filepath.Join(root, "fifo")
	gitDir(filepath.Join(fifoRepo, ".git"))
	if err := syscall.Mkfifo(filepath.Join(fifoRepo, ".git", "config"), 0o644); err == nil {
		if got := LocalRemotes(fifoRepo, home); got != nil {
			t.Errorf("a FIFO config: %+v", got)
		}
	}
}
