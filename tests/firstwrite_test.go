//go:build linux

package tests

// A script directory jail makes read-only (a hook's, an MCP server's) makes
// a hook or server that creates its log or state there for the first time
// fail inside, which jail cannot see: the start says so, with the fixes.
// Session 17 (lane E): a hook's directory got no line, and a server's got
// one at every start. Now both get one, once per directory (remembered in
// jail's state directory); --dry-run says it every time.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScriptDirFirstWriteSaidOnce(t *testing.T) {
	home, state, ws := workspace(t), workspace(t), workspace(t)
	c := filepath.Join(home, ".claude")
	for p, s := range map[string]string{
		".claude/settings.json":    `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "sh ~/.claude/hooks/h.sh"}]}]}}`,
		".claude/hooks/h.sh":       "true\n",
		".claude/mcp/srv/index.js": "//\n",
		".claude.json":             `{"mcpServers": {"s": {"command": "node", "args": ["~/.claude/mcp/srv/index.js"]}}}`,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(home, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := runOpts{dir: ws, env: []string{"HOME=" + home, "XDG_STATE_HOME=" + state}}
	flags := []string{"-w", c, "-w", filepath.Join(home, ".claude.json")}
	line := func(stderr, dir string) int {
		return strings.Count(stderr, "agent script: "+filepath.Join(c, dir)+" is read-only (")
	}
	dry := run(t, o, append(append([]string{"--dry-run"}, flags...), "--", "/bin/true")...)
	mustCode(t, dry, 0)
	first := run(t, o, append(flags, "--", "/bin/true")...)
	mustCode(t, first, 0)
	second := run(t, o, append(flags, "--", "/bin/true")...)
	mustCode(t, second, 0)
	for _, d := range []string{"hooks", "mcp/srv"} {
		if n := line(first.stderr, d); n != 1 {
			t.Errorf("first start: the line on %s said %d times, want once\nstderr:\n%s", d, n, first.stderr)
		}
		if n := line(second.stderr, d); n != 0 {
			t.Errorf("second start: the line on %s said again\nstderr:\n%s", d, second.stderr)
		}
		if n := line(dry.stdout+dry.stderr, d); n == 0 {
			t.Errorf("--dry-run does not say the line on %s\nstdout:\n%s\nstderr:\n%s", d, dry.stdout, dry.stderr)
		}
	}
	// Another run after --dry-run and two starts: a dry run records nothing.
	dry2 := run(t, o, append(append([]string{"--dry-run"}, flags...), "--", "/bin/true")...)
	if line(dry2.stdout+dry2.stderr, "hooks") == 0 {
		t.Errorf("a later --dry-run does not say the line on hooks\nstdout:\n%s\nstderr:\n%s", dry2.stdout, dry2.stderr)
	}
}

// Only the first-write lines are said once: another line whose path holds
// their words is said at every start. The record used to take any note
// holding the words for one said once, and the line went quiet from the
// second start on (session 18, lane F): a directory an earlier run's agent
// named "x for the first time fails inside", then made unreadable, was
// hidden at every start but said at the first only. As root (which reads a
// mode-0 directory) the line is the one on a workspace of another owner.
// Seen failing on main: the second start did not say it.
func TestSaidOnceExactNotes(t *testing.T) {
	home, state, ws := workspace(t), workspace(t), workspace(t)
	d := filepath.Join(ws, "x for the first time fails inside")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	want := "unreadable directory " + d
	if os.Geteuid() == 0 {
		if err := os.Chown(d, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		ws, want = d, "read-only: "+d
	} else {
		if err := os.Chmod(d, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(d, 0o755) })
	}
	o := runOpts{dir: ws, env: []string{"HOME=" + home, "XDG_STATE_HOME=" + state}}
	for i := range 2 {
		r := run(t, o, "--", "/bin/true")
		mustCode(t, r, 0)
		if !strings.Contains(r.stderr, want) {
			t.Fatalf("start %d does not say %q\nstderr:\n%s", i+1, want, r.stderr)
		}
	}
}
