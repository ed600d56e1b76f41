package agentcfg

import (
	"bytes"
	"path/filepath"
	"strings"
)

// What a named script's interpreter loads besides the script (review13f).
// Making the script read-only is not enough: python3 puts the script's
// directory first on sys.path (json.py, a sourceless json.pyc or a json/
// package there is imported instead of the standard library's, by the
// script and by every module it imports; __pycache__/ holds the cached
// code of the modules beside it), node resolves require() and import
// through node_modules/ in the script's directory and in every directory
// above it, and reads the nearest package.json ("type", "imports"). A
// shell script sources its neighbours by name. The rule (sandbox's
// agentNamed applies it):
//
//   - A script in a directory of its own under an agent's directory
//     (~/.claude/hooks/h.py, a project's .claude/hooks/x.sh, not ~/.claude
//     itself): that directory is read-only, so nothing can be planted
//     beside the script (or watched, when it does not exist yet: created
//     inside, it leaves the tree). Not when the directory is a writable
//     root of its own (the user's -w of it), the home or the workspace.
//   - Above that directory, up to and including the agent's directory:
//     node_modules/ and package.json are read-only when they exist and
//     watched when they do not (node walks up past them to ~ and /, which
//     are not writable unless the user made them so).
//   - A python script directly in the agent's directory (~/.claude/x.py,
//     ~/.codex/notify.py): that directory is the agent's own state and
//     stays writable; its __pycache__/ is protected as above, the modules
//     there at start are read-only, a module added during the run (what
//     python's import finds there: .py, .pyc, .so, a package) leaves the
//     tree (sandbox's PyDir), and the plan says to keep the script in a
//     directory of its own.
//   - A directory the configuration puts on a load path (NamedFile.Dir:
//     PATH=~/.claude/bin, PYTHONPATH, NODE_PATH in an env map or a
//     hook's line): everything in it is found by name, so under an
//     agent's directory it is read-only whole (watched when absent); the
//     agent's directory itself is announced instead.
//   - A script in the project (not under its .claude/ and the like): the
//     project is the agent's to write, and the user runs its code anyway;
//     not guarded.

// AgentDirs returns the agents' own directories that Files names under
// home and under each of projects (~/.claude, ~/.codex, a project's
// .claude or .github/copilot): the directory of each table path that has
// one. home or a project may be empty (skipped).
func AgentDirs(home string, projects []string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(base, rel string) {
		if base == "" {
			return
		}
		p := filepath.Join(base, rel)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, f := range Files {
		d := filepath.Dir(f.Path)
		if d == "." || filepath.IsAbs(f.Path) {
			continue
		}
		switch f.Scope {
		case Home:
			add(home, d)
		case Project:
			for _, p := range projects {
				add(p, d)
			}
		}
	}
	return out
}

// LoadedAbove are the names node looks up in a script's directory and in
// each directory above it: a package there is what require("dep") finds,
// and the nearest package.json decides how the script is read.
var LoadedAbove = []struct {
	Name string
	Dir  bool
}{{"node_modules", true}, {"package.json", false}}

// RunFromFiles are the files a program started in a directory reads
// there to decide what to run: make's Makefile, just's and task's files,
// uv's and pip's pyproject.toml, deno's and bun's configuration, npm's
// .npmrc (script-shell, node-options; package.json and node_modules/ are
// LoadedAbove's), cargo's
// manifest (its build.rs runs), rake's and setup.py; yarn's .yarnrc.yml
// and .yarnrc (yarnPath: yarn runs that file), pnpm's .pnpmfile.cjs (its
// hooks run at install); uv's lock (where
// each package comes from: a path or URL it builds and installs) and
// .python-version (an interpreter request may be a path), setuptools'
// setup.cfg. The sandbox keeps them read-only (watched while absent) in
// an agent's own directory that a hook cds into or uv is given as its
// project, which cannot be read-only whole (its state).
var RunFromFiles = []string{
	"Makefile", "makefile", "GNUmakefile", "justfile", "Justfile", ".justfile", "Taskfile.yml", "Taskfile.yaml",
	"pyproject.toml", "uv.toml", "uv.lock", ".python-version", "setup.py", "setup.cfg",
	"deno.json", "deno.jsonc", "bunfig.toml", ".npmrc", ".yarnrc.yml", ".yarnrc", ".pnpmfile.cjs", "Cargo.toml", "Rakefile",
}

// RunFromDirs are RunFromFiles' directories: uv's project environment
// (`uv run` in a project runs .venv/bin's programs with its python,
// which runs the site-packages' .pth files at every start).
var RunFromDirs = []string{".venv"}

// PyCache is the directory beside a python module that holds its
// compiled code (checked against the source's size and mtime only).
const PyCache = "__pycache__"

// Python reports whether the script at path, which starts with head,
// runs in python: its name ends in .py or .pyw, or its #! line names a
// python.
func Python(path string, head []byte) bool {
	if ext := filepath.Ext(path); ext == ".py" || ext == ".pyw" {
		return true
	}
	if !bytes.HasPrefix(head, []byte("#!")) {
		return false
	}
	line, _, _ := bytes.Cut(head, []byte("\n"))
	for _, w := range strings.Fields(string(line[2:])) {
		if b := filepath.Base(w); strings.HasPrefix(b, "python") || strings.HasPrefix(b, "pypy") {
			return true
		}
	}
	return false
}

// RuntimeData reports whether an entry named name (dir: a directory) of a
// script's directory looks written while the script runs rather than
// code: a log (hook.log, hook.log.1, events.jsonl), a database, a pid or
// lock file, a state, cache, history, session or token file, a logs/,
// state/, data/, cache/ or tmp/ directory. It only chooses what the
// sandbox names in a note on a read-only script directory: nothing is
// made writable by it (a name says nothing of what a loader makes of a
// file).
func RuntimeData(name string, dir bool) bool {
	n := strings.ToLower(name)
	if dir {
		switch strings.TrimPrefix(n, ".") {
		case "log", "logs", "state", "data", "cache", "tmp", "sessions", "history":
			return true
		}
		return false
	}
	switch filepath.Ext(n) {
	case ".log", ".jsonl", ".ndjson", ".db", ".sqlite", ".sqlite3", ".db-wal", ".db-shm", ".db-journal", ".pid", ".err":
		return true // not .lock: yarn.lock, uv.lock are the package's own
	}
	if strings.Contains(n, ".log.") {
		return true // hook.log.1, rotated
	}
	switch filepath.Ext(n) {
	case ".json", ".txt", ".yaml", ".yml", ".toml", "":
		stem := strings.TrimSuffix(n, filepath.Ext(n))
		for _, w := range strings.FieldsFunc(stem, func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9') }) {
			switch strings.TrimSuffix(w, "s") {
			case "state", "cache", "history", "session", "token", "log":
				return true
			}
		}
	}
	return false
}
