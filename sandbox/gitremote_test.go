package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/ns"
)

// A remote that is a repository on this machine: named at start where the
// sandbox hides it (fetch fails as "not a git repository") or keeps it
// read-only (push fails as "unable to create temporary object directory"),
// with the option that lets git reach it; not named where git inside works
// with it, nor where no option shows it.
func TestGitRemoteNotes(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home")
	ws := filepath.Join(home, "proj")
	sd := filepath.Join(home, ".local/state/jail")
	repo := func(d string) {
		t.Helper()
		for _, s := range []string{"objects", "refs"} {
			if err := os.MkdirAll(filepath.Join(d, s), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		write(t, filepath.Join(d, "HEAD"), "ref: refs/heads/main\n", 0o644)
	}
	repo(filepath.Join(ws, ".git"))
	for _, d := range []string{"home/up.git", "home/.ssh/keys.git", "home/.local/state/jail/x.git", "home/proj/vendored.git", "srv/mirror.git", "srv/w.git", "srv/m.git", "srv/fifth.git"} {
		repo(filepath.Join(root, d))
	}
	config := func(urls ...string) {
		t.Helper()
		var b strings.Builder
		for i, u := range urls {
			b.WriteString("[remote \"r" + string(rune('a'+i)) + "\"]\n\turl = " + u + "\n")
		}
		write(t, filepath.Join(ws, ".git", "config"), b.String(), 0o644)
	}
	hideHome := []ns.Mount{{Kind: ns.KindTmpfs, Path: home}, {Kind: ns.KindBind, Path: ws}}
	tests := []struct {
		name   string
		urls   []string
		mounts []ns.Mount
		want   []string // one part of each note, in order
	}{
		{"hidden with the home", []string{"~/up.git", "git@example.com:o/r.git", "https://example.com/r.git"}, hideHome,
			[]string{"git remote ra (~/up.git) is hidden inside, so git cannot fetch from it (\"does not appear to be a git repository\"): `read` ~/up.git lets git fetch, `write` ~/up.git push too (its hooks and config stay read-only)"}},
		{"read-only: the host's view", []string{root + "/srv/mirror.git"}, hideHome,
			[]string{"git remote ra (" + root + "/srv/mirror.git) is read-only inside, so a push to it fails (\"unable to create temporary object directory\"): `write` " + root + "/srv/mirror.git lets git push"}},
		{"writable, or shown read-only by a read path", []string{root + "/srv/w.git", "~/up.git"},
			append(hideHome, ns.Mount{Kind: ns.KindBind, Path: root + "/srv/w.git"}, ns.Mount{Kind: ns.KindROBind, Path: home + "/up.git"}),
			nil},
		{"in the workspace, a secret place, jail's state, masked", []string{"./vendored.git", "~/.ssh/keys.git", sd + "/x.git", root + "/srv/m.git"},
			append(hideHome, ns.Mount{Kind: ns.KindMask, Path: root + "/srv/m.git"}), nil},
		{"at most three", []string{"~/up", root + "/srv/mirror", root + "/srv/w", root + "/srv/m", root + "/srv/fifth"}, hideHome,
			[]string{"git remote ra (~/up.git) is hidden", "git remote rb (" + root + "/srv/mirror.git) is read-only", "git remote rc (" + root + "/srv/w.git) is read-only"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			config(tt.urls...)
			notes := gitRemoteNotes(ws, home, sd, tt.mounts)
			if len(notes) != len(tt.want) {
				t.Fatalf("notes %q, want %d", notes, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(notes[i], w) {
					t.Errorf("note %q lacks %q", notes[i], w)
				}
				if !shownNote(notes[i]) {
					t.Errorf("not said at start: %q", notes[i])
				}
			}
		})
	}
}
