package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestKeepGitHistoryFreshPack: the user's pack made just before the start
// (`git pull && jail`) is hard-linked into the store: the start kept only
// packs a second older than its look, and after the agent's unread lying
// pack and the host's gc the store gave no history back (packtiming).
// Seen failing on main (4d8a97a): no pack in the store.
func TestKeepGitHistoryFreshPack(t *testing.T) {
	ws := t.TempDir()
	gd := filepath.Join(ws, ".git")
	pd := filepath.Join(gd, "objects", "pack")
	if err := os.MkdirAll(pd, 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(gd, "refs", "heads"), 0o755)
	os.WriteFile(filepath.Join(gd, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	base := filepath.Join(pd, "pack-"+strings.Repeat("ab", 20))
	for _, ext := range []string{".pack", ".idx"} {
		if err := os.WriteFile(base+ext, []byte("x"), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(3 * stampTick)
	_, kept, _, _ := keepGitHistory(t.TempDir(), []string{ws}, []string{gd}, false, nil)
	if len(kept) != 1 {
		t.Fatalf("%d repositories kept, want 1", len(kept))
	}
	defer kept[0].lock.Close()
	for _, ext := range []string{".pack", ".idx"} {
		w, err1 := os.Lstat(base + ext)
		k, err2 := os.Lstat(filepath.Join(kept[0].store, "objects", "pack", filepath.Base(base)+ext))
		if err1 != nil || err2 != nil || !os.SameFile(w, k) {
			t.Errorf("the user's pack%s made %v before the start is not kept in the store: %v %v", ext, 3*stampTick, err1, err2)
		}
	}
}
