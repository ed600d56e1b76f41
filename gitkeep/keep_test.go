package gitkeep

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	id1 = "1111111111111111111111111111111111111111"
	id2 = "2222222222222222222222222222222222222222"
)

// fakeRepo makes a git dir with loose objects in two fan-out directories
// (mtimes an hour old) and refs: main loose, v1 packed, HEAD on main.
func fakeRepo(t *testing.T) string {
	t.Helper()
	g := filepath.Join(t.TempDir(), ".git")
	old := time.Now().Add(-time.Hour)
	for _, o := range []string{"ab/" + strings.Repeat("c", 38), "ab/" + strings.Repeat("d", 38), "01/" + strings.Repeat("e", 38)} {
		p := filepath.Join(g, "objects", o)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(o), 0o444)
	}
	os.WriteFile(filepath.Join(g, "objects", "ab", "tmp_obj_x"), nil, 0o644)
	for _, d := range []string{"ab", "01"} {
		os.Chtimes(filepath.Join(g, "objects", d), old, old)
	}
	os.MkdirAll(filepath.Join(g, "refs", "heads"), 0o755)
	os.WriteFile(filepath.Join(g, "refs", "heads", "main"), []byte(id1+"\n"), 0o644)
	os.WriteFile(filepath.Join(g, "packed-refs"), []byte("# pack-refs with: peeled\n"+id2+" refs/tags/v1\n^"+id1+"\n"), 0o644)
	os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	return g
}

func TestKeepLinksAndRecords(t *testing.T) {
	g := fakeRepo(t)
	st := Store(t.TempDir(), g)
	budget := MaxLinks
	res, err := Keep(st, g, &budget)
	if err != nil || res.Linked != 3 || res.CrossFS || res.Full {
		t.Fatalf("Keep: %+v %v", res, err)
	}
	a, _ := os.Stat(filepath.Join(g, "objects", "ab", strings.Repeat("c", 38)))
	b, err := os.Stat(filepath.Join(st, "objects", "ab", strings.Repeat("c", 38)))
	if err != nil || !os.SameFile(a, b) {
		t.Fatalf("object not hard-linked: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(st, "objects", "ab", "tmp_obj_x")); err == nil {
		t.Error("a tmp file was kept")
	}
	pr, _ := os.ReadFile(filepath.Join(st, "packed-refs"))
	want := id1 + " refs/heads/main\n" + id1 + " refs/jail/HEAD\n" + id2 + " refs/tags/v1\n"
	if string(pr) != want {
		t.Errorf("packed-refs:\n%s\nwant:\n%s", pr, want)
	}
	alt, _ := os.ReadFile(filepath.Join(st, "objects", "info", "alternates"))
	if string(alt) != filepath.Join(g, "objects")+"\n" {
		t.Errorf("alternates %q", alt)
	}

	// The agent deletes the objects and a ref; a new object lands in 01.
	// The next start links only the new one (ab's mtime changed, but its
	// objects are linked already; 01 read again) and keeps main recorded.
	os.RemoveAll(filepath.Join(g, "objects", "ab"))
	os.Remove(filepath.Join(g, "refs", "heads", "main"))
	os.WriteFile(filepath.Join(g, "objects", "01", strings.Repeat("f", 38)), nil, 0o444)
	res, err = Keep(st, g, &budget)
	if err != nil || res.Linked != 1 {
		t.Fatalf("second Keep: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(st, "objects", "ab", strings.Repeat("d", 38))); err != nil {
		t.Errorf("a kept object went with the workspace's: %v", err)
	}
	if pr, _ := os.ReadFile(filepath.Join(st, "packed-refs")); !strings.Contains(string(pr), id1+" refs/heads/main\n") {
		t.Errorf("a deleted ref is no longer recorded:\n%s", pr)
	}
}

// TestKeepSkipsUnchangedAndLinks: a fan-out directory whose mtime is the
// one recorded is not read (an object put there behind git's back with
// the mtime restored is not linked: the proof that it was skipped), and
// a symlinked fan-out directory or object is never followed.
func TestKeepSkipsUnchangedAndLinks(t *testing.T) {
	g := fakeRepo(t)
	st := Store(t.TempDir(), g)
	budget := MaxLinks
	if _, err := Keep(st, g, &budget); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(g, "objects", "ab")) // recorded in seenFile
	os.WriteFile(filepath.Join(g, "objects", "ab", strings.Repeat("9", 38)), nil, 0o444)
	os.Chtimes(filepath.Join(g, "objects", "ab"), fi.ModTime(), fi.ModTime())
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, strings.Repeat("8", 38)), []byte("secret"), 0o600)
	os.Symlink(outside, filepath.Join(g, "objects", "cd"))
	os.Symlink(filepath.Join(outside, strings.Repeat("8", 38)), filepath.Join(g, "objects", "01", strings.Repeat("7", 38)))
	res, err := Keep(st, g, &budget)
	if err != nil || res.Linked != 0 {
		t.Fatalf("Keep linked %d (%v), want 0: %+v", res.Linked, err, res)
	}
	if _, err := os.Lstat(filepath.Join(st, "objects", "cd")); err == nil {
		t.Error("a symlinked fan-out directory was followed")
	}
}

func TestKeepBudget(t *testing.T) {
	g := fakeRepo(t)
	st := Store(t.TempDir(), g)
	budget := 2
	res, err := Keep(st, g, &budget)
	if err != nil || res.Linked != 2 || !res.Full || budget != 0 {
		t.Fatalf("Keep: %+v %v budget %d", res, err, budget)
	}
	budget = 5
	if res, err = Keep(st, g, &budget); err != nil || res.Linked != 1 || res.Full {
		t.Fatalf("next Keep: %+v %v", res, err)
	}
}

// BenchmarkKeepUnchanged is a start's cost on a repository of 5,120 loose
// objects (every fan-out directory used) already kept: nothing to link.
func BenchmarkKeepUnchanged(b *testing.B) {
	g := filepath.Join(b.TempDir(), ".git")
	old := time.Now().Add(-time.Hour)
	for i := 0; i < 256; i++ {
		d := filepath.Join(g, "objects", hex2(i))
		os.MkdirAll(d, 0o755)
		for j := 0; j < 20; j++ {
			os.WriteFile(filepath.Join(d, hex2(j)+strings.Repeat("0", 36)), nil, 0o444)
		}
		os.Chtimes(d, old, old)
	}
	os.MkdirAll(filepath.Join(g, "refs", "heads"), 0o755)
	os.WriteFile(filepath.Join(g, "refs", "heads", "main"), []byte(id1+"\n"), 0o644)
	os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	st := Store(b.TempDir(), g)
	budget := MaxLinks
	if _, err := Keep(st, g, &budget); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		budget := MaxLinks
		if res, err := Keep(st, g, &budget); err != nil || res.Linked != 0 {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

func hex2(i int) string { return string("0123456789abcdef"[i>>4]) + string("0123456789abcdef"[i&15]) }

// FuzzParse: the store's own files (packed-refs, fanout-mtimes) are read
// back at every start; whatever they hold, the parsers neither panic nor
// take a line that is not theirs.
func FuzzParse(f *testing.F) {
	f.Add([]byte(id1 + " refs/heads/main\n^" + id2 + "\n# pack-refs with: peeled\n"))
	f.Add([]byte("ab 1700000000000000000\nff -1\nzz 3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		refs := map[string]string{}
		parsePacked(b, refs)
		for r, id := range refs {
			if !isID(id) || !strings.HasPrefix(r, "refs/") {
				t.Fatalf("took %q %q", id, r)
			}
		}
		var seen [256]int64
		parseSeen(b, &seen)
	})
}

// TestKeepRefusesBadRefNames: a ref name git refuses, planted by the agent
// in the workspace's packed-refs or as a loose ref file, is not recorded:
// in the store's packed-refs it would make every fetch from the store (the
// recovery) fail ("packed refname is dangerous"). Seen failing before
// validRef (the names were recorded; the fetch failed by hand).
func TestKeepRefusesBadRefNames(t *testing.T) {
	g := fakeRepo(t)
	bad := []string{"refs/heads/../../x", "refs/heads/a*b", "refs/heads/x.lock", "refs/heads/.hid", "refs/heads/a@{1}", "refs/heads/a b", "refs/heads/a\x01"}
	var pr strings.Builder
	for _, n := range bad {
		pr.WriteString(id2 + " " + n + "\n")
	}
	os.WriteFile(filepath.Join(g, "packed-refs"), []byte(pr.String()), 0o644)
	os.WriteFile(filepath.Join(g, "refs", "heads", "x.lock"), []byte(id2+"\n"), 0o644)
	os.WriteFile(filepath.Join(g, "refs", "heads", "q?"), []byte(id2+"\n"), 0o644)
	st := Store(t.TempDir(), g)
	budget := MaxLinks
	if _, err := Keep(st, g, &budget); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(st, "packed-refs"))
	if want := id1 + " refs/heads/main\n" + id1 + " refs/jail/HEAD\n"; string(got) != want {
		t.Errorf("packed-refs:\n%q\nwant:\n%q", got, want)
	}
}

// TestKeepAgentShapedFiles: the repository's files are the agent's to
// replace. A FIFO as packed-refs, HEAD or config, or as objects/, would
// block the open for good (the start and the run's end hung, SIGTERM did
// not help); packed-refs as a symlink to /dev/zero grows without end; a
// sparse loose ref of a terabyte would be allocated whole. Each Keep and
// Lost must return at once, with the real refs still read. Seen failing
// (hanging) with os.ReadFile/os.ReadDir as before.
func TestKeepAgentShapedFiles(t *testing.T) {
	for _, c := range []struct {
		name  string
		plant func(g string) error
	}{
		{"fifo packed-refs", func(g string) error { return mkfifo(filepath.Join(g, "packed-refs")) }},
		{"fifo HEAD", func(g string) error { return mkfifo(filepath.Join(g, "HEAD")) }},
		{"fifo config", func(g string) error { return mkfifo(filepath.Join(g, "config")) }},
		{"fifo objects", func(g string) error {
			os.RemoveAll(filepath.Join(g, "objects"))
			return mkfifo(filepath.Join(g, "objects"))
		}},
		{"packed-refs to /dev/zero", func(g string) error {
			os.Remove(filepath.Join(g, "packed-refs"))
			return os.Symlink("/dev/zero", filepath.Join(g, "packed-refs"))
		}},
		{"sparse loose ref", func(g string) error {
			f, err := os.Create(filepath.Join(g, "refs", "heads", "huge"))
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(1 << 40)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := fakeRepo(t)
			if err := c.plant(g); err != nil {
				t.Skipf("plant: %v", err)
			}
			st := Store(t.TempDir(), g)
			done := make(chan string, 1)
			go func() {
				budget := MaxLinks
				res, _ := Keep(st, g, &budget)
				Lost(res.Start, g)
				done <- res.Start["refs/heads/main"]
			}()
			select {
			case main := <-done:
				if main != id1 && c.name != "fifo objects" {
					t.Errorf("refs/heads/main not read: %q", main)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Keep or Lost blocked on the planted file")
			}
		})
	}
}

// mkfifo replaces p with a FIFO.
func mkfifo(p string) error {
	os.Remove(p)
	return syscall.Mkfifo(p, 0o644)
}

// TestKeepPackedTooLarge: a packed-refs past MaxPacked (the agent's, made to
// slow every start: 16 MiB cost 1.5 s a start before the bound) is not
// read: said by PackedUnread, the loose refs still recorded.
func TestKeepPackedTooLarge(t *testing.T) {
	g := fakeRepo(t)
	var b strings.Builder
	for i := 0; b.Len() <= MaxPacked; i++ {
		fmt.Fprintf(&b, "%040x refs/tags/t%d\n", i+1, i)
	}
	os.WriteFile(filepath.Join(g, "packed-refs"), []byte(b.String()), 0o644)
	budget := MaxLinks
	res, err := Keep(Store(t.TempDir(), g), g, &budget)
	if err != nil || !res.PackedUnread || res.Start["refs/heads/main"] != id1 || res.Start["refs/tags/t0"] != "" {
		t.Fatalf("Keep: unread %v, main %q, t0 %q, %v", res.PackedUnread, res.Start["refs/heads/main"], res.Start["refs/tags/t0"], err)
	}
}
