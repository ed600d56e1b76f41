package fsrules

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOwnRootNoAbsent: a writable root of jail's own (Input.Own, a cache
// bound inside the writable ~/.claude) lists no absent names, at its top
// or nested, while the writable tree around it keeps all of its; what a
// protected name found inside the own root gets is unchanged (a startup
// file there is still kept read-only, a secret still hidden).
func TestOwnRootNoAbsent(t *testing.T) {
	base := tmp(t)
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	dir := filepath.Join(home, ".claude")
	own := filepath.Join(dir, "projects")
	mk(t, ws, "x.go")
	mk(t, home, ".claude/settings.json", ".claude/projects/p/s.jsonl", ".claude/projects/.bashrc",
		".claude/projects/.env", ".claude/projects/sub/.docker/other.json", ".claude/projects/r/.git/HEAD")
	in := Input{Workspace: ws, Home: home, Writable: []string{ws, dir, own}}
	absentIn := func(plan Plan) map[string]bool {
		got := map[string]bool{}
		for _, a := range plan.Absent {
			got[a.Path] = true
		}
		return got
	}
	// Without Own the cache's top is watched like any writable root's
	// (this is what the test would see were Own ignored).
	plan, err := Expand(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := absentIn(plan); !got[filepath.Join(own, ".ssh")] {
		t.Fatalf("without Own, %s/.ssh is not absent: the test checks nothing", own)
	}
	in.Own = []string{own}
	plan, err = Expand(in)
	if err != nil {
		t.Fatal(err)
	}
	got := absentIn(plan)
	for p := range got {
		if p == own || strings.HasPrefix(p, own+"/") {
			t.Errorf("absent name in jail's own root: %s", p)
		}
	}
	for _, p := range []string{filepath.Join(dir, ".ssh"), filepath.Join(dir, ".envrc"), filepath.Join(ws, ".envrc"), filepath.Join(ws, ".bashrc")} {
		if !got[p] {
			t.Errorf("%s not absent: Own dropped a watch outside its root", p)
		}
	}
	masks := map[string]Kind{}
	for _, m := range plan.Masks {
		masks[m.Path] = m.Kind
	}
	if k, ok := masks[filepath.Join(own, ".bashrc")]; !ok || k != ReadOnly {
		t.Errorf("%s/.bashrc not kept read-only in jail's own root: %v", own, masks)
	}
	if k, ok := masks[filepath.Join(own, ".env")]; !ok || k != Hide {
		t.Errorf("%s/.env not hidden in jail's own root: %v", own, masks)
	}
	if !strings.Contains(strings.Join(plan.Found, "\n"), filepath.Join(own, "r", ".git")) {
		t.Errorf("the walk did not enter jail's own root: Found %v", plan.Found)
	}
}
