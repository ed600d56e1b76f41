package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/agentcfg"
	"github.com/jail-sandbox/jail/fsrules"
)

// agentNamed's rule for what a named script's interpreter loads from
// beside it (agentcfg's beside.go, review13f): a directory of the script's
// own under an agent's directory is read-only (watched when absent), node's
// node_modules/ and package.json above it up to the agent's directory are
// read-only or watched, a python script directly in the agent's directory
// gets its __pycache__/ protected and a note; the agent's directory itself,
// a directory the user made writable by name, and the project's own
// scripts are left writable.
func TestAgentNamedBeside(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	home, _ = filepath.EvalSymlinks(home)
	ws, _ = filepath.EvalSymlinks(ws)
	write := func(p, s string) { writeFile(t, p, s) }
	c, g := filepath.Join(home, ".claude"), filepath.Join(ws, ".claude")
	write(filepath.Join(c, "settings.json"), `{
  "statusLine": {"type": "command", "command": "python3 ~/.claude/status.py"},
  "hooks": {"Stop": [{"hooks": [
    {"type": "command", "command": "python3 ~/.claude/hooks/h.py"},
    {"type": "command", "command": "node ~/.claude/mcp/srv/index.js"},
    {"type": "command", "command": "sh ~/.claude/mine/x.sh"},
    {"type": "command", "command": "cd ~/.claude/data/work && ../../bin/t.sh"},
    {"type": "command", "command": "sh ~/.claude/later/absent.sh"},
    {"type": "command", "command": "python3 scripts/p.py"}]}]}
}`)
	write(filepath.Join(g, "settings.json"), `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "sh \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/fmt.sh"}]}]}}`)
	for _, p := range []string{"status.py", "hooks/h.py", "mcp/srv/index.js", "mine/x.sh"} {
		write(filepath.Join(c, p), "#\n")
	}
	write(filepath.Join(c, "node_modules/dep/index.js"), "#\n")
	write(filepath.Join(c, "data/work/state.json"), "{}\n")
	write(filepath.Join(g, "hooks/fmt.sh"), "#\n")
	write(filepath.Join(ws, "scripts/p.py"), "#\n")
	masks, absent, _, notes, _ := agentNamedFor(home, ws, agentcfg.Root{Path: c, Dir: true}, agentcfg.Root{Path: filepath.Join(c, "mine"), Dir: true}, agentcfg.Root{Path: ws, Dir: true})
	ro := map[string]bool{}
	for _, m := range masks {
		ro[m.Path] = m.Dir
	}
	watched := map[string]bool{}
	for _, a := range absent {
		watched[a.Path] = a.Dir
	}
	for p, dir := range map[string]bool{
		filepath.Join(c, "hooks"):            true, // beside h.py
		filepath.Join(c, "mcp/srv"):          true, // beside index.js
		filepath.Join(c, "node_modules"):     true, // exists: read-only
		filepath.Join(g, "hooks"):            true, // a project's agent directory counts
		filepath.Join(c, "hooks/h.py"):       false,
		filepath.Join(c, "status.py"):        false,
		filepath.Join(c, "mine/x.sh"):        false,
		filepath.Join(ws, "scripts/p.py"):    false,
		filepath.Join(g, "hooks/fmt.sh"):     false,
		filepath.Join(c, "mcp/srv/index.js"): false,
		// A cd's directory is run from (scriptdirs2): t.sh runs there.
		filepath.Join(c, "data/work"): true,
	} {
		if d, ok := ro[p]; !ok || d != dir {
			t.Errorf("%s: not read-only (dir %v); masks %v", p, dir, masks)
		}
	}
	for p, dir := range map[string]bool{
		filepath.Join(c, "later"):            true, // absent: watched whole
		filepath.Join(c, "mcp/node_modules"): true,
		filepath.Join(c, "mcp/package.json"): false,
		filepath.Join(c, "package.json"):     false,
		filepath.Join(c, "__pycache__"):      true, // status.py's
	} {
		if d, ok := watched[p]; !ok || d != dir {
			t.Errorf("%s: not watched (dir %v); absent %v", p, dir, absent)
		}
	}
	for _, p := range []string{
		c,                                                                      // the agent's own state
		filepath.Join(c, "mine"),                                               // the user's -w of it
		filepath.Join(ws, "scripts"),                                           // the project's
		ws,                                                                     // the workspace
		filepath.Join(ws, "node_modules"), filepath.Join(home, "node_modules"), // above the agent's directory
		g,
		filepath.Join(c, "data"), // above a cd's directory
	} {
		if _, ok := ro[p]; ok {
			t.Errorf("%s made read-only: it must stay writable", p)
		}
		if _, ok := watched[p]; ok {
			t.Errorf("%s watched: it must stay writable", p)
		}
	}
	if !slices.ContainsFunc(notes, func(n string) bool {
		return strings.HasPrefix(n, "agent script: "+filepath.Join(c, "status.py")) && shownNote(n)
	}) || !slices.ContainsFunc(notes, func(n string) bool {
		return strings.HasPrefix(n, "agent script: "+filepath.Join(c, "data/work")+" is read-only") && strings.Contains(n, "state.json") && shownNote(n)
	}) || len(notes)-countFirstWrite(notes) != 2 {
		t.Errorf("notes %q: want a shown note on status.py and one on data/work's state.json", notes)
	}
}

// A directory the agent configuration puts on a load path (env PATH,
// PYTHONPATH, an assignment in a hook's command line) under an agent's
// directory is read-only whole, or watched while absent (session 14: the
// agent planted ~/.claude/bin/python3 and the host's hooks ran it). Left
// writable: a data directory an env variable names, the agent's
// directory itself (a note instead), a directory the user made writable
// by name, and load-path directories outside the agents' directories.
func TestAgentNamedLoadPath(t *testing.T) {
	home, ws, c := besideHome(t)
	for _, d := range []string{"bin", "py", "data", "mine", "hooks"} {
		if err := os.MkdirAll(filepath.Join(c, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(ws, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c, "settings.json"), []byte(`{
  "env": {"PATH": "~/.claude/bin:~/.claude/mine:~/.claude:`+ws+`/tools:/usr/bin:$PATH", "PYTHONPATH": "~/.claude/py", "STORE": "~/.claude/data"},
  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "PATH=~/.claude/later:$PATH python3 ~/.claude/hooks/h.py"}]}]}
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	masks, absent, _, notes, _ := agentNamedFor(home, ws, agentcfg.Root{Path: c, Dir: true}, agentcfg.Root{Path: filepath.Join(c, "mine"), Dir: true}, agentcfg.Root{Path: ws, Dir: true})
	ro, watched := byPath(masks, absent)
	for _, d := range []string{"bin", "py"} {
		if dir, ok := ro[filepath.Join(c, d)]; !ok || !dir {
			t.Errorf("~/.claude/%s (on a load path) not read-only whole: masks %v", d, masks)
		}
	}
	if dir, ok := watched[filepath.Join(c, "later")]; !ok || !dir {
		t.Errorf("~/.claude/later (on PATH in a hook's line, absent) not watched as a directory: %v", absent)
	}
	for _, p := range []string{c, filepath.Join(c, "data"), filepath.Join(c, "mine"), filepath.Join(ws, "tools")} {
		if _, ok := ro[p]; ok {
			t.Errorf("%s made read-only: it must stay writable", p)
		}
		if _, ok := watched[p]; ok {
			t.Errorf("%s watched: it must stay writable", p)
		}
	}
	if !slices.ContainsFunc(notes, func(n string) bool {
		return strings.Contains(n, "puts "+c+" on a load path") && shownNote(n)
	}) {
		t.Errorf("notes %q: want a shown note on ~/.claude on PATH", notes)
	}
}

// An interpreter's script is judged by the line that runs it, not only by
// its name (session 15, scriptdirs): `python3 ~/.claude/noext` (no .py,
// no #!) imports from ~/.claude first, so ~/.claude gets a PyDir (a
// json.py the agent adds leaves the tree); a directory an interpreter
// runs (`node ~/.claude/mcp/srv2`: its index.js; `npx ~/.claude/mcp/pkg`:
// its bin; `cd ~/.claude/mcp/c && node .`) is read-only whole. On main
// none of them was guarded: no PyDir, and the directories stayed
// writable (the agent rewrote srv2/index.js, which the host's next MCP
// start ran).
func TestAgentNamedInterpreterWord(t *testing.T) {
	home, ws, c := besideHome(t)
	write := func(p, s string) { writeFile(t, p, s) }
	write(filepath.Join(home, ".claude.json"), `{"mcpServers": {
  "a": {"command": "python3", "args": ["~/.claude/noext"]},
  "b": {"command": "node", "args": ["~/.claude/mcp/srv2"]},
  "c": {"command": "npx", "args": ["-y", "~/.claude/mcp/pkg"]},
  "d": {"command": "sh", "args": ["-c", "cd ~/.claude/mcp/c && node ."]},
  "e": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory", "~/.claude/memdata"]},
  "f": {"command": "uv", "args": ["--directory", "~/.claude/mcp/weather", "run", "weather.py"]},
  "g": {"command": "uvx", "args": ["--from", "~/.claude/mcp/upkg", "upkg-server"]},
  "h": {"command": "deno", "args": ["run", "--allow-write=~/.claude/denodata", "~/.claude/mcp/d/s.ts"]},
  "i": {"command": "npm", "args": ["run", "start", "--prefix", "~/.claude/mcp/npmsrv"]}
}}`)
	write(filepath.Join(c, "mcp/npmsrv/package.json"), `{"scripts": {"start": "node s.js"}}`)
	write(filepath.Join(c, "denodata/x.json"), "{}")
	write(filepath.Join(c, "mcp/d/s.ts"), "//\n")
	write(filepath.Join(c, "mcp/weather/weather.py"), "#\n")
	write(filepath.Join(c, "mcp/upkg/pyproject.toml"), "#\n")
	write(filepath.Join(c, "noext"), "import json\n")
	write(filepath.Join(c, "mcp/srv2/index.js"), "//\n")
	write(filepath.Join(c, "mcp/pkg/package.json"), `{"bin": "x.js"}`)
	write(filepath.Join(c, "mcp/c/index.js"), "//\n")
	write(filepath.Join(c, "memdata/m.json"), "{}")
	masks, _, _, _, py := agentNamedFor(home, ws, agentcfg.Root{Path: c, Dir: true}, agentcfg.Root{Path: filepath.Join(home, ".claude.json")}, agentcfg.Root{Path: ws, Dir: true})
	ro := map[string]bool{}
	for _, m := range masks {
		ro[m.Path] = m.Dir
	}
	if !slices.ContainsFunc(py, func(d PyDir) bool { return d.Dir == c }) {
		t.Errorf("python3 ~/.claude/noext: no PyDir for %s: %+v", c, py)
	}
	for _, d := range []string{"mcp/srv2", "mcp/pkg", "mcp/c", "mcp/weather", "mcp/upkg", "mcp/npmsrv"} {
		if dir, ok := ro[filepath.Join(c, d)]; !ok || !dir {
			t.Errorf("~/.claude/%s (run by an interpreter) not read-only whole: masks %v", d, masks)
		}
	}
	// A flag's value given with '=' is no script: deno's data directory
	// stays writable.
	for _, p := range []string{c, filepath.Join(c, "memdata"), filepath.Join(c, "denodata"), filepath.Join(c, "mcp"), ws} {
		if _, ok := ro[p]; ok {
			t.Errorf("%s made read-only: it must stay writable (masks %v)", p, masks)
		}
	}
}

// A read-only script directory that holds what its scripts write at
// runtime (a hook's log beside it, an MCP server's state file) gets one
// shown note naming the directory, those files and the fixes: the hook
// fails inside with EROFS, which Claude Code shows only in its verbose
// mode (session 15: the failure was silent). A directory of code only,
// or one the user made writable by name, gets none.
func TestAgentNamedRuntimeNote(t *testing.T) {
	home, ws, c := besideHome(t)
	write := func(p, s string) { writeFile(t, p, s) }
	write(filepath.Join(c, "settings.json"), `{"hooks": {"Stop": [{"hooks": [
  {"type": "command", "command": "~/.claude/hooks/log.sh"},
  {"type": "command", "command": "node ~/.claude/mcp/srv/index.js"},
  {"type": "command", "command": "~/.claude/mine/m.sh"}]}]}}`)
	write(filepath.Join(c, "hooks/log.sh"), "#!/bin/sh\n")
	write(filepath.Join(c, "hooks/lib.sh"), "#\n")
	write(filepath.Join(c, "hooks/hook.log"), "x\n")
	write(filepath.Join(c, "mcp/srv/index.js"), "//\n")
	write(filepath.Join(c, "mcp/srv/package.json"), "{}\n")
	write(filepath.Join(c, "mcp/srv/node_modules/dep/index.js"), "//\n")
	write(filepath.Join(c, "mine/m.sh"), "#\n")
	write(filepath.Join(c, "mine/m.log"), "#\n")
	_, _, _, notes, _ := agentNamedFor(home, ws, agentcfg.Root{Path: c, Dir: true}, agentcfg.Root{Path: filepath.Join(c, "mine"), Dir: true}, agentcfg.Root{Path: ws, Dir: true})
	var got []string
	for _, n := range notes {
		if strings.Contains(n, "written at runtime") {
			got = append(got, n)
		}
	}
	hooks := filepath.Join(c, "hooks")
	if len(got) != 1 || !strings.HasPrefix(got[0], "agent script: "+hooks+" is read-only") || !shownNote(got[0]) ||
		!strings.Contains(got[0], "holds hook.log,") || strings.Contains(got[0], "lib.sh") ||
		!strings.Contains(got[0], "-w "+hooks) || !strings.Contains(got[0], filepath.Join(c, "logs")+"/") {
		t.Errorf("notes %q: want one shown note on %s naming hook.log, the logs/ place and -w", got, hooks)
	}
}

// A directory a hook's line moves to before it runs something (a cd,
// pushd, in a `bash -c` too) under an agent's directory is run from
// (scriptdirs2): `cd ~/.claude/hooks && make` names no script, but make
// runs the Makefile there, npm its package.json, a shell ./lib.sh.
// Read-only whole, or watched while absent; the agent's own directory
// gets a note (its state stays writable) and its package.json is
// watched. Left writable: the project, a directory the user made
// writable by name. Seen failing on main: hooks, tools and srv stayed
// writable (a cd's directory was no script's).
func TestAgentNamedRunFrom(t *testing.T) {
	home, ws, c := besideHome(t)
	for _, d := range []string{"hooks", "tools", "srv", "mine", "deep/er"} {
		if err := os.MkdirAll(filepath.Join(c, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(c, "settings.json"), []byte(`{
  "hooks": {"Stop": [{"hooks": [
    {"type": "command", "command": "cd ~/.claude/hooks && make"},
    {"type": "command", "command": "bash -c 'cd \"$HOME/.claude/tools\" && exec ./x'"},
    {"type": "command", "command": "pushd ~/.claude/srv >/dev/null; npm test"},
    {"type": "command", "command": "cd ~/.claude && cd deep/er && make -s"},
    {"type": "command", "command": "cd ~/.claude/later && make"},
    {"type": "command", "command": "cd ~/.claude/mine && make"},
    {"type": "command", "command": "cd \"$CLAUDE_PROJECT_DIR\" && make lint"},
    {"type": "command", "command": "cd ~/.claude && make"}]}]}
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	masks, absent, _, notes, _ := agentNamedFor(home, ws, agentcfg.Root{Path: c, Dir: true}, agentcfg.Root{Path: filepath.Join(c, "mine"), Dir: true}, agentcfg.Root{Path: ws, Dir: true})
	ro, watched := byPath(masks, absent)
	for _, d := range []string{"hooks", "tools", "srv", "deep/er"} {
		if dir, ok := ro[filepath.Join(c, d)]; !ok || !dir {
			t.Errorf("%s: a cd's directory not read-only whole; masks %v", d, masks)
		}
	}
	for p, dir := range map[string]bool{
		filepath.Join(c, "later"):             true, // absent: leaves the tree if made
		filepath.Join(c, "package.json"):      false,
		filepath.Join(c, "node_modules"):      true,
		filepath.Join(c, "deep/package.json"): false,
		filepath.Join(c, "Makefile"):          false, // `cd ~/.claude && make`: the agent's directory stays writable
		filepath.Join(c, "pyproject.toml"):    false,
	} {
		if d, ok := watched[p]; !ok || d != dir {
			t.Errorf("%s: not watched (dir %v); absent %v", p, dir, absent)
		}
	}
	for _, p := range []string{c, filepath.Join(c, "mine"), ws, filepath.Join(c, "deep")} {
		if _, ok := ro[p]; ok {
			t.Errorf("%s made read-only: it must stay writable", p)
		}
		if _, ok := watched[p]; ok {
			t.Errorf("%s watched: it must stay writable", p)
		}
	}
	if !slices.ContainsFunc(notes, func(n string) bool {
		return strings.HasPrefix(n, "agent script: ") && strings.Contains(n, "runs a program in "+c+" after a cd") && shownNote(n)
	}) || len(notes)-countFirstWrite(notes) != 1 {
		t.Errorf("notes %q: want one shown note on the cd into %s", notes, c)
	}
}

// An interpreter given the agent's directory itself (`node ~/.claude`,
// `npx ~/.claude`, `cd ~/.claude && node .`) runs its package.json
// "main" or "bin", or its index.js: the directory is the agent's state
// and stays writable, so those entry files are read-only (watched while
// absent), a "main" in a subdirectory is judged as a script there, and a
// note says to keep the server in a directory of its own. Seen failing
// on main (scriptdirs2): index.js, srv.js and lib/ stayed writable, and
// nothing was said.
func TestAgentNamedAgentDirRun(t *testing.T) {
	home, ws, c := besideHome(t)
	writeFiles(t, c, map[string]string{
		"settings.json": `{"statusLine": {"type": "command", "command": "node ~/.claude"}}`,
		"package.json":  `{"main": "lib/main.js", "bin": {"srv": "./srv.js", "up": "../up.js", "ln": "ln/main.js"}}`,
		"lib/main.js":   "//\n",
		"srv.js":        "//\n",
		"index.js":      "//\n",
		"state.json":    "{}\n",
	})
	if err := os.Symlink("lib", filepath.Join(c, "ln")); err != nil {
		t.Fatal(err)
	}
	masks, absent, links, notes := namedBeside(home, ws, c)
	if !slices.ContainsFunc(links, func(l agentcfg.Target) bool { return l.Path == filepath.Join(c, "ln") }) {
		t.Errorf("the link ln on the way to a bin entry is not kept a link: %v", links)
	}
	ro, watched := byPath(masks, absent)
	for p, dir := range map[string]bool{
		"package.json": false, "index.js": false, "srv.js": false, "lib": true, "lib/main.js": false,
	} {
		if d, ok := ro[filepath.Join(c, p)]; !ok || d != dir {
			t.Errorf("%s: not read-only (dir %v); masks %v", p, dir, masks)
		}
	}
	for _, p := range []string{"index.json", "index.node"} {
		if _, ok := watched[filepath.Join(c, p)]; !ok {
			t.Errorf("%s: not watched; absent %v", p, absent)
		}
	}
	for _, p := range []string{c, filepath.Join(c, "state.json"), filepath.Join(home, "up.js")} {
		if _, ok := ro[p]; ok {
			t.Errorf("%s made read-only: it must stay writable", p)
		}
		if _, ok := watched[p]; ok {
			t.Errorf("%s watched: it must stay writable", p)
		}
	}
	if !slices.ContainsFunc(notes, func(n string) bool {
		return strings.HasPrefix(n, "agent script: ") && strings.Contains(n, c+" itself") && shownNote(n)
	}) {
		t.Errorf("notes %q: want a shown note on node running %s", notes, c)
	}
}

// A read-only directory of an MCP server's script that holds nothing
// written at runtime yet gets a start line (scriptdirs2): the server's
// first write of its state there fails inside, and a write a read-only
// mount refuses leaves nothing jail could report. A hook's directory
// without such files gets none (one holding them has the runtime line,
// TestAgentNamedBeside). Seen failing on main: no line at all.
func TestAgentNamedServerDirNote(t *testing.T) {
	home, ws, c := besideHome(t)
	writeFiles(t, c, map[string]string{
		"settings.json":    `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "python3 ~/.claude/hooks/h.py"}]}]}}`,
		"hooks/h.py":       "#\n",
		"mcp/srv/index.js": "//\n",
		"mcp/pkg/x.js":     "//\n",
	})
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"mcpServers": {
  "s": {"command": "node", "args": ["~/.claude/mcp/srv/index.js"]},
  "p": {"command": "npx", "args": ["-y", "~/.claude/mcp/pkg"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, _, notes, _ := agentNamedFor(home, ws, agentcfg.Root{Path: c, Dir: true}, agentcfg.Root{Path: filepath.Join(home, ".claude.json")}, agentcfg.Root{Path: ws, Dir: true})
	// A hook's directory gets its line too (session 17: it had none).
	for _, d := range []string{"mcp/srv", "mcp/pkg", "hooks"} {
		if !slices.ContainsFunc(notes, func(n string) bool {
			return strings.HasPrefix(n, "agent script: "+filepath.Join(c, d)+" is read-only") && strings.Contains(n, firstWriteMark) && shownNote(n)
		}) {
			t.Errorf("no line on the script directory %s: notes %q", d, notes)
		}
	}
	if len(notes) != 3 {
		t.Errorf("notes %q: want one line per script directory", notes)
	}
}

// entryFiles protects at most maxEntries of a package.json's entries
// (each is a mount) and says so past the bound.
func TestAgentNamedAgentDirRunBounded(t *testing.T) {
	home, ws, c := besideHome(t)
	if err := os.MkdirAll(c, 0o755); err != nil {
		t.Fatal(err)
	}
	bins := map[string]string{}
	for i := range 1000 {
		bins[fmt.Sprint("b", i)] = fmt.Sprintf("b%d.js", i)
	}
	pkg, _ := json.Marshal(map[string]any{"bin": bins})
	for p, s := range map[string]string{"settings.json": `{"statusLine": {"type": "command", "command": "npx ~/.claude"}}`, "package.json": string(pkg)} {
		if err := os.WriteFile(filepath.Join(c, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	masks, absent, _, notes := namedBeside(home, ws, c)
	if n := len(masks) + len(absent); n > 64 {
		t.Errorf("%d masks and watched paths for one package.json: want at most %d entries' worth", n, maxEntries)
	}
	if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "names 1000 entry files") }) {
		t.Errorf("notes %q: want the bound said", notes)
	}
}

// uv given the agent's directory itself as its project (`uv run --project
// ~/.claude srv`, `uvx --from ~/.claude srv`, `cd ~/.claude && uv run
// x`) reads what to run there: pyproject.toml (its build backend and
// scripts), uv.toml, uv.lock (where each package comes from), setup.py,
// and runs the project's .venv (its python, its site-packages' .pth
// files). The directory stays writable (its state): those are read-only
// one by one (watched while absent). Seen failing on main (review16c):
// pyproject.toml, uv.lock and .venv stayed writable with --project, and
// .venv and uv.lock after a cd.
func TestAgentNamedUvProject(t *testing.T) {
	for name, line := range map[string]string{
		"project":   "uv run --project ~/.claude srv",
		"projectEq": "uv run --project=$HOME/.claude srv",
		"uvxFrom":   "uvx --from ~/.claude srv",
		"cd":        "cd ~/.claude && uv run srv",
	} {
		// Why a plain name: t.TempDir() holds the subtest's name, and a
		// path with '~' or '$' is no path to the scan.
		t.Run(name, func(t *testing.T) {
			home, ws, c := besideHome(t)
			writeFiles(t, c, map[string]string{
				"settings.json":              fmt.Sprintf(`{"statusLine": {"type": "command", "command": %q}}`, line),
				"pyproject.toml":             "[project]\nname = \"srv\"\n",
				".venv/bin/python":           "#!/bin/sh\n",
				".venv/lib/site-packages/.k": "",
			})
			masks, absent, _, _ := namedBeside(home, ws, c)
			ro, watched := map[string]bool{}, map[string]bool{}
			for _, m := range masks {
				ro[m.Path] = m.Dir
			}
			for _, a := range absent {
				watched[a.Path] = true
			}
			for p, dir := range map[string]bool{
				filepath.Join(c, "pyproject.toml"): false,
				filepath.Join(c, ".venv"):          true,
			} {
				if d, ok := ro[p]; !ok || d != dir {
					t.Errorf("%s: not read-only (dir %v); masks %v", p, dir, masks)
				}
			}
			for _, n := range []string{"uv.lock", "uv.toml", "setup.py", "setup.cfg"} {
				if !watched[filepath.Join(c, n)] {
					t.Errorf("%s: not watched; absent %v", n, absent)
				}
			}
			if _, ok := ro[c]; ok {
				t.Errorf("%s made read-only: the agent's state", c)
			}
		})
	}
}

// A package manager given the agent's directory itself (`npm --prefix
// ~/.claude run x`, `yarn --cwd ~/.claude x`, `pnpm -C ~/.claude x`, `cd
// ~/.claude && yarn x`) reads its configuration there before it runs
// anything: .npmrc (script-shell, node-options: --require runs code),
// .yarnrc.yml and .yarnrc (yarnPath, yarn-path: yarn runs that file),
// .pnpmfile.cjs (pnpm runs its hooks), bunfig.toml (preload). The
// directory stays writable (its state): those are read-only one by one
// (watched while absent). Seen failing on main (review16c): with a flag,
// none was protected, and after a cd .yarnrc.yml, .yarnrc and
// .pnpmfile.cjs were not.
func TestAgentNamedPackageManagerDir(t *testing.T) {
	for name, line := range map[string]string{
		"npm":  "npm --prefix ~/.claude run x",
		"yarn": "yarn --cwd ~/.claude x",
		"pnpm": "pnpm -C ~/.claude x",
		"bun":  "bun --cwd ~/.claude run x",
		"cd":   "cd ~/.claude && yarn x",
	} {
		t.Run(name, func(t *testing.T) {
			home, ws, c := besideHome(t)
			if err := os.MkdirAll(c, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(c, "settings.json"), []byte(fmt.Sprintf(`{"statusLine": {"type": "command", "command": %q}}`, line)), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(c, ".npmrc"), []byte("fund=false\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			masks, absent, _, _ := namedBeside(home, ws, c)
			ro, watched := map[string]bool{}, map[string]bool{}
			for _, m := range masks {
				ro[m.Path] = true
			}
			for _, a := range absent {
				watched[a.Path] = true
			}
			if !ro[filepath.Join(c, ".npmrc")] {
				t.Errorf(".npmrc: not read-only; masks %v", masks)
			}
			for _, n := range []string{".yarnrc.yml", ".yarnrc", ".pnpmfile.cjs", "bunfig.toml", "package.json"} {
				if !watched[filepath.Join(c, n)] {
					t.Errorf("%s: not watched; absent %v", n, absent)
				}
			}
			if ro[c] {
				t.Errorf("%s made read-only: the agent's state", c)
			}
		})
	}
}

// namedBeside is agentNamed for a run with the agent's directory c (under
// home) and the workspace ws writable, as `-w ~/.claude` has them.
func namedBeside(home, ws, c string) ([]fsrules.Mask, []fsrules.Absent, []agentcfg.Target, []string) {
	masks, absent, links, notes, _ := agentNamedFor(home, ws, agentcfg.Root{Path: c, Dir: true}, agentcfg.Root{Path: ws, Dir: true})
	return masks, absent, links, notes
}

// agentNamedFor is agentNamed for a run whose writable trees are roots'
// paths (as -w names them), the agent's files found under home.
func agentNamedFor(home, ws string, roots ...agentcfg.Root) ([]fsrules.Mask, []fsrules.Absent, []agentcfg.Target, []string, []PyDir) {
	writable := make([]string, len(roots))
	for i, r := range roots {
		writable[i] = r.Path
	}
	m, a, l, n, py, _ := agentNamed(agentcfg.Targets(home, roots, agentcfg.Files), home, ws, writable, roots, nil)
	return m, a, l, n, py
}

// besideHome makes a home and a workspace (symlinks resolved: the scan
// compares resolved paths) and names the agent's directory in the home.
func besideHome(t *testing.T) (home, ws, c string) {
	home, _ = filepath.EvalSymlinks(t.TempDir())
	ws, _ = filepath.EvalSymlinks(t.TempDir())
	return home, ws, filepath.Join(home, ".claude")
}

// writeFile writes s to p, its parent directories made.
func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeFiles writes files (names relative to dir) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, s := range files {
		writeFile(t, filepath.Join(dir, p), s)
	}
}

// byPath maps the masks' and the watched paths' paths to whether each is
// a directory.
func byPath(masks []fsrules.Mask, absent []fsrules.Absent) (ro, watched map[string]bool) {
	ro, watched = map[string]bool{}, map[string]bool{}
	for _, m := range masks {
		ro[m.Path] = m.Dir
	}
	for _, a := range absent {
		watched[a.Path] = a.Dir
	}
	return ro, watched
}

// countFirstWrite counts the script directories' first-write lines (said
// once per directory, at the first start that makes one read-only).
func countFirstWrite(notes []string) int {
	n := 0
	for _, s := range notes {
		if strings.Contains(s, firstWriteMark) {
			n++
		}
	}
	return n
}
