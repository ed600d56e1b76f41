package gitguard

import (
	"os"
	"path/filepath"
	"testing"
)

// TestScanLinkedObjectsAndHooks: the scan resolves objects/pack and hooks
// below the (resolved) git dir one component at a time (resolveBelow, not
// EvalSymlinks from /); a symlink on the way is still followed: a linked
// objects/ (not only pack/) has its packs protected where they are, one
// leading outside the writable trees is left, and a linked hooks/ is read
// where it leads (a file its hook runs is protected).
func TestScanLinkedObjectsAndHooks(t *testing.T) {
	ws := tmp(t)
	repo(t, ws)
	git(t, ws, "gc", "-q")
	gd := filepath.Join(ws, ".git")
	// objects/ moved aside in the workspace, a link left where it was.
	if err := os.Rename(filepath.Join(gd, "objects"), filepath.Join(ws, "objs")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../objs", filepath.Join(gd, "objects")); err != nil {
		t.Fatal(err)
	}
	// hooks/ moved aside, its pre-commit running a script of the workspace.
	if err := os.Rename(filepath.Join(gd, "hooks"), filepath.Join(ws, "hk")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, "hk"), filepath.Join(gd, "hooks")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "hk", "pre-commit"), "#!/bin/sh\n./tools/check.sh\n", 0o755)
	write(t, filepath.Join(ws, "tools", "check.sh"), "#!/bin/sh\n", 0o755)

	p := scan(t, ws)
	packs, _ := filepath.Glob(filepath.Join(ws, "objs", "pack", "pack-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("git gc made %d packs", len(packs))
	}
	got := map[string]bool{}
	for _, h := range p.History {
		got[h.Path] = true
	}
	if !got[packs[0]] || len(got) != 2 {
		t.Errorf("history %v, want the pack and index under the linked objects/ (%s)", p.History, packs[0])
	}
	ro := paths(p.ReadOnly, ws)
	if m := has(ro, "tools/check.sh", "hk"); len(m) > 0 {
		t.Errorf("read-only lacks %v (a linked hooks/ not read where it leads?): %v", m, ro)
	}

	// objects/ leading outside the writable trees: nothing taken there.
	out := tmp(t)
	os.Remove(filepath.Join(gd, "objects"))
	if err := os.Rename(filepath.Join(ws, "objs"), filepath.Join(out, "objs")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, "objs"), filepath.Join(gd, "objects")); err != nil {
		t.Fatal(err)
	}
	if p := scan(t, ws); len(p.History) != 0 {
		t.Errorf("objects/ outside the writable trees: history %v", p.History)
	}
}
