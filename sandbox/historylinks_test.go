//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/gitguard"
	"github.com/jail-sandbox/jail/gitkeep"
)

// TestHistoryLinks: a pack's other names in the writable trees are
// read-only as the pack is, those outside them are not looked for, and
// past maxHistoryLinks the rest are said. A pack of one name costs no walk.
func TestHistoryLinks(t *testing.T) {
	mounts := planMounts(t) // the walk as the plan makes it: by d_ino where trusted
	base := t.TempDir()
	ws, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
	pd := filepath.Join(ws, ".git", "objects", "pack")
	for _, d := range []string{pd, out, filepath.Join(ws, "deep", "er")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	pk, one := filepath.Join(pd, "pack-a.pack"), filepath.Join(pd, "pack-b.pack")
	os.WriteFile(pk, []byte("PACK"), 0o444)
	os.WriteFile(one, []byte("PACK"), 0o444)
	hist := []gitguard.Protect{{Path: pk, Why: gitguard.HistoryWhy}, {Path: one, Why: gitguard.HistoryWhy}}
	if got, notes := historyLinks(hist, []string{ws}, "", nil, mounts, nil); len(got)+len(notes) != 0 {
		t.Fatalf("packs of one name: %v %v", got, notes)
	}
	os.Link(pk, filepath.Join(ws, "deep", "er", "x"))
	os.Link(pk, filepath.Join(out, "y"))
	got, notes := historyLinks(hist, []string{ws, filepath.Join(ws, "deep")}, "", nil, mounts, nil)
	if len(got) != 1 || got[0].Path != filepath.Join(ws, "deep", "er", "x") || got[0].Why != gitguard.HistoryWhy || len(notes) != 0 {
		t.Fatalf("one other name in the tree: %v %v", got, notes)
	}
	// Whole pack directory read-only (past WholePackDir packs).
	if got, _ := historyLinks([]gitguard.Protect{{Path: pd, Dir: true, Why: gitguard.HistoryWhy}}, []string{ws}, "", nil, mounts, nil); len(got) != 1 {
		t.Fatalf("pack dir read-only whole: %v", got)
	}
	for i := 0; i < maxHistoryLinks+5; i++ {
		os.Link(pk, filepath.Join(ws, fmt.Sprintf("l%03d", i)))
	}
	got, notes = historyLinks(hist, []string{ws}, "", nil, mounts, nil)
	if len(got) != maxHistoryLinks || len(notes) != 1 || !strings.Contains(notes[0], fmt.Sprintf("%d other names", maxHistoryLinks+6)) {
		t.Fatalf("past the bound: %d protected, notes %v", len(got), notes)
	}
}

// TestHistoryLinksKept: a pack's link in its git-kept store
// (gitkeep.KeepPacks) is no other name to protect, but one more name in a
// writable tree still is (a link count of 3: the store's link hides
// nothing). Seen failing with the store's link skipped at any link count:
// the tree's name was not protected.
func TestHistoryLinksKept(t *testing.T) {
	mounts := planMounts(t)
	base := t.TempDir()
	ws, kept := filepath.Join(base, "ws"), filepath.Join(base, "state", "git-kept")
	g := filepath.Join(ws, ".git")
	pd := filepath.Join(g, "objects", "pack")
	sp := filepath.Join(gitkeep.Store(kept, g), "objects", "pack")
	for _, d := range []string{pd, sp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	pk := filepath.Join(pd, "pack-a.pack")
	os.WriteFile(pk, []byte("PACK"), 0o444)
	if err := os.Link(pk, filepath.Join(sp, "pack-a.pack")); err != nil {
		t.Fatal(err)
	}
	hist := []gitguard.Protect{{Path: pk, Why: gitguard.HistoryWhy}}
	if got, notes := historyLinks(hist, []string{ws}, kept, nil, mounts, nil); len(got)+len(notes) != 0 {
		t.Fatalf("a pack and its store's link: %v %v", got, notes)
	}
	x := filepath.Join(ws, "x")
	os.Link(pk, x)
	if got, _ := historyLinks(hist, []string{ws}, kept, nil, mounts, nil); len(got) != 1 || got[0].Path != x {
		t.Fatalf("the store's link and a name in the tree: %v, want %s", got, x)
	}
}

// BenchmarkHistoryLinks: the start's cost with MaxHistoryPacks packs of
// one name each (an lstat per pack file, no walk).
func BenchmarkHistoryLinks(b *testing.B) {
	var mounts []fsrules.Mount
	pd := filepath.Join(b.TempDir(), ".git", "objects", "pack")
	os.MkdirAll(pd, 0o755)
	var hist []gitguard.Protect
	for i := 0; i < gitguard.MaxHistoryPacks; i++ {
		for _, ext := range []string{".idx", ".pack"} {
			p := filepath.Join(pd, fmt.Sprintf("pack-%040d%s", i, ext))
			os.WriteFile(p, []byte("PACK"), 0o444)
			hist = append(hist, gitguard.Protect{Path: p, Why: gitguard.HistoryWhy})
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if got, _ := historyLinks(hist, []string{filepath.Dir(pd)}, "", nil, mounts, nil); len(got) != 0 {
			b.Fatal(got)
		}
	}
}

// planMounts is the host's mount table as the plan reads it.
func planMounts(t *testing.T) []fsrules.Mount {
	t.Helper()
	b, err := readMountinfo()
	if err != nil || b == nil {
		t.Fatalf("mountinfo: %v", err)
	}
	return fsrules.ParseMountinfo(b)
}
