package pastwrite

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRecordLoadHolds(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "state", "jail", "written-trees")
	a := filepath.Join(base, "a")
	b := filepath.Join(base, "b")
	for _, d := range []string{a, b, filepath.Join(a, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Load(file)
	if err != nil {
		t.Fatalf("no record: %v", err)
	}
	if _, ok := s.Holds(filepath.Join(a, "l")); ok {
		t.Fatal("an empty record holds a tree")
	}
	if err := Record(file, nil, []string{a, filepath.Join(base, "absent"), "relative"}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("record: %v %v", fi, err)
	}
	if s, err = Load(file); err != nil {
		t.Fatal(err)
	}
	if got := s.Trees(); len(got) != 1 || got[0].Path != a {
		t.Fatalf("trees %v", got)
	}
	for p, want := range map[string]bool{
		filepath.Join(a, "l"):        true,
		filepath.Join(a, "sub", "l"): true,
		a:                            false, // the tree itself
		filepath.Join(b, "l"):        false,
		base + "/a2/l":               false,
	} {
		if _, got := s.Holds(p); got != want {
			t.Errorf("Holds(%s) = %v, want %v", p, got, want)
		}
	}
	// Covers counts the tree itself too.
	for p, want := range map[string]bool{a: true, filepath.Join(a, "bin"): true, b: false, base + "/a2": false} {
		if got := s.Covers(p); got != want {
			t.Errorf("Covers(%s) = %v, want %v", p, got, want)
		}
	}
	// The same tree by another name (here a symlink to it; a bind mount
	// is the same to stat): by identity.
	other := filepath.Join(base, "other")
	if err := os.Symlink(a, other); err != nil {
		t.Fatal(err)
	}
	if tree, ok := s.Holds(filepath.Join(other, "sub", "l")); !ok || tree != a {
		t.Errorf("by identity: %q %v", tree, ok)
	}
	// An identity whose tree's path leads elsewhere now is stale (an
	// inode handed out again): not a match.
	stale := &Set{trees: []Tree{{Path: filepath.Join(base, "gone"), Dev: 0, Ino: 0}}, ids: map[id]string{}}
	bi, _ := idOf(b)
	stale.trees[0].Dev, stale.trees[0].Ino = bi.dev, bi.ino
	stale.ids[bi] = stale.trees[0].Path
	if _, ok := stale.Holds(filepath.Join(b, "l")); ok {
		t.Error("a stale identity matched")
	}
	// Nothing written when nothing is new.
	before, _ := os.Stat(file)
	if err := Record(file, nil, []string{a}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(file); !os.SameFile(before, after) {
		t.Error("rewritten with nothing new")
	}
	// A new tree: written, and a tree gone since is pruned.
	if err := os.RemoveAll(a); err != nil {
		t.Fatal(err)
	}
	if err := Record(file, nil, []string{b}); err != nil {
		t.Fatal(err)
	}
	if s, err = Load(file); err != nil {
		t.Fatal(err)
	}
	if got := s.Trees(); len(got) != 1 || got[0].Path != b {
		t.Fatalf("after prune: %v", got)
	}
	// A tree whose path leads to another directory now (replaced, or a
	// device numbered anew) is kept, its identity renewed.
	if err := os.Rename(b, b+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(b, 0o755); err != nil {
		t.Fatal(err)
	}
	c := filepath.Join(base, "c")
	if err := os.Mkdir(c, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Record(file, nil, []string{c}); err != nil {
		t.Fatal(err)
	}
	if s, err = Load(file); err != nil {
		t.Fatal(err)
	}
	bi2, _ := idOf(b)
	if got := s.Trees(); len(got) != 2 || got[0].Path != b || (id{got[0].Dev, got[0].Ino}) != bi2 || got[1].Path != c {
		t.Fatalf("after renewal: %v", got)
	}
}

// A corrupt record is refused by Load and Record alike, with the file's
// name and the fix, and left as it is.
func TestCorruptRecord(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "written-trees")
	bad := []byte(Header + "\n1 2 \"relative\"\n")
	if err := os.WriteFile(file, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(file); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "remove it") {
		t.Errorf("Load: %v", err)
	}
	if err := Record(file, nil, []string{dir}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Record: %v", err)
	}
	if got, _ := os.ReadFile(file); string(got) != string(bad) {
		t.Errorf("rewritten: %q", got)
	}
	// Larger than MaxSize: read no further than that, refused.
	big := append([]byte(Header+"\n"), []byte(strings.Repeat("1 2 \"/a\"\n", MaxSize/8+10))...)
	if err := os.WriteFile(file, big, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(file); !errors.Is(err, ErrCorrupt) {
		t.Errorf("too large: %v", err)
	}
}

func TestMergeBounds(t *testing.T) {
	dir := t.TempDir()
	var old []Tree
	for i := 0; i < MaxTrees; i++ {
		p := filepath.Join(dir, itoa(i))
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		i, _ := idOf(p)
		old = append(old, Tree{p, i.dev, i.ino})
	}
	n := filepath.Join(dir, "new")
	if err := os.Mkdir(n, 0o755); err != nil {
		t.Fatal(err)
	}
	i, _ := idOf(n)
	out := merge(old, []Tree{{n, i.dev, i.ino}})
	if len(out) != MaxTrees || out[len(out)-1].Path != n || out[0].Path != old[1].Path {
		t.Fatalf("bounded: %d %v %v", len(out), out[0], out[len(out)-1])
	}
	// Long paths: the file stays within MaxSize.
	long := make([]Tree, MaxTrees)
	for k := range long {
		long[k] = Tree{"/" + strings.Repeat("\x01", 1000) + "/" + itoa(k), 1, 1}
	}
	fit := merge(nil, long)
	if len(Format(fit)) > MaxSize {
		t.Fatalf("%d bytes", len(Format(fit)))
	}
	if _, err := Parse(Format(fit)); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkStart is what a start adds when its trees are recorded already:
// one Load and one Record that writes nothing.
func BenchmarkStart(b *testing.B) {
	for _, n := range []int{20, MaxTrees} {
		b.Run(itoa(n), func(b *testing.B) { benchStart(b, n) })
	}
}

func benchStart(b *testing.B, n int) {
	dir := b.TempDir()
	file := filepath.Join(dir, "written-trees")
	var trees []string
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, "some-project-directory-"+itoa(i))
		if err := os.Mkdir(p, 0o755); err != nil {
			b.Fatal(err)
		}
		trees = append(trees, p)
	}
	if err := Record(file, nil, trees); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Load(file)
		if err != nil {
			b.Fatal(err)
		}
		if err := Record(file, s, trees[:2]); err != nil {
			b.Fatal(err)
		}
	}
}
