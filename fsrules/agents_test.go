package fsrules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Agent directories given with --write: a protected name that starts with
// the directory's own name (.claude/commands/ under -w ~/.claude) is looked
// for inside it, and reported absent there; a --write file has no absent
// names under it. ~/.claude/plugins/, which Claude Code makes at its first
// start, is not absent (watched) but named in a note; a .claude/plugins/
// elsewhere is.
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
		if a.Path == filepath.Join(claude, "commands") {
			found = true
		}
		if a.Path == filepath.Join(claude, "plugins") {
			t.Errorf("~/.claude/plugins is watched: Claude Code's first start would be quarantined")
		}
		if a.Path == filepath.Join(claude, ".claude/commands") || a.Path == filepath.Join(claude, ".claude/plugins") {
			t.Errorf("absent path doubled the directory name: %s", a.Path)
		}
		if len(a.Path) > len(file) && a.Path[:len(file)+1] == file+"/" {
			t.Errorf("absent path under a file: %s", a.Path)
		}
	}
	if !found {
		t.Errorf("~/.claude/commands not reported absent: %+v", plan.Absent)
	}
	noted := false
	for _, n := range plan.Notes {
		noted = noted || strings.HasPrefix(n, claude+": plugins/ does not exist: Claude Code creates it")
	}
	if !noted {
		t.Errorf("no note for the missing ~/.claude/plugins: %q", plan.Notes)
	}
	// Not the agent's home: a .claude/plugins/ made there is watched.
	other := filepath.Join(t.TempDir(), ".claude")
	os.MkdirAll(other, 0o755)
	plan, err = Expand(Input{Home: home, Writable: []string{other}})
	if err != nil {
		t.Fatal(err)
	}
	found = false
	for _, a := range plan.Absent {
		found = found || a.Path == filepath.Join(other, "plugins")
	}
	if !found {
		t.Errorf("%s/plugins (not under HOME) not reported absent: %+v", other, plan.Absent)
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
