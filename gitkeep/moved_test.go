//go:build linux

package gitkeep

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLookMoved (lane gitkeep3): a ref moved forward (a commit) is not
// said; one reset to an older commit, or amended, is (Moved), with its
// start value recorded in the store as refs/jail/moved/...; the same
// after the host's gc packed every commit (the walk reads the pack).
// Seen failing on main (e21fcff): Lost said nothing of a moved ref, and
// the next start's record replaced its start value.
func TestLookMoved(t *testing.T) {
	for _, packed := range []bool{false, true} {
		ws, git := gitRepo(t)
		g := filepath.Join(ws, ".git")
		if packed {
			git("gc", "-q")
		}
		st := Store(t.TempDir(), g)
		lock, res := start(t, st, g)
		lock.Close()
		main := strings.TrimSpace(git("rev-parse", "main"))
		side := strings.TrimSpace(git("rev-parse", "side"))
		deadline := time.Now().Add(time.Minute)

		os.WriteFile(filepath.Join(ws, "g"), []byte("g\n"), 0o644)
		git("add", "g")
		git("commit", "-q", "-m", "forward")
		git("merge", "-q", "--no-edit", "side")
		if c := Look(res.Start, g, st, deadline); len(c.Moved)+len(c.Gone) != 0 || c.HeadGone {
			t.Fatalf("packed %v: a commit and a merge said: %+v", packed, c)
		}
		git("reset", "-q", "--hard", main+"~3")
		git("checkout", "-q", "side")
		git("commit", "-q", "--amend", "-m", "amended")
		git("checkout", "-q", "main")
		c := Look(res.Start, g, st, deadline)
		if strings.Join(c.Moved, ",") != "refs/heads/main,refs/heads/side" || len(c.Gone) != 0 {
			t.Fatalf("packed %v: moved %v gone %v", packed, c.Moved, c.Gone)
		}
		// The next start records the new values; the start's stay named.
		lock, _ = start(t, st, g)
		lock.Close()
		pr, _ := os.ReadFile(filepath.Join(st, "packed-refs"))
		for _, want := range []string{main + " refs/jail/moved/heads/main\n", side + " refs/jail/moved/heads/side\n"} {
			if !strings.Contains(string(pr), want) {
				t.Errorf("packed %v: store's packed-refs lacks %q:\n%s", packed, want, pr)
			}
		}
	}
}

// TestLookForgedParent: the agent resets main and writes a loose object
// under a made-up name claiming the start commit as its parent: not a
// commit (its hash is not its name), so the move is said.
func TestLookForgedParent(t *testing.T) {
	ws, git := gitRepo(t)
	g := filepath.Join(ws, ".git")
	st := Store(t.TempDir(), g)
	lock, res := start(t, st, g)
	lock.Close()
	main := strings.TrimSpace(git("rev-parse", "main"))
	git("reset", "-q", "--hard", "main~2")
	body := "tree " + strings.Repeat("0", 40) + "\nparent " + main + "\ncommitter t <t@t> 9999999999 +0000\n\nforged\n"
	var zb bytes.Buffer
	z := zlib.NewWriter(&zb)
	fmt.Fprintf(z, "commit %d\x00%s", len(body), body)
	z.Close()
	b := zb.Bytes()
	forged := strings.Repeat("5", 40)
	os.MkdirAll(filepath.Join(g, "objects", "55"), 0o755)
	os.WriteFile(filepath.Join(g, "objects", "55", forged[2:]), b, 0o444)
	os.WriteFile(filepath.Join(g, "refs", "heads", "main"), []byte(forged+"\n"), 0o644)
	if c := Look(res.Start, g, st, time.Now().Add(time.Minute)); strings.Join(c.Moved, ",") != "refs/heads/main" {
		t.Fatalf("a forged child of the start commit passed: %+v", c)
	}
}
