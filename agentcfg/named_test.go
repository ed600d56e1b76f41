package agentcfg

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// Named finds the scripts that command-valued keys name, in every form a
// user writes them (~/, $HOME, "$CLAUDE_PROJECT_DIR", an interpreter's
// argument, an MCP server's args, an env value), and nothing in data keys.
func TestNamed(t *testing.T) {
	home, ws := "/h", "/w"
	file := func(agent string, scope Scope, path string) Target {
		for _, f := range Files {
			if f.Agent == agent && f.Scope == scope && f.Path == path {
				p := home + "/" + path
				if scope == Project {
					p = ws + "/" + path
				}
				return Target{File: f, Path: p}
			}
		}
		t.Fatalf("no %s %s %s in Files", agent, scope, path)
		return Target{}
	}
	cases := []struct {
		t    Target
		data string
		want []string
	}{
		{file("claude", Home, ".claude/settings.json"), `{
  "statusLine": {"type": "command", "command": "bash ~/.claude/statusline.sh"},
  "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "$HOME/.claude/hooks/pre.sh --x"}]}]},
  "apiKeyHelper": "${HOME}/bin/key.sh",
  "env": {"BASH_ENV": "~/.claude/env.sh", "NODE_OPTIONS": "--require=/opt/x/pre.js"},
  "permissions": {"allow": ["Edit(src/main.go)", "Read(~/notes.txt)"]},
  "model": "/not/a/command"
}`, []string{"/h/.claude/statusline.sh", "/h/.claude/hooks/pre.sh", "/h/bin/key.sh", "/h/.claude/env.sh", "/opt/x/pre.js"}},
		{file("claude", Project, ".claude/settings.json"), `{"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/fmt.sh && scripts/lint.sh"}]}]}}`,
			[]string{"/w/.claude/hooks/fmt.sh", "/w/scripts/lint.sh"}},
		{file("claude", Home, ".claude.json"), `{"mcpServers": {"m": {"command": "node", "args": ["/h/.claude/mcp/index.js", "--port", "1"]}}, "projects": {"/w": {"allowedTools": ["Edit(/w/a/b.go)"], "history": [{"display": "/w/c/d.go"}]}}}`,
			[]string{"/h/.claude/mcp/index.js"}},
		{file("codex", Home, ".codex/config.toml"), "notify = [\"python3\", \"/h/.codex/notify.py\"]\n[mcp_servers.s]\ncommand = \"/h/.codex/s.sh\"\n[projects.\"/w\"]\ntrust_level = \"trusted\"\n",
			[]string{"/h/.codex/notify.py", "/h/.codex/s.sh"}},
		{file("copilot", Home, ".copilot/lsp-config.json"), `{"lspServers": {"go": {"command": "~/.copilot/lsp/gopls"}}}`, []string{"/h/.copilot/lsp/gopls"}},
		{file("claude", Home, ".claude/settings.json"), `not json`, nil},
		// review13e: a cd earlier in the line, a script named without a
		// slash after an interpreter (and its flags), in a command line,
		// an argv list and an MCP server's args; not after -c or -m.
		{file("claude", Home, ".claude/settings.json"), `{"hooks": {"Stop": [{"hooks": [
  {"type": "command", "command": "cd ~/.claude/hooks && ./pre.sh"},
  {"type": "command", "command": "cd /opt/h; bash -e post.sh"},
  {"type": "command", "command": "python3 -u hook.py"},
  {"type": "command", "command": "uv run --quiet tool.py"},
  {"type": "command", "command": "python3 -m mod.x && sh -c true && echo done.txt"}]}]}}`,
			[]string{"/h/.claude/hooks", "/w/pre.sh", "/h/.claude/hooks/pre.sh", "/opt/h", "/w/post.sh", "/opt/h/post.sh", "/w/hook.py", "/w/tool.py"}},
		{file("claude", Home, ".claude.json"), `{"mcpServers": {"m": {"command": "node", "args": ["server.js"]}}}`, []string{"/w/server.js"}},
		// Quoted and escaped spaces: the shell's word, not two halves
		// (the halves are still taken: more is safe).
		{file("claude", Home, ".claude/settings.json"), `{"statusLine": {"type": "command", "command": "bash \"$HOME/My Scripts/s.sh\" && ~/.claude/a\\ b.sh"}}`,
			[]string{"/h/My", "/w/Scripts/s.sh", "/h/My Scripts/s.sh", `/h/.claude/a\`, "/h/.claude/a b.sh"}},
		{file("codex", Home, ".codex/config.toml"), "notify = [\"python3\", \"notify.py\"]\n", []string{"/w/notify.py"}},
		// review13f: an interpreter's flag that takes a value, then the
		// script (main took the value for the script and missed it).
		{file("claude", Home, ".claude/settings.json"), `{"hooks": {"Stop": [{"hooks": [
  {"type": "command", "command": "node -r ./setup.js hook.js"},
  {"type": "command", "command": "node --require dotenv/config --import tsx srv.js"},
  {"type": "command", "command": "bash -o pipefail +O extglob stop.sh"},
  {"type": "command", "command": "python3 -X dev -W ignore check.py"},
  {"type": "command", "command": "ruby -I lib -r json r.rb"},
  {"type": "command", "command": "uv run --with requests uvhook.py"},
  {"type": "command", "command": "uv run --directory ~/.claude/hooks dirhook.py"},
  {"type": "command", "command": "node --env-file .env.hook envhook.js"},
  {"type": "command", "command": "bash --rcfile ~/.claude/rc rc.sh"}]}]}}`,
			[]string{"/w/setup.js", "/w/hook.js", "/w/dotenv/config", "/w/srv.js", "/w/stop.sh", "/w/check.py", "/w/r.rb",
				"/w/uvhook.py", "/h/.claude/hooks", "/w/dirhook.py", "/h/.claude/hooks/dirhook.py", "/w/.env.hook", "/w/envhook.js", "/h/.claude/rc", "/w/rc.sh"}},
		{file("claude", Home, ".claude.json"), `{"mcpServers": {"m": {"command": "node", "args": ["--require", "~/.claude/pre.js", "server.js"]}}}`,
			[]string{"/h/.claude/pre.js", "/w/server.js"}},
	}
	for i, c := range cases {
		var got []string
		for _, n := range Named(c.t, []byte(c.data), Context{Workspace: ws}, home) {
			got = append(got, n.Path)
		}
		slices.Sort(got)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("case %d (%s): named %q, want %q", i, c.t.File.Path, got, want)
		}
	}
}

// commandPaths reads command lines of files an interrupted run's agent may
// have left: any bytes, no panic, only absolute clean-or-dotted paths.
func FuzzCommandPaths(f *testing.F) {
	f.Add(`cd ~/.claude/hooks && ./pre.sh; python3 -u "my hook.py" a\ b`)
	f.Add(`bash -c "cd $HOME/x && node ./y.js" '`)
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range commandPaths(s, "/h", "/w") {
			if !strings.HasPrefix(p, "/") {
				t.Fatalf("commandPaths(%q): %q is not absolute", s, p)
			}
		}
	})
}

// Named marks the directories that a load-path variable lists (env maps
// of Claude, Codex and Gemini, an assignment in a hook's command line,
// Codex's js_repl_node_module_dirs) as Dir, and no other variable's: the
// agent plants ~/.claude/bin/python3 and the host's hooks run it
// (session 14; on main none was marked).
func TestNamedLoadPaths(t *testing.T) {
	home, ws := "/h", "/w"
	target := func(agent, path string) Target {
		for _, f := range Files {
			if f.Agent == agent && f.Scope == Home && f.Path == path {
				return Target{File: f, Path: home + "/" + path}
			}
		}
		t.Fatalf("no %s %s", agent, path)
		return Target{}
	}
	cases := []struct {
		t    Target
		data string
		want []string
	}{
		{target("claude", ".claude/settings.json"), `{
  "env": {"PATH": "~/.claude/bin:$HOME/.claude/tools/bin:/usr/bin:$PATH", "PYTHONPATH": "${HOME}/.claude/py", "NODE_PATH": "rel/nm",
          "LUA_PATH": "~/.claude/lua/?.lua;;", "MCP_DATA_DIR": "~/.claude/data"},
  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "PATH=\"$HOME/.claude/hb:$PATH\" python3 ~/.claude/hooks/h.py"},
    {"type": "command", "command": "export PERL5LIB=~/.claude/perl; env ZDOTDIR=~/.claude/z zsh -c true"}]}]}
}`, []string{"/h/.claude/bin", "/h/.claude/tools/bin", "/usr/bin", "/h/.claude/py", "/w/rel/nm", "/h/.claude/lua",
			"/h/.claude/hb", "/h/.claude/perl", "/h/.claude/z"}},
		{target("codex", ".codex/config.toml"), "js_repl_node_module_dirs = [\"~/.codex/nm\"]\n[shell_environment_policy.set]\nPATH = \"/h/.codex/bin:/bin\"\n[mcp_servers.s]\ncommand = \"x\"\nenv = { PYTHONPATH = \"/h/.codex/py\", STORE = \"/h/.codex/store\" }\n",
			[]string{"/h/.codex/nm", "/h/.codex/bin", "/bin", "/h/.codex/py"}},
		{target("gemini", ".gemini/settings.json"), `{"mcpServers": {"m": {"command": "node", "args": ["s.js"], "env": {"NODE_PATH": "/h/.gemini/nm", "HOME_DIR": "/h/.gemini/x"}}}}`,
			[]string{"/h/.gemini/nm"}},
	}
	for i, c := range cases {
		var got []string
		for _, n := range Named(c.t, []byte(c.data), Context{Workspace: ws}, home) {
			if n.Dir {
				got = append(got, n.Path)
			}
		}
		slices.Sort(got)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("case %d (%s): load-path dirs %q, want %q", i, c.t.File.Path, got, want)
		}
	}
}

// loadPaths and assignedLoadPaths read values of files an interrupted
// run's agent may have left: any bytes, no panic, only absolute paths.
func FuzzLoadPaths(f *testing.F) {
	f.Add(`PATH="$HOME/.claude/hb:$PATH" python3 x.py; export PYTHONPATH=~/a:b`)
	f.Add(`~/.claude/lua/?.lua;;/x/y:$CLAUDE_PROJECT_DIR/z`)
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range append(loadPaths(s, "/h", "/w"), assignedLoadPaths(s, "/h", "/w")...) {
			if !strings.HasPrefix(p, "/") {
				t.Fatalf("%q: %q is not absolute", s, p)
			}
		}
	})
}

// commandScripts names the interpreter of the word after it (and its
// flags) whatever the word is: a script without .py or #! (`python3
// ~/.claude/noext` was no python script to the sandbox, so python's
// imports from ~/.claude were not guarded: session 15), a directory node
// or python runs, npx's local package; and no interpreter for a flag's
// value, a package's name or a plain argument.
func TestCommandScripts(t *testing.T) {
	for _, c := range []struct {
		line string
		want map[string]string // path -> interp
	}{
		{`python3 ~/.claude/noext`, map[string]string{"/h/.claude/noext": "python3"}},
		{`python3 -u ~/.claude/noext --flag ~/.claude/data`, map[string]string{"/h/.claude/noext": "python3", "/h/.claude/data": ""}},
		{`/usr/bin/python3.12 -W ignore $HOME/.claude/x`, map[string]string{"/usr/bin/python3.12": "", "/h/.claude/x": "python3.12"}},
		{`node ~/.claude/mcp/srv`, map[string]string{"/h/.claude/mcp/srv": "node"}},
		{`node -r ./pre.js ~/.claude/mcp/srv`, map[string]string{"/w/pre.js": "", "/h/.claude/mcp/srv": "node"}},
		{`cd ~/.claude/mcp/srv && node .`, map[string]string{"/h/.claude/mcp/srv": "node", "/w": "node"}},
		{`bash ~/.claude/hook`, map[string]string{"/h/.claude/hook": "bash"}},
		{`sh -c 'python3 ~/.claude/noext'`, map[string]string{"/h/.claude/noext": "python3"}},
		{`sh -c ~/.claude/x`, map[string]string{"/h/.claude/x": ""}},
		{`uv run --with requests ~/.claude/h`, map[string]string{"/h/.claude/h": "uv"}},
		{`deno run -A ~/.claude/x.ts`, map[string]string{"/h/.claude/x.ts": "deno"}},
		{`bun ~/.claude/x`, map[string]string{"/h/.claude/x": "bun"}},
		{`npx ~/.claude/mcp/pkg`, map[string]string{"/h/.claude/mcp/pkg": "npx"}},
		{`npx -y @modelcontextprotocol/server-filesystem ~/.claude/data`, map[string]string{"/h/.claude/data": ""}},
		{`npx -y server-memory`, map[string]string{}},
		{`npx tsx ~/.claude/h.ts`, map[string]string{"/h/.claude/h.ts": "tsx"}},
		{`npx ./tool`, map[string]string{"/w/tool": "npx"}},
		{`npm run start --prefix ~/.claude/mcp/srv`, map[string]string{"/h/.claude/mcp/srv": "npm"}},
		{`pnpm -C=~/.claude/mcp/p start`, map[string]string{"/h/.claude/mcp/p": "pnpm"}},
		{`yarn --cwd $HOME/.claude/mcp/y start`, map[string]string{"/h/.claude/mcp/y": "yarn"}},
		{`git -C ~/.claude/repo pull`, map[string]string{"/h/.claude/repo": ""}},
		{`deno run --allow-write=~/.claude/data ~/.claude/s.ts`, map[string]string{"/h/.claude/data": "", "/h/.claude/s.ts": "deno"}},
		{`node --env-file=~/.claude/.env --require=./pre.js ~/.claude/h.js`, map[string]string{"/h/.claude/.env": "", "/w/pre.js": "", "/h/.claude/h.js": "node"}},
		{`node --env-file=.env h.js`, map[string]string{"/w/.env": "", "/w/h.js": "node"}},
		{`uv run --project=~/.claude/mcp/srv srv`, map[string]string{"/h/.claude/mcp/srv": "uv", "/w/srv": "uv"}},
		{`uv --directory ~/.claude/mcp/weather run weather.py`, map[string]string{"/h/.claude/mcp/weather": "", "/w/weather.py": "uv", "/h/.claude/mcp/weather/weather.py": "uv"}},
		{`uv run --project ~/.claude/mcp/srv srv`, map[string]string{"/h/.claude/mcp/srv": "uv", "/w/srv": "uv"}},
		{`uvx --from ~/.claude/mcp/pkg pkg-cmd`, map[string]string{"/h/.claude/mcp/pkg": "uvx"}},
		{`uvx mcp-server-fetch`, map[string]string{}},
		{`uv run --with-editable ./lib x.py`, map[string]string{"/w/lib": "uv", "/w/x.py": "uv"}},
		{`~/.claude/hooks/h.sh ~/.claude/arg`, map[string]string{"/h/.claude/hooks/h.sh": "", "/h/.claude/arg": ""}},
		{`git status ~/.claude/x`, map[string]string{"/h/.claude/x": ""}},
	} {
		got := map[string]string{}
		for _, p := range commandScripts(c.line, "/h", "/w") {
			if _, ok := got[p.path]; !ok || got[p.path] == "" {
				got[p.path] = p.interp
			}
		}
		if !maps.Equal(got, c.want) {
			t.Errorf("commandScripts(%q) = %v, want %v", c.line, got, c.want)
		}
	}
}

// commandScripts names an interpreter only for a path it returns, and
// only one that interpreter() knows.
func FuzzCommandScripts(f *testing.F) {
	f.Add(`npx -y @a/b ~/.claude/x; python3 -W x ./y && node .`)
	f.Add(`uv run --directory d x; bunx tsx z`)
	f.Add(`cd ~/.claude && cd hooks && uv run -- python3 -I -O h; bun run node i`)
	f.Add(`D="$HOME/x"; export E=${D}y; cd -P -- $E && make -sC$D; env -iC ${E} -u C make`)
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range commandScripts(s, "/h", "/w") {
			if !strings.HasPrefix(p.path, "/") {
				t.Fatalf("commandScripts(%q): %q is not absolute", s, p.path)
			}
			if p.interp != "" && !interpreter(p.interp) && !packageManager(p.interp) {
				t.Fatalf("commandScripts(%q): %q: %q is no interpreter", s, p.path, p.interp)
			}
		}
	})
}

// commandScripts marks the directories a line moves to (cd, pushd, uv's
// --directory, a second cd from the first, in a quoted `bash -c` too):
// what runs there reads what they hold (scriptdirs2: `cd ~/.claude/hooks
// && make` named no script, and the Makefile stayed the agent's).
func TestCommandScriptsCwd(t *testing.T) {
	for line, want := range map[string][]string{
		`cd ~/.claude/hooks && make`:                  {"/h/.claude/hooks"},
		`bash -c 'cd "$HOME/.claude/t" && ./x'`:       {"/h/.claude/t"},
		`pushd ~/.claude/srv; npm test`:               {"/h/.claude/srv"},
		`cd ~/.claude && cd hooks/x && make`:          {"/h/.claude", "/h/.claude/hooks/x"},
		`cd ~/.claude; cd sub; sh ./run`:              {"/h/.claude", "/h/.claude/sub"},
		`uv run --directory ~/.claude/u x.py`:         {"/h/.claude/u"},
		`cd "$HOME/My Hooks" && make`:                 {"/h/My", "/h/My Hooks"},
		`make -C ~/.claude/hooks all`:                 {"/h/.claude/hooks"},
		`/usr/bin/make --directory=~/.claude/m`:       {"/h/.claude/m"},
		`git -C ~/.claude/repo pull`:                  nil,
		`env -C ~/.claude/e make`:                     {"/h/.claude/e"},
		`/usr/bin/env --chdir=~/.claude/f npm test`:   {"/h/.claude/f"},
		`env FOO=1 git -C ~/.claude/repo pull`:        nil,
		`echo cd ~/.claude/x`:                         {"/h/.claude/x"}, // more is safe
		`python3 ~/.claude/hooks/h.py ~/.claude/data`: nil,
		// review16c: cd's and pushd's own flags, and -C's value attached
		// or after other short flags, hid the directory (seen failing on
		// main: none of these was run from, and the Makefile stayed the
		// agent's to rewrite).
		`cd -P ~/.claude/hooks && make`:    {"/h/.claude/hooks"},
		`cd -L -- ~/.claude/hooks && make`: {"/h/.claude/hooks"},
		`cd -e -P ~/.claude/p && make`:     {"/h/.claude/p"},
		`pushd -n ~/.claude/q; make`:       {"/h/.claude/q"},
		`cd -P hooks && make`:              {"/w/hooks"},
		`make -sC ~/.claude/m1`:            {"/h/.claude/m1"},
		`make -C$HOME/.claude/m2`:          {"/h/.claude/m2"},
		`make -C/h/.claude/m3 all`:         {"/h/.claude/m3"},
		`env -iC ~/.claude/e1 make`:        {"/h/.claude/e1"},
		`env -C$HOME/.claude/e2 make`:      {"/h/.claude/e2"},
		// review16c: other tools told where to run (go's -C, poetry's
		// -C/--directory/--project, task's -d, gradle's -p, just's -d,
		// pip's editable install: each runs what the directory holds).
		`go -C ~/.claude/g run .`:                    {"/h/.claude/g"},
		`poetry -C ~/.claude/po run x`:               {"/h/.claude/po"},
		`poetry --directory=~/.claude/pd run x`:      {"/h/.claude/pd"},
		`task -d ~/.claude/t`:                        {"/h/.claude/t"},
		`./gradlew -p ~/.claude/gr build`:            {"/h/.claude/gr"},
		`just -d ~/.claude/j --justfile x`:           {"/h/.claude/j"},
		`pip install -e ~/.claude/pe`:                {"/h/.claude/pe"},
		`make -Bj4 all`:                              nil,
		`env -u C make`:                              nil,
		`D=~/.claude/v1; cd $D && make`:              {"/h/.claude/v1"},
		`D="$HOME/.claude/v2"; cd "$D" && make`:      {"/h/.claude/v2"},
		`export D=$HOME/.claude; cd ${D}/v3 && make`: {"/h/.claude/v3"},
	} {
		var got []string
		for _, p := range commandScripts(line, "/h", "/w") {
			if p.cwd {
				got = append(got, p.path)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("commandScripts(%q): run from %q, want %q", line, got, want)
		}
	}
}
