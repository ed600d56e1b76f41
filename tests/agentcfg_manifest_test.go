//go:build linux

package tests

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The agent configuration guard's saved versions are listed in the run's
// quarantine manifest (manifest.jsonl), as the sentinel's entries are: each
// saved file has a line naming the guarded path and where the version is.
func TestAgentConfigSavedInManifest(t *testing.T) {
	e := acfgSetup(t)
	p := filepath.Join(e.home, ".claude/settings.json")
	script := `printf '{"model": "sonnet", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch /tmp/pwned-manifest"}]}]}}' > ` + p + `; sleep 0.5`
	r := sh(t, runOpts{dir: e.ws, env: e.env}, script, e.flags()...)
	mustCode(t, r, 0)

	type line struct {
		Phase, Path, Rule, Stored string
	}
	var lines []line
	saved := map[string]bool{} // the guard's NNN-path_of_file copies
	dirs, _ := filepath.Glob(filepath.Join(e.state, "jail", "quarantine", "*"))
	for _, d := range dirs {
		ents, _ := os.ReadDir(d)
		for _, en := range ents {
			if strings.HasSuffix(en.Name(), "_.claude_settings.json") {
				saved[filepath.Join(d, en.Name())] = true
			}
		}
		f, err := os.Open(filepath.Join(d, "manifest.jsonl"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var l line
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Errorf("%s: a line that is not JSON: %q", f.Name(), sc.Text())
			}
			lines = append(lines, l)
		}
		f.Close()
	}
	if len(saved) == 0 {
		t.Fatalf("the guard saved no version of %s: nothing to test\n%s", p, r.stderr)
	}
	for s := range saved {
		found := false
		for _, l := range lines {
			found = found || (l.Stored == s && l.Path == p && l.Rule != "" && (l.Phase == "run" || l.Phase == "exit"))
		}
		if !found {
			t.Errorf("the saved version %s has no manifest line naming %s; the manifests hold %+v", s, p, lines)
		}
		if b, _ := os.ReadFile(s); !strings.Contains(string(b), "pwned-manifest") {
			t.Errorf("%s does not hold the agent's version: %q", s, b)
		}
	}
}
