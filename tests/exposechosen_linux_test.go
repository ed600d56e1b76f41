package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An agent that plants a link in the workspace's .venv/bin (first on an
// activated venv's PATH) chooses where the next run's command leads. jail
// showed that file's install tree read-only to make the command runnable:
// a link to ~/src/other/bin/tool showed all of ~/src/other, a private tree
// no grant names. The link is now followed only into the tree the user's
// own PATH gives the same name; the planted one is refused, with a note.
func TestExposeRefusesPlantedLink(t *testing.T) {
	home, env := everydayHome(t)
	ws := workspace(t)
	// Another private project with a program in its bin/.
	writeExec(t, filepath.Join(home, "src/other/bin/tool"), "#!/bin/sh\necho TOOL-RAN\ncat \"$(dirname \"$0\")/../private.txt\"\n")
	writeFile(t, filepath.Join(home, "src/other/private.txt"), "OTHER-PRIVATE\n")
	// What the agent left in the workspace during an earlier run.
	venv := filepath.Join(ws, ".venv/bin")
	os.MkdirAll(venv, 0o755)
	if err := os.Symlink(filepath.Join(home, "src/other/bin/tool"), filepath.Join(venv, "python3")); err != nil {
		t.Fatal(err)
	}
	writeExec(t, filepath.Join(ws, "bin/run"), "#!"+filepath.Join(home, "src/other/bin/tool")+"\n")
	env = append(env, "PATH="+venv+":"+filepath.Join(ws, "bin")+":/usr/local/bin:/usr/bin:/bin")

	for _, cmd := range []string{"python3", "run"} {
		r := run(t, runOpts{env: env, dir: ws}, "--", cmd)
		if strings.Contains(r.stdout, "OTHER-PRIVATE") || strings.Contains(r.stdout, "TOOL-RAN") {
			t.Fatalf("%s: a link (or #! line) the sandbox wrote showed a private tree:\n%s\nstderr: %s", cmd, r.stdout, r.stderr)
		}
		// (python3 then runs from /usr/bin, the next PATH directory.)
		if !strings.Contains(r.stderr, "reached through a place the sandbox can write") {
			t.Fatalf("%s: exit %d, and no note says why the command is not shown:\n%s\nstdout: %s", cmd, r.code, r.stderr, r.stdout)
		}
	}
}
