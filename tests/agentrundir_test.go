//go:build linux

package tests

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentNamedRunFromDir (scriptdirs2): a hook that moves into a
// directory under ~/.claude before it runs a program (`cd
// ~/.claude/hooks && make`, `cd D && npm test`, `make -C D`) names no
// script, but the program runs what it reads there. As the agent,
// rewrite the Makefile and package.json those hooks read (in ~/.claude
// itself too, which stays writable: `cd ~/.claude && make`), create the
// absent directory a hook cds into with a Makefile, and add a hook of
// the same shape to the settings; none of it may be on the host
// afterwards. Seen failing on main's binary: the Makefile, package.json
// and later/Makefile held the agent's versions (`make` on the host then
// ran `touch /tmp/pwned`). Control: the agent's own state in ~/.claude
// stays writable.
func TestAgentNamedRunFromDir(t *testing.T) {
	home, ws := workspace(t), workspace(t)
	fsWrite(t, home, ".claude.json", "{}\n", 0o644)
	settings := `{
  "hooks": {"Stop": [{"hooks": [
    {"type": "command", "command": "cd ~/.claude/hooks && make -s"},
    {"type": "command", "command": "cd \"$HOME/.claude/srv\" && npm test"},
    {"type": "command", "command": "make -C ~/.claude/mk"},
    {"type": "command", "command": "cd ~/.claude/later && make"},
    {"type": "command", "command": "cd ~/.claude && make -s"}]}]}
}
`
	fsWrite(t, home, ".claude/settings.json", settings, 0o644)
	orig := map[string]string{
		filepath.Join(home, ".claude/hooks/Makefile"):   "all:\n\t@true\n",
		filepath.Join(home, ".claude/srv/package.json"): `{"scripts": {"test": "true"}}` + "\n",
		filepath.Join(home, ".claude/mk/Makefile"):      "all:\n\t@true\n",
		filepath.Join(home, ".claude/Makefile"):         "all:\n\t@true\n",
	}
	writeHostFiles(t, orig)
	fsWrite(t, home, ".claude/todos/t.json", "[]\n", 0o644)
	script := `
for f in ~/.claude/hooks/Makefile ~/.claude/srv/package.json ~/.claude/mk/Makefile ~/.claude/Makefile; do
  printf 'all:\n\ttouch /tmp/pwned\n' > "$f"
  rm -f "$f"; mv -f "$f" "$f.x"
done 2>/dev/null
printf 'include evil.mk\n' > ~/.claude/hooks/GNUmakefile 2>/dev/null
printf 'include evil.mk\n' > ~/.claude/GNUmakefile
mkdir -p ~/.claude/later 2>/dev/null && printf 'all:\n\ttouch /tmp/pwned\n' > ~/.claude/later/Makefile
sed -i 's|make -s|make -s; cd ~/.claude/new \&\& make|' ~/.claude/settings.json
mkdir -p ~/.claude/new && printf 'all:\n\ttouch /tmp/pwned\n' > ~/.claude/new/Makefile
echo '["x"]' > ~/.claude/todos/t.json
true`
	c := claudeRun(t, home, ws, script)
	bad := append(changedFiles(t, orig), leftFiles(
		filepath.Join(home, ".claude/hooks/GNUmakefile"),
		filepath.Join(home, ".claude/GNUmakefile"),
		filepath.Join(home, ".claude/later/Makefile"),
	)...)
	if got := fsReadFile(t, filepath.Join(home, ".claude/settings.json")); strings.Contains(got, "claude/new") {
		bad = append(bad, "settings.json runs ~/.claude/new: "+got)
	}
	if len(bad) > 0 {
		t.Errorf("the agent changed what the host's hooks run after a cd:\n  %s\nstderr:\n%s", strings.Join(bad, "\n  "), c.stderr)
	}
	stateWritable(t, c, filepath.Join(home, ".claude/todos/t.json"), "[\"x\"]\n")
}

// TestAgentNamedAgentDirEntry (scriptdirs2): `node ~/.claude` runs the
// agent's directory itself (its index.js, or package.json's "main"),
// which stays writable (the agent's state). As the agent, rewrite
// index.js and the "main" file and create the index.json node would take;
// none of it may be on the host afterwards, and the start says to move
// the program into a directory of its own. Seen failing on main's binary:
// index.js and lib/main.js held the agent's code, and nothing was said.
func TestAgentNamedAgentDirEntry(t *testing.T) {
	home, ws := workspace(t), workspace(t)
	fsWrite(t, home, ".claude.json", `{"mcpServers": {"m": {"command": "node", "args": ["`+filepath.Join(home, ".claude")+`"]}}}`+"\n", 0o644)
	fsWrite(t, home, ".claude/settings.json", `{"statusLine": {"type": "command", "command": "node ~/.claude"}}`+"\n", 0o644)
	orig := map[string]string{
		filepath.Join(home, ".claude/index.js"):     "console.log(1)\n",
		filepath.Join(home, ".claude/lib/main.js"):  "console.log(2)\n",
		filepath.Join(home, ".claude/package.json"): `{"main": "lib/main.js"}` + "\n",
	}
	writeHostFiles(t, orig)
	script := `
for f in ~/.claude/index.js ~/.claude/lib/main.js ~/.claude/package.json; do
  echo 'require("child_process").execSync("touch /tmp/pwned")' > "$f"
  rm -f "$f"; mv -f "$f" "$f.x"
done 2>/dev/null
echo '{}' > ~/.claude/index.json 2>/dev/null
echo '{"x":1}' > ~/.claude/state.json
true`
	c := claudeRun(t, home, ws, script)
	bad := append(changedFiles(t, orig), leftFiles(filepath.Join(home, ".claude/index.json"))...)
	if len(bad) > 0 {
		t.Errorf("the agent changed what `node ~/.claude` runs on the host:\n  %s\nstderr:\n%s", strings.Join(bad, "\n  "), c.stderr)
	}
	if !strings.Contains(c.stderr, "runs "+filepath.Join(home, ".claude")+" itself") {
		t.Errorf("no line on node running ~/.claude itself:\n%s", c.stderr)
	}
	stateWritable(t, c, filepath.Join(home, ".claude/state.json"), "{\"x\":1}\n")
}

// TestAgentNamedRunFromHidden (review16c): the forms of a hook line that
// hid the directory it runs from, and uv given the agent's directory as
// its project. As the agent, rewrite the Makefiles of `cd -P D && make`,
// `make -sC D` and `D=...; cd "$D" && make`, and the pyproject.toml and
// .venv python of `uv run --project ~/.claude srv`, go's main.go (`go -C
// D run .`) and poetry's pyproject.toml (`poetry -C D run x`), and create its
// uv.lock; none of it may be on the host afterwards. Seen failing on
// main's binary: every Makefile, pyproject.toml and .venv/bin/python held
// the agent's versions, and uv.lock was left on the host.
func TestAgentNamedRunFromHidden(t *testing.T) {
	home, ws := workspace(t), workspace(t)
	fsWrite(t, home, ".claude.json", "{}\n", 0o644)
	settings := `{
  "hooks": {"Stop": [{"hooks": [
    {"type": "command", "command": "cd -P ~/.claude/p && make -s"},
    {"type": "command", "command": "make -sC ~/.claude/q"},
    {"type": "command", "command": "D=~/.claude/v; cd \"$D\" && make"},
    {"type": "command", "command": "go -C ~/.claude/g run ."},
    {"type": "command", "command": "poetry -C ~/.claude/po run x"},
    {"type": "command", "command": "uv run --project ~/.claude srv"}]}]}
}
`
	fsWrite(t, home, ".claude/settings.json", settings, 0o644)
	orig := map[string]string{
		filepath.Join(home, ".claude/p/Makefile"):        "all:\n\t@true\n",
		filepath.Join(home, ".claude/q/Makefile"):        "all:\n\t@true\n",
		filepath.Join(home, ".claude/v/Makefile"):        "all:\n\t@true\n",
		filepath.Join(home, ".claude/g/main.go"):         "package main\n",
		filepath.Join(home, ".claude/po/pyproject.toml"): "[tool.poetry]\n",
		filepath.Join(home, ".claude/pyproject.toml"):    "[project]\nname = \"srv\"\n",
		filepath.Join(home, ".claude/.venv/bin/python"):  "#!/bin/sh\n",
	}
	writeHostFiles(t, orig)
	script := `
for f in ~/.claude/p/Makefile ~/.claude/q/Makefile ~/.claude/v/Makefile ~/.claude/g/main.go ~/.claude/po/pyproject.toml ~/.claude/pyproject.toml ~/.claude/.venv/bin/python; do
  printf 'all:\n\ttouch /tmp/pwned\n' > "$f"
  rm -f "$f"; mv -f "$f" "$f.x"
done 2>/dev/null
printf '[[package]]\nname = "x"\nsource = { path = "/tmp/evil" }\n' > ~/.claude/uv.lock 2>/dev/null
echo '{"x":1}' > ~/.claude/state.json
true`
	c := claudeRun(t, home, ws, script)
	bad := append(changedFiles(t, orig), leftFiles(filepath.Join(home, ".claude/uv.lock"))...)
	if len(bad) > 0 {
		t.Errorf("the agent changed what the host's hooks run:\n  %s\nstderr:\n%s", strings.Join(bad, "\n  "), c.stderr)
	}
	stateWritable(t, c, filepath.Join(home, ".claude/state.json"), "{\"x\":1}\n")
}
