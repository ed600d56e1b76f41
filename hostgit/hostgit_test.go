package hostgit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestTopLevel(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	mk := func(rel string) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write := func(rel, body string) {
		if err := os.WriteFile(filepath.Join(root, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("repo/.git")
	write("repo/.git/HEAD", "ref: refs/heads/main\n")
	mk("repo/a/b")
	mk("wt/sub")
	write("wt/.git", "gitdir: /elsewhere/.git/worktrees/wt\n")
	mk("fake/.git") // no HEAD: not a repository
	mk("fake/sub")
	mk("notgit/sub")
	write("notgit/.git", "hello\n")
	mk("home/.git")
	write("home/.git/HEAD", "ref: refs/heads/main\n")
	mk("home/proj/sub")

	home := filepath.Join(root, "home")
	tests := []struct {
		dir, want string
		reason    bool
		marked    string // MarkedTop's answer, when it differs
	}{
		{"repo", "repo", false, ""},
		{"repo/a/b", "repo", false, ""},
		{"wt/sub", "wt", false, ""},
		{"fake/sub", "", false, "fake"}, // a .git whose HEAD is gone still marks one
		{"notgit/sub", "", false, "notgit"},
		{"home/proj/sub", "", true, ""}, // a dotfiles repository in ~: never the workspace
		{"home", "", true, ""},
		{"plain/sub", "", false, ""},
	}
	mk("plain/sub")
	for _, tt := range tests {
		got, reason := TopLevel(filepath.Join(root, tt.dir), home)
		want := ""
		if tt.want != "" {
			want = filepath.Join(root, tt.want)
		}
		if got != want || (reason != "") != tt.reason {
			t.Errorf("TopLevel(%s) = %q, %q; want %q (reason %v)", tt.dir, got, reason, want, tt.reason)
		}
		if tt.marked != "" {
			want = filepath.Join(root, tt.marked)
		}
		if got, reason := MarkedTop(filepath.Join(root, tt.dir), home); got != want || (reason != "") != tt.reason {
			t.Errorf("MarkedTop(%s) = %q, %q; want %q (reason %v)", tt.dir, got, reason, want, tt.reason)
		}
	}
}

func TestIdentityEnv(t *testing.T) {
	if got := (Identity{}).Env(); len(got) != 0 {
		t.Errorf("empty identity: %v", got)
	}
	got := strings.Join(Identity{Name: "A B", Email: "a@b"}.Env(), ",")
	if got != "GIT_AUTHOR_NAME=A B,GIT_COMMITTER_NAME=A B,GIT_AUTHOR_EMAIL=a@b,GIT_COMMITTER_EMAIL=a@b" {
		t.Errorf("Env: %s", got)
	}
}

// ReadIdentity takes user.name and user.email through a symlinked
// ~/.gitconfig and includes, and nothing else.
func TestReadIdentity(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "dots"), 0o755)
	os.WriteFile(filepath.Join(home, "dots", "inc"), []byte("[user]\n\temail = inc@example.com\n"), 0o644)
	os.WriteFile(filepath.Join(home, "dots", "gitconfig"), []byte("[user]\n\tname = Dot\n[credential]\n\thelper = store\n[include]\n\tpath = "+filepath.Join(home, "dots", "inc")+"\n"), 0o644)
	os.Symlink("dots/gitconfig", filepath.Join(home, ".gitconfig"))
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
	got := ReadIdentity(git, t.TempDir(), env)
	if got != (Identity{Name: "Dot", Email: "inc@example.com"}) {
		t.Errorf("ReadIdentity = %+v", got)
	}
	if got := ReadIdentity(git, t.TempDir(), []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}); got != (Identity{}) {
		t.Errorf("no config: %+v", got)
	}
}

func TestParseIdentity(t *testing.T) {
	tests := []struct {
		in   string
		want Identity
	}{
		{"user.name\nA B\x00user.email\na@b\x00", Identity{"A B", "a@b"}},
		{"user.name\nOld\x00user.name\nNew\x00", Identity{Name: "New"}},
		{"user.email\n\x00", Identity{}},
		{"user.nameX\nA\x00garbage", Identity{}},
		{"", Identity{}},
	}
	for _, tt := range tests {
		if got := parseIdentity([]byte(tt.in)); got != tt.want {
			t.Errorf("parseIdentity(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func FuzzParseIdentity(f *testing.F) {
	f.Add([]byte("user.name\nA B\x00user.email\na@b\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		id := parseIdentity(b)
		if strings.ContainsAny(id.Name+id.Email, "\n\x00") {
			t.Fatalf("a value with a newline or NUL: %+v", id)
		}
	})
}
