package fsrules

import (
	"os"
	"path/filepath"
	"testing"
)

// Agent directories given with --write: a protected name that starts with
// the directory's own name (.claude/plugins/ under -w ~/.claude) is looked
// for inside it, and reported absent there; a --write file has no absent
// names under it.
func TestAbsentInsideAgentDir(t *testing.T) {
	home := t.TempDir()
	claude := filepath.Join(home, ".claude")
	os.MkdirAll(claude, 0o755)
	file := filepath.Join(home, ".claude.json")
	os.WriteFile(file, []byte("{}"), 0o644)
	plan, err := Expand(Input{Home: home, Writable: []string{claude, file}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range plan.Absent {
		if a.Path == filepath.Join(claude, "plugins") {
			found = true
		}
		if a.Path == filepath.Join(claude, ".claude/plugins") {
			t.Errorf("absent path doubled the directory name: %s", a.Path)
		}
		if len(a.Path) > len(file) && a.Path[:len(file)+1] == file+"/" {
			t.Errorf("absent path under a file: %s", a.Path)
		}
	}
	if !found {
		t.Errorf("~/.claude/plugins not reported absent: %+v", plan.Absent)
	}

	// Present: read-only.
	os.MkdirAll(filepath.Join(claude, "plugins"), 0o755)
	plan, err = Expand(Input{Home: home, Writable: []string{claude}})
	if err != nil {
		t.Fatal(err)
	}
	ro := false
	for _, m := range plan.Masks {
		ro = ro || (m.Path == filepath.Join(claude, "plugins") && m.Kind == ReadOnly)
	}
	if !ro {
		t.Errorf("~/.claude/plugins is not read-only: %+v", plan.Masks)
	}
}
