package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/policy"
)

// A workspace chosen from a current directory named through a symlink (the
// shell's $PWD) is refused when the link lies in a git work tree or a write
// path and leads out of it; a link that stays in its tree, or one outside
// every such tree (the user's), works as before (cwdlink). Seen failing
// with cwdLinks' call taken out of resolvePolicy: every "refused" case was
// planned, the other directory the writable workspace.
func TestCwdLinks(t *testing.T) {
	f := newFixture(t)
	root := filepath.Dir(f.ws)
	repo := func(d string) {
		if err := os.MkdirAll(filepath.Join(d, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, victim, data, other := filepath.Join(root, "p"), filepath.Join(root, "victim"), filepath.Join(root, "data"), filepath.Join(root, "other")
	for _, d := range []string{filepath.Join(p, "sub"), filepath.Join(p, "nested", "in"), victim, data, filepath.Join(other, "x")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	repo(p)
	repo(filepath.Join(p, "nested"))
	repo(other)
	repo(f.home)                                // a dotfiles repository: its links stay the user's
	headless := filepath.Join(root, "headless") // a work tree whose .git/HEAD a sandbox deleted
	if err := os.MkdirAll(filepath.Join(headless, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for at, target := range map[string]string{
		filepath.Join(p, "out"):          victim,                           // planted: out of its tree
		filepath.Join(p, "deep"):         filepath.Join(other, "x"),        // into another repository
		filepath.Join(p, "here"):         filepath.Join(p, "sub"),          // within its tree
		filepath.Join(p, "down"):         filepath.Join(p, "nested", "in"), // into a repository inside its tree
		filepath.Join(p, "nested", "up"): filepath.Join(p, "sub"),          // out of a nested repository, widening
		filepath.Join(data, "l"):         victim,                           // in a write path (or the user's)
		filepath.Join(root, "userlink"):  victim,                           // the user's
		filepath.Join(root, "chain"):     filepath.Join(p, "out"),          // the user's, then a planted one
		filepath.Join(f.home, "proj"):    victim,                           // in the dotfiles repository
		filepath.Join(headless, "out"):   victim,                           // planted, HEAD deleted
	} {
		if err := os.Symlink(target, at); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name    string
		cwd     string
		write   []string
		ws      string // --workspace
		refused string // the link named; "": planned
	}{
		{name: "planted in a work tree", cwd: filepath.Join(p, "out"), refused: filepath.Join(p, "out")},
		{name: "below the planted link", cwd: filepath.Join(p, "out") + "/.", refused: filepath.Join(p, "out")},
		{name: "into another repository", cwd: filepath.Join(p, "deep"), refused: filepath.Join(p, "deep")},
		{name: "out of a nested repository", cwd: filepath.Join(p, "nested", "up"), refused: filepath.Join(p, "nested", "up")},
		{name: "a chain through a planted link", cwd: filepath.Join(root, "chain"), refused: filepath.Join(p, "out")},
		{name: "in a work tree without HEAD", cwd: filepath.Join(headless, "out"), refused: filepath.Join(headless, "out")},
		{name: "in a write path", cwd: filepath.Join(data, "l"), write: []string{data}, refused: filepath.Join(data, "l")},
		{name: "within its tree", cwd: filepath.Join(p, "here")},
		{name: "into a repository inside its tree", cwd: filepath.Join(p, "down")},
		{name: "the user's link", cwd: filepath.Join(root, "userlink")},
		{name: "the link's tree not writable now", cwd: filepath.Join(data, "l")},
		{name: "in a dotfiles repository", cwd: filepath.Join(f.home, "proj")},
		{name: "the workspace named", cwd: filepath.Join(p, "out"), ws: victim},
		{name: "no link", cwd: victim},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := BuildPlan(f.policy(func(pol *policy.Policy) { pol.Workspace, pol.Cwd, pol.Write = c.ws, c.cwd, c.write }), f.env)
			if c.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("planned")
			}
			var fe *policy.FieldError
			if !errors.As(err, &fe) || !errors.Is(err, policy.ErrInvalid) || fe.Key != "the current directory" ||
				!strings.Contains(err.Error(), "symlink "+c.refused+" ") || !strings.Contains(err.Error(), "can point elsewhere") ||
				!strings.Contains(err.Error(), "--workspace ") {
				t.Fatalf("error: %v", err)
			}
		})
	}
}

// A current directory whose link is retargeted between workspaceOf's
// resolution and cwdLinks' walk is refused: the links checked must be
// those of the directory the workspace was chosen from. Seen failing with
// the final != cwd comparison taken out (checked and accepted).
func TestCwdLinksChangedMeanwhile(t *testing.T) {
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l := filepath.Join(root, "l")
	if err := os.Symlink(a, l); err != nil {
		t.Fatal(err)
	}
	// Resolved to b a moment earlier, now leads to a.
	if err := cwdLinks(l, b, b, "", nil, nil); err == nil || !strings.Contains(err.Error(), "changed while jail started") {
		t.Fatalf("changed meanwhile: %v", err)
	}
	if err := cwdLinks(l, a, a, "", nil, nil); err != nil {
		t.Fatalf("unchanged, the user's link: %v", err)
	}
}
