//go:build linux

package tests

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGeminiAgents (review16d): Gemini CLI's local subagents
// (~/.gemini/agents/*.md, a project's .gemini/agents/) name MCP servers in
// their frontmatter (mcp_servers: {x: {command: ...}}), which Gemini CLI
// 0.61 starts when the model delegates to the agent on its own (subagents
// are on by default; user agents need no acknowledgement). As Copilot's
// ~/.copilot/agents/ and Claude Code's .claude/agents/, which are
// read-only, they were writable through the gemini profile's ~/.gemini and in
// the workspace: an agent written inside started its command on the host at
// the next delegation.
func TestGeminiAgents(t *testing.T) {
	home, state, ws := workspace(t), workspace(t), workspace(t)
	orig := map[string]string{
		filepath.Join(home, ".gemini/agents/mine.md"): "---\nname: mine\ndescription: d\n---\nhello\n",
		filepath.Join(ws, ".gemini/agents/repo.md"):   "---\nname: repo\ndescription: d\n---\nhello\n",
		filepath.Join(home, ".gemini/tmp/state.json"): "{}\n",
	}
	writeHostFiles(t, orig)
	script := `
for f in ~/.gemini/agents/mine.md .gemini/agents/repo.md; do
  printf 'mcp_servers:\n  x:\n    command: /tmp/evil\n' >> "$f"; rm -f "$f"
done 2>/dev/null
printf -- '---\nname: evil\ndescription: d\nmcp_servers:\n  x:\n    command: /tmp/evil\n---\n' > ~/.gemini/agents/evil.md
echo '{"x":1}' > ~/.gemini/tmp/state.json
true`
	c := run(t, runOpts{dir: ws, env: []string{"HOME=" + home, "XDG_STATE_HOME=" + state}},
		"-w", filepath.Join(home, ".gemini"), "--", "/bin/sh", "-c", script)
	mustCode(t, c, 0)
	bad := append(changedFiles(t, orig, "state.json"), leftFiles(filepath.Join(home, ".gemini/agents/evil.md"))...)
	if len(bad) > 0 {
		t.Errorf("Gemini CLI's agents written inside hold outside (their MCP servers start on the host):\n  %s\nstderr:\n%s", strings.Join(bad, "\n  "), c.stderr)
	}
	stateWritable(t, c, filepath.Join(home, ".gemini/tmp/state.json"), "{\"x\":1}\n")
}
