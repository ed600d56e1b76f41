package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeepGitHistoryBounded: an agent's git init loop in the workspace
// (2,000 repositories made each later start 1.3 s slower, its end 0.5 s,
// a store each) gets no more than maxKeptRepos stores a start, and the
// workspace's own repository and a -w root's (deeper on the host than the
// planted ones) are among them, with one line for the rest. Seen failing
// before the bound: all 202 kept.
func TestKeepGitHistoryBounded(t *testing.T) {
	base := t.TempDir()
	ws, w := filepath.Join(base, "ws"), filepath.Join(base, "a", "b", "c", "d", "w")
	repos := []string{filepath.Join(w, ".git")}
	for i := 0; i < 200; i++ {
		repos = append(repos, filepath.Join(ws, fmt.Sprintf("-%03d", i), ".git"))
	}
	repos = append(repos, filepath.Join(ws, ".git"))
	notes, kept, checked, _ := keepGitHistory(t.TempDir(), []string{ws, w}, repos, false, nil)
	if len(kept) != maxKeptRepos {
		t.Fatalf("%d repositories kept, want %d", len(kept), maxKeptRepos)
	}
	// The end's pack check reads them all, kept or not (review17a).
	seen := map[string]bool{}
	for _, c := range checked {
		seen[c.dir] = true
	}
	if len(checked) != len(repos) || len(seen) != len(repos) {
		t.Errorf("%d repositories' packs checked at the end (%d distinct), want %d", len(checked), len(seen), len(repos))
	}
	has := map[string]bool{}
	for _, k := range kept {
		has[k.dir] = true
	}
	if !has[filepath.Join(ws, ".git")] || !has[filepath.Join(w, ".git")] {
		t.Errorf("the workspace's or the -w root's repository not kept: %v", has)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "only 64 repositories") {
		t.Errorf("notes: %q", notes)
	}
}
