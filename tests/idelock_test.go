//go:build linux

package tests

// Claude Code (2.1.197) reads ~/.claude/ide/*.lock at every start and, with
// autoConnectIde in ~/.claude.json or in an IDE's terminal, connects to the
// port a lock names as an MCP server ("ide"), with the lock's authToken,
// when its workspaceFolders hold the cwd (outside an IDE's terminal the
// lock's pid is not checked). An agent that plants a lock there, and sets
// autoConnectIde, has the host's next claude session connect to its own
// server, published on the host's loopback with -p while it runs (session
// 17, lane E). The directory is read-only (watched while absent), and
// autoConnectIde is kept as on the host.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClaudeIdeLockNotPlanted(t *testing.T) {
	const plant = `
lock='{"pid":1,"workspaceFolders":["/"],"ideName":"VS Code","transport":"ws","useWebSocket":true,"authToken":"x"}'
mkdir -p ~/.claude/ide 2>/dev/null
printf '%s' "$lock" > ~/.claude/ide/8080.lock 2>/dev/null
printf '{"autoConnectIde": true}' > ~/.claude.json
sleep 0.3
exit 0
`
	for _, had := range []bool{true, false} {
		name := "ide-absent"
		if had {
			name = "ide-present"
		}
		t.Run(name, func(t *testing.T) {
			home, state, ws := workspace(t), workspace(t), workspace(t)
			ide := filepath.Join(home, ".claude", "ide")
			if err := os.MkdirAll(filepath.Dir(ide), 0o755); err != nil {
				t.Fatal(err)
			}
			if had {
				if err := os.Mkdir(ide, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cj := filepath.Join(home, ".claude.json")
			if err := os.WriteFile(cj, []byte(`{"numStartups": 1}`), 0o644); err != nil {
				t.Fatal(err)
			}
			o := runOpts{dir: ws, env: []string{"HOME=" + home, "XDG_STATE_HOME=" + state}}
			r := sh(t, o, "HOME="+home+"\n"+plant, "-w", filepath.Join(home, ".claude"), "-w", cj)
			mustCode(t, r, 0)
			if _, err := os.Lstat(filepath.Join(ide, "8080.lock")); err == nil {
				t.Errorf("the agent's lock file is in %s after the run\nstderr:\n%s", ide, r.stderr)
			}
			if !had {
				if _, err := os.Lstat(ide); err == nil {
					t.Errorf("the agent's %s is there after the run\nstderr:\n%s", ide, r.stderr)
				}
			}
			m, b := readJSONFile(t, cj)
			if m["autoConnectIde"] != nil {
				t.Errorf("autoConnectIde stays in %s after the run: %s", cj, strings.TrimSpace(string(b)))
			}
		})
	}
}
