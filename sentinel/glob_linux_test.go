package sentinel

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestGlobNewNames: in a directory watched for a pattern, a new name
// matching it leaves while the run goes on (made in place, renamed in, in
// capitals), the names there at start and the names it does not match
// stay, and the exit check finds one made with no watch at all. The
// directory is a writable root itself (-w ~/.codex), inside one, or made
// in the run.
func TestGlobNewNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		sub  string // the pattern's directory below the root ("": the root)
		made bool   // missing at start, made in the run
	}{
		{"root", "", false},
		{"inside", ".codex", false},
		{"made-in-run", ".codex", true},
		{"made-deeper", "a/b", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			dir := filepath.Join(h.root, tc.sub)
			if !tc.made {
				mkfile(t, filepath.Join(dir, "state_5.sqlite"), "host")
			}
			g := List(Glob{Dir: dir, Pattern: "*.sqlite*", Rule: "default: ~/.codex/*.sqlite*"})
			if want := []string{"state_5.sqlite"}; !tc.made && !slices.Equal(g.Had, want) {
				t.Fatalf("List: Had %q, want %q", g.Had, want)
			}
			h.start(t, Config{Globs: []Glob{g}})
			for _, n := range []string{"queue_2.sqlite", "STATE_5.SQLITE-SHM"} {
				mkfile(t, filepath.Join(dir, n), "evil")
				gone(t, filepath.Join(dir, n))
			}
			mkfile(t, filepath.Join(dir, "tmp.x"), "evil")
			if err := os.Rename(filepath.Join(dir, "tmp.x"), filepath.Join(dir, "moved_3.sqlite")); err != nil {
				t.Fatal(err)
			}
			gone(t, filepath.Join(dir, "moved_3.sqlite"))
			mkfile(t, filepath.Join(dir, "notes.txt"), "mine")
			for _, n := range []string{"notes.txt", "state_5.sqlite"} {
				if _, err := os.Lstat(filepath.Join(dir, n)); err != nil && (n == "notes.txt" || !tc.made) {
					t.Errorf("%s: %v, want it kept", n, err)
				}
			}
		})
	}
}

// TestGlobExitCheck: with no watch (a supervisor killed, inotify refused),
// the check lists the directory.
func TestGlobExitCheck(t *testing.T) {
	h := newHarness(t)
	dir := filepath.Join(h.root, ".codex")
	mkfile(t, filepath.Join(dir, "state_5.sqlite"), "host")
	g := List(Glob{Dir: dir, Pattern: "*.sqlite*", Rule: "r"})
	mkfile(t, filepath.Join(dir, "queue_2.sqlite-wal"), "evil")
	s := New(Config{Dir: h.qdir, Roots: []string{h.root}, Notify: h.notify, Globs: []Glob{g}})
	defer s.Close()
	s.CheckAbsent("exit")
	if _, err := os.Lstat(filepath.Join(dir, "queue_2.sqlite-wal")); err == nil {
		t.Errorf("queue_2.sqlite-wal left by the exit check (events %q)", h.paths())
	}
	if _, err := os.Lstat(filepath.Join(dir, "state_5.sqlite")); err != nil {
		t.Errorf("state_5.sqlite: %v", err)
	}
}
