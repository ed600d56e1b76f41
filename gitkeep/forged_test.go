//go:build linux

package gitkeep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestForgedLoose: a loose object the store keeps a copy of, written in
// the run with other bytes (or made a link), is named; one rewritten with
// its own bytes, one untouched, and one changed before since are not.
func TestForgedLoose(t *testing.T) {
	ws, _ := gitRepo(t)
	g := filepath.Join(ws, ".git")
	st := Store(t.TempDir(), g)
	lock, _ := start(t, st, g)
	defer lock.Close()
	ps, _ := filepath.Glob(filepath.Join(st, "objects", "??", "*"))
	if len(ps) < 3 {
		t.Fatalf("store copies: %v", ps)
	}
	ws3 := make([]string, 3)
	for i := range ws3 {
		ws3[i] = filepath.Join(g, "objects", filepath.Base(filepath.Dir(ps[i])), filepath.Base(ps[i]))
	}
	since := time.Now()
	time.Sleep(20 * time.Millisecond)
	same, _ := os.ReadFile(ws3[0])
	os.Remove(ws3[0])
	os.WriteFile(ws3[0], same, 0o444) // its own bytes again
	other, _ := os.ReadFile(ws3[2])
	os.Remove(ws3[1])
	os.WriteFile(ws3[1], other, 0o444) // another object's bytes
	os.Remove(ws3[2])
	os.Symlink(ws3[0], ws3[2])
	forged, left, err := ForgedLoose(st, g, since, time.Now().Add(time.Minute))
	if err != nil || left != 0 || len(forged) != 2 || forged[0] == ws3[0] || forged[1] == ws3[0] {
		t.Errorf("ForgedLoose: %v (%d left, %v), want %s and %s", forged, left, err, ws3[1], ws3[2])
	}
	for _, f := range forged {
		if !strings.HasPrefix(f, filepath.Join(g, "objects")) {
			t.Errorf("%s is not the workspace's", f)
		}
	}
	if forged, left, _ := ForgedLoose(st, g, since, time.Now().Add(-time.Second)); len(forged) != 0 || left == 0 {
		t.Errorf("past the deadline: %v, %d left", forged, left)
	}
	if forged, _, _ := ForgedLoose(st, g, time.Now().Add(time.Hour), time.Now().Add(time.Minute)); len(forged) != 0 {
		t.Errorf("nothing changed since: %v", forged)
	}
}
