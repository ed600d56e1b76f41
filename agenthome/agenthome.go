// Package agenthome says where the agent CLIs keep their state when the
// user's environment moves it from its usual place in the home directory.
//
// jail's protections of an agent's state (the built-in read-only names
// under ~/.codex and ~/.claude, the key-by-key guard of config.toml and
// settings.json, the watch for new databases and profiles) are anchored at
// the home directory. These variables move that state elsewhere, for the
// agent run inside jail and for the user's own runs on the host alike:
//
//	CODEX_HOME                     Codex's ~/.codex (config.toml: notify, MCP servers, hooks)
//	CLAUDE_CONFIG_DIR              Claude Code's ~/.claude and its .claude.json
//	CLAUDE_CODE_PLUGIN_CACHE_DIR   Claude Code's ~/.claude/plugins (hooks, MCP servers)
//	CLAUDE_CODE_PLUGIN_SEED_DIR    more plugin folders Claude Code loads, a ':' list
//	CLAUDE_CODE_PLUGIN_DIRS        plugin folders Claude Code 2.1.332 loads, a ':' list
//	CLAUDE_CODE_PLUGIN_MCPB_DIR    where Claude Code 2.1.332 unpacks MCP bundles
//	CLAUDE_CODE_REMOTE_MEMORY_DIR  where Claude Code keeps its memories instead of ~/.claude
//	GEMINI_CLI_HOME                Gemini CLI's home: its .gemini lies there
//	QWEN_HOME                      Qwen Code's ~/.qwen
//	QWEN_RUNTIME_DIR               Qwen Code's runtime data (chats, checkpoints)
//
// and four that name a file Claude Code reads as code or settings:
//
//	CLAUDE_ENV_FILE                    its text goes ahead of every Bash command
//	CLAUDE_CODE_MANAGED_SETTINGS_PATH  managed settings (hooks, env), the highest rank
//	CLAUDE_CODE_REMOTE_SETTINGS_PATH   the organization's managed settings' copy
//	CLAUDE_CODE_SHELL                  the shell its commands run in
//
// and three whose value is a command line (its words that name paths are
// the files: a wrapper script and what it is given; a bare word after the
// program, a file in the working directory where one exists):
//
//	CLAUDE_CODE_SHELL_PREFIX       wraps every Bash command
//	CLAUDE_CODE_PROCESS_WRAPPER    wraps its background supervisor, sessions, workers
//	CLAUDE_CODE_TEAMMATE_COMMAND   starts an agent team's members
//
// (read off Codex 0.171, Claude Code 2.1.197 and 2.1.332 and Gemini CLI
// 0.61). A moved
// state directory in a tree the sandbox may write held what the host's
// agent runs next, with none of those protections (session 22, confighome:
// a notify command appended to $CODEX_HOME/config.toml inside the
// workspace stayed). Moved lists them, so that the caller keeps them
// read-only where the sandbox could write them.
package agenthome

import (
	"path/filepath"
	"strings"
)

// Dir is one agent state directory the environment moved.
type Dir struct {
	Var   string // the variable that moved it (CODEX_HOME)
	Value string // the variable's value as set
	Agent string // whose state ("Codex")
	// Path is the state directory, absolute and clean as text (links not
	// resolved): $CODEX_HOME, $CLAUDE_CONFIG_DIR, $GEMINI_CLI_HOME/.gemini.
	Path string
	// What says what in it the host's agent runs, for a notice.
	What string
	// File: the variable names a file, not a directory.
	File bool
	// Word: a word of a command line (CLAUDE_CODE_SHELL_PREFIX): what it
	// names may be a directory the program is given (its working tree),
	// not state of the agent's.
	Word bool
	// IfExists: a bare word of a command line ("python3 wrap.py"): a file
	// in the working directory only where one by that name exists.
	IfExists bool
}

// variable is one variable that moves an agent's state.
type variable struct {
	name, agent string
	// sub is the state directory below the variable's value ("" the value
	// itself); def is its usual place below the home directory.
	sub, def, what string
	// list: the value is a list of directories separated by ':' (the
	// path list separator the CLI splits it on), each one a state
	// directory.
	list bool
	// file: the value names a file.
	file bool
	// cmd: the value is a command line (cmd implies file); see cmdWords.
	cmd bool
}

var variables = []variable{
	{name: "CODEX_HOME", agent: "Codex", def: ".codex", what: "config.toml's notify, MCP servers and hooks run in your next codex"},
	{name: "CLAUDE_CONFIG_DIR", agent: "Claude Code", def: ".claude", what: "settings.json's hooks and .claude.json's MCP servers run in your next claude"},
	// Claude Code installs and loads its plugins from
	// $CLAUDE_CODE_PLUGIN_CACHE_DIR instead of ~/.claude/plugins, and loads
	// more from each folder of $CLAUDE_CODE_PLUGIN_SEED_DIR: a plugin brings
	// hooks and MCP servers (2.1.197 and 2.1.332).
	{name: "CLAUDE_CODE_PLUGIN_CACHE_DIR", agent: "Claude Code", def: ".claude/plugins", what: "its plugins' hooks and MCP servers run in your next claude"},
	{name: "CLAUDE_CODE_PLUGIN_SEED_DIR", agent: "Claude Code", what: "its plugins' hooks and MCP servers run in your next claude", list: true},
	// 2.1.332 also loads the plugin folders of CLAUDE_CODE_PLUGIN_DIRS (as
	// --plugin-dir does; entries trimmed) and runs MCP bundles unpacked
	// in CLAUDE_CODE_PLUGIN_MCPB_DIR (else plugins/mcpb).
	{name: "CLAUDE_CODE_PLUGIN_DIRS", agent: "Claude Code", what: "its plugins' hooks and MCP servers run in your next claude", list: true},
	{name: "CLAUDE_CODE_PLUGIN_MCPB_DIR", agent: "Claude Code", def: ".claude/plugins/mcpb", what: "the MCP bundles unpacked there run as MCP servers in your next claude"},
	// Its memories (projects/PROJECT/memory/, agent-memory-local/) are
	// read into every later session as the user's.
	{name: "CLAUDE_CODE_REMOTE_MEMORY_DIR", agent: "Claude Code", def: ".claude", what: "the memories there are read into your next claude sessions as yours"},
	// Files (2.1.197 and 2.1.332): CLAUDE_ENV_FILE's text is put ahead of
	// every Bash command; the two settings paths replace the managed
	// settings file and the managed settings' copy (hooks at the highest
	// rank); CLAUDE_CODE_SHELL is the shell every command runs in.
	{name: "CLAUDE_ENV_FILE", agent: "Claude Code", file: true, what: "its text runs before every Bash command of your next claude"},
	{name: "CLAUDE_CODE_MANAGED_SETTINGS_PATH", agent: "Claude Code", file: true, what: "your next claude reads it as managed settings, hooks included"},
	{name: "CLAUDE_CODE_REMOTE_SETTINGS_PATH", agent: "Claude Code", file: true, what: "your next claude reads it as your organization's managed settings, hooks included"},
	{name: "CLAUDE_CODE_SHELL", agent: "Claude Code", file: true, what: "your next claude runs its commands in it"},
	// Command lines (CLAUDE_CODE_SHELL_PREFIX is put in front of every
	// Bash command; Claude Code's own sandbox protects the paths in it).
	{name: "CLAUDE_CODE_SHELL_PREFIX", agent: "Claude Code", cmd: true, what: "your next claude runs every Bash command through it"},
	{name: "CLAUDE_CODE_PROCESS_WRAPPER", agent: "Claude Code", cmd: true, what: "your next claude starts its background sessions through it"},
	{name: "CLAUDE_CODE_TEAMMATE_COMMAND", agent: "Claude Code", cmd: true, what: "your next claude starts its teammates with it"},
	{name: "GEMINI_CLI_HOME", agent: "Gemini CLI", sub: ".gemini", def: ".gemini", what: "settings.json's hooks and MCP servers run in your next gemini"},
	// Qwen Code 0.15.10: QWEN_HOME replaces ~/.qwen (settings, extensions,
	// skills, locales it imports); QWEN_RUNTIME_DIR moves its runtime
	// data, the checkpoints' git repositories among it.
	{name: "QWEN_HOME", agent: "Qwen Code", def: ".qwen", what: "settings.json's hooks and MCP servers run in your next qwen"},
	{name: "QWEN_RUNTIME_DIR", agent: "Qwen Code", def: ".qwen", what: "your next qwen runs git in the checkpoint repositories there"},
}

// Moved returns the agent state directories env (the user's environment,
// KEY=VALUE) moves away from their usual place in home, for env's every
// reading: a variable set twice is taken both ways (a program reading
// environ with getenv takes the first, one started by a shell the last).
// A relative value is taken against cwd (where the agent would be started
// from), a value starting with "~/" both expanded against home (a shell's
// reading) and as named. An empty value moves nothing (the agents fall
// back to their usual place).
func Moved(env []string, home, cwd string) []Dir {
	var out []Dir
	seen := map[string]bool{}
	add := func(v variable, w word, p string) {
		value := w.text
		p = filepath.Join(p, v.sub)
		if !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		if home != "" && v.def != "" && p == filepath.Join(home, v.def) {
			return // the usual place: the home's protections hold there
		}
		if seen[v.name+"\x00"+p] {
			return
		}
		seen[v.name+"\x00"+p] = true
		out = append(out, Dir{Var: v.name, Value: value, Agent: v.agent, Path: p, What: v.what, File: v.file || v.cmd, Word: v.cmd, IfExists: w.bare})
	}
	for _, v := range variables {
		for _, kv := range env {
			all, ok := strings.CutPrefix(kv, v.name+"=")
			if !ok || all == "" {
				continue
			}
			values := []word{{text: all}}
			switch {
			case v.list:
				values = nil
				for _, e := range strings.Split(all, ":") {
					values = append(values, word{text: strings.TrimSpace(e)}) // as the CLI reads its lists
				}
			case v.cmd:
				values = cmdWords(all)
			}
			for _, w := range values {
				value := w.text
				if value == "" {
					continue // the CLI drops empty entries
				}
				if rest, tilde := strings.CutPrefix(value, "~/"); tilde && home != "" {
					add(v, w, filepath.Join(home, rest))
				}
				if filepath.IsAbs(value) {
					add(v, w, value)
				} else if cwd != "" {
					add(v, w, filepath.Join(cwd, value))
				}
			}
		}
	}
	return out
}

// word is one path a variable's value gives.
type word struct {
	text string
	bare bool // a command line's bare word: a file only where one exists
}

// cmdWords returns the words of a command line (quotes taken off) that
// name files: the program where it is a path ("./wrap.sh", not "python3",
// which the shell looks up in PATH), and every later word that is a path
// (absolute, "~/", or relative with a "/": "scripts/log.sh") or a bare
// name ("wrap.py", which python3 opens in the working directory); not the
// options ("-n", "--to") or assignments ("X=1") on the way. The host's
// agent runs the line through a shell in its working directory, so a
// relative word is a file there (session 25: "sh ./wrap.sh" left the
// script the agent's to write).
func cmdWords(line string) []word {
	var out []word
	for i, w := range strings.Fields(line) {
		w = strings.Trim(w, `"'`)
		switch {
		case w == "" || strings.HasPrefix(w, "-"):
		case strings.Contains(w, "/"): // absolute, "~/" or relative
			out = append(out, word{text: w})
		case i > 0 && !strings.Contains(w, "="):
			out = append(out, word{text: w, bare: true})
		}
	}
	return out
}
