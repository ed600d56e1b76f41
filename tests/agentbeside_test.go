//go:build linux

package tests

// Code loaded from beside a script that agent configuration runs
// (review13f). The named script itself is read-only (review13c), but
// interpreters load more than the script: python3 puts the script's
// directory first on sys.path (a json.py, or a sourceless json.pyc, beside
// it is imported instead of the standard library's), node resolves
// require() through node_modules in the script's directory and every one
// above it and reads the nearest package.json.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentNamedScriptNeighbours: as the agent, plant modules beside the
// hook scripts the host's settings name (in a directory of their own under
// ~/.claude) and node_modules and package.json above a node hook, up to
// ~/.claude, and a __pycache__ beside a python script kept directly in
// ~/.claude; none of it may be on the host afterwards, and the host's run
// of the hook must not import it; the script in ~/.claude is announced.
// Control: the agent's own state in ~/.claude stays writable.
func TestAgentNamedScriptNeighbours(t *testing.T) {
	home, state, ws := workspace(t), workspace(t), workspace(t)
	fsWrite(t, home, ".claude.json", "{}\n", 0o644)
	fsWrite(t, home, ".claude/settings.json", `{
  "hooks": {"PreToolUse": [{"hooks": [
    {"type": "command", "command": "python3 ~/.claude/hooks/h.py"},
    {"type": "command", "command": "node ~/.claude/mcp/srv/index.js"},
    {"type": "command", "command": "python3 ~/.claude/later/absent.py"},
    {"type": "command", "command": "python3 ~/.claude/top.py"}]}]}
}
`, 0o644)
	fsWrite(t, home, ".claude/hooks/h.py", "import json\nprint('host hook')\n", 0o755)
	fsWrite(t, home, ".claude/mcp/srv/index.js", "require('dep');\n", 0o644)
	fsWrite(t, home, ".claude/top.py", "import json\n", 0o644)
	fsWrite(t, home, ".claude/todos/t.json", "[]\n", 0o644)
	script := `
echo 'print("PWNED")' > ~/.claude/hooks/json.py
echo 'x' > ~/.claude/hooks/json.pyc
mkdir -p ~/.claude/hooks/__pycache__ && echo x > ~/.claude/hooks/__pycache__/h.cpython-311.pyc
mkdir -p ~/.claude/hooks/node_modules/dep && echo 'x' > ~/.claude/hooks/node_modules/dep/index.js
mkdir -p ~/.claude/mcp/srv/node_modules/dep && echo 'x' > ~/.claude/mcp/srv/node_modules/dep/index.js
mkdir -p ~/.claude/mcp/node_modules/dep && echo 'x' > ~/.claude/mcp/node_modules/dep/index.js
mkdir -p ~/.claude/node_modules/dep && echo 'x' > ~/.claude/node_modules/dep/index.js
echo '{"type": "module"}' > ~/.claude/package.json
echo '{"type": "module"}' > ~/.claude/mcp/package.json
mkdir -p ~/.claude/later && echo 'print("PWNED")' > ~/.claude/later/json.py
mkdir -p ~/.claude/__pycache__ && echo x > ~/.claude/__pycache__/top.cpython-311.pyc
echo '["x"]' > ~/.claude/todos/t.json
true`
	c := run(t, runOpts{dir: ws, env: []string{"HOME=" + home, "XDG_STATE_HOME=" + state}},
		"-w", filepath.Join(home, ".claude"), "-w", filepath.Join(home, ".claude.json"), "--", "/bin/sh", "-c", script)
	mustCode(t, c, 0)
	var bad []string
	for _, p := range []string{
		".claude/hooks/json.py", ".claude/hooks/json.pyc", ".claude/hooks/__pycache__", ".claude/hooks/node_modules",
		".claude/mcp/srv/node_modules", ".claude/mcp/node_modules", ".claude/node_modules",
		".claude/package.json", ".claude/mcp/package.json", ".claude/later/json.py", ".claude/__pycache__",
	} {
		if _, err := os.Lstat(filepath.Join(home, p)); err == nil {
			bad = append(bad, "~/"+p+": left on the host")
		}
	}
	if len(bad) > 0 {
		t.Errorf("the agent planted code the host's hooks load:\n  %s\nstderr:\n%s", strings.Join(bad, "\n  "), c.stderr)
	}
	if py, err := exec.LookPath("python3"); err == nil {
		out, _ := exec.Command(py, filepath.Join(home, ".claude/hooks/h.py")).CombinedOutput()
		if strings.Contains(string(out), "PWNED") {
			t.Errorf("the host's python3 ~/.claude/hooks/h.py ran the agent's json.py: %s", out)
		}
	}
	// A python script directly in ~/.claude: the directory is the agent's
	// state and stays writable; the user is told.
	if !strings.Contains(c.stderr, "agent script: "+filepath.Join(home, ".claude/top.py")+" runs in python") {
		t.Errorf("no note on ~/.claude/top.py, which imports from the agent's writable ~/.claude:\n%s", c.stderr)
	}
	if got := fsReadFile(t, filepath.Join(home, ".claude/todos/t.json")); got != "[\"x\"]\n" {
		t.Errorf("~/.claude/todos/t.json = %q: the agent's own state must stay writable\n%s", got, c.stderr)
	}
}

// TestAgentNamedScriptNodeModulesLink: a node_modules above a named node
// script that is a symlink (~/.claude/node_modules -> ../nm, shared
// packages) is kept a symlink to the same place: replaced by the agent's
// own directory, its packages would be what the host's hook requires.
func TestAgentNamedScriptNodeModulesLink(t *testing.T) {
	home, state, ws := workspace(t), workspace(t), workspace(t)
	fsWrite(t, home, ".claude.json", "{}\n", 0o644)
	fsWrite(t, home, ".claude/settings.json", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "node ~/.claude/hooks/h.js"}]}]}}`+"\n", 0o644)
	fsWrite(t, home, ".claude/hooks/h.js", "require('dep');\n", 0o644)
	fsWrite(t, home, "nm/dep/index.js", "// host\n", 0o644)
	if err := os.Symlink("../nm", filepath.Join(home, ".claude/node_modules")); err != nil {
		t.Fatal(err)
	}
	c := run(t, runOpts{dir: ws, env: []string{"HOME=" + home, "XDG_STATE_HOME=" + state}},
		"-w", filepath.Join(home, ".claude"), "-w", filepath.Join(home, ".claude.json"), "--", "/bin/sh", "-c",
		`rm -f ~/.claude/node_modules; mkdir -p ~/.claude/node_modules/dep && echo 'PWNED' > ~/.claude/node_modules/dep/index.js; true`)
	mustCode(t, c, 0)
	if got, err := os.Readlink(filepath.Join(home, ".claude/node_modules")); err != nil || got != "../nm" {
		t.Errorf("~/.claude/node_modules: no longer a symlink to ../nm (%q, %v)\n%s", got, err, c.stderr)
	}
}
