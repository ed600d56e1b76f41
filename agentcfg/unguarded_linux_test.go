package agentcfg

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Unguardable names what New would leave out for what is at the path, and
// only that: a regular file, a symlink, an absent path stay guarded.
func TestUnguardable(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, f func(p string) error) Target {
		p := filepath.Join(root, name)
		if f != nil {
			if err := f(p); err != nil {
				t.Fatal(err)
			}
		}
		return Target{Path: p, Root: root}
	}
	fifo := mk("fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) })
	dir := mk("dir", func(p string) error { return os.Mkdir(p, 0o755) })
	big := mk("big", func(p string) error { return os.WriteFile(p, nil, 0o644) })
	if err := os.Truncate(big.Path, MaxSize+1); err != nil {
		t.Fatal(err)
	}
	edge := mk("edge", func(p string) error { return os.WriteFile(p, nil, 0o644) })
	if err := os.Truncate(edge.Path, MaxSize); err != nil {
		t.Fatal(err)
	}
	plain := mk("plain", func(p string) error { return os.WriteFile(p, []byte("{}"), 0o644) })
	link := mk("link", func(p string) error { return os.Symlink("/nonexistent", p) })
	absent := mk("absent", nil)
	inPlace := mk("inplace", func(p string) error { return syscall.Mkfifo(p, 0o644) })
	inPlace.Root, inPlace.InPlace = inPlace.Path, true

	ok, bad := Unguardable([]Target{fifo, dir, big, edge, plain, link, absent, inPlace})
	want := map[string]struct {
		what string
		dir  bool
	}{fifo.Path: {"a FIFO", false}, dir.Path: {"a directory", true}, big.Path: {"larger than 67108864 bytes", false}, inPlace.Path: {"a FIFO", false}}
	if len(bad) != len(want) {
		t.Fatalf("bad = %+v, want %v", bad, want)
	}
	for _, u := range bad {
		w, found := want[u.Target.Path]
		if !found || w.what != u.What || w.dir != u.Dir {
			t.Errorf("%s: %q dir=%v, want %+v", u.Target.Path, u.What, u.Dir, w)
		}
	}
	if len(ok) != 4 {
		t.Errorf("ok = %+v, want edge, plain, link, absent", ok)
	}
}
