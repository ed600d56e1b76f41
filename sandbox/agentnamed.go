package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/agentcfg"
	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/gitguard"
	"github.com/jail-sandbox/jail/hostpath"
	"github.com/jail-sandbox/jail/plainfile"
)

// maxNamedSource bounds what agentNamed reads of one guarded file (Claude
// Code's ~/.claude.json can hold megabytes of per-project state; past this,
// nothing in it is looked for).
const maxNamedSource = 32 << 20

// agentNamed returns the read-only masks and the watched absent paths for
// the files that the host's agent configuration runs by path (hook scripts,
// status line scripts, MCP servers' scripts, helpers; agentcfg.Named) and
// that lie inside a writable tree. The guard keeps the keys that name them
// as on the host, but the scripts themselves sit in the same writable state
// directory (~/.claude/statusline.sh, ~/.claude/hooks/, a project's
// .claude/hooks/): written by the agent, they would run on the host at the
// agent's next start outside jail. Read-only by mount, they cannot be
// written, replaced or removed (their directories are pinned like those of
// every mask); absent, they are watched and leave the tree if they appear.
// fm are fsrules' masks: a path masked already keeps its mask (a hidden
// file stays hidden).
//
// A symlink on the way to a script (the script itself, ~/.claude/statusline.sh
// -> scripts/real.sh, or a directory, ~/.claude/hooks -> ../dotfiles/hooks)
// is not what a mount protects: the mount lands on the link's target, and
// the link, an entry of a writable directory, can be replaced by a file or
// a directory of the agent's. Each such link inside a writable tree is
// returned as a guarded target of its own (format Whole): the guard keeps
// it a symlink to the same place, as it keeps a guarded file that is a
// symlink at start. The mask goes on the resolved path (a mount on a path
// through a symlink would pin the link's name, which the sandbox may not
// resolve).
//
// What the script's interpreter loads from beside it is protected too
// (agentcfg's beside.go has the rule; besides.add applies it), and notes
// says what is not; py are the agents' directories that hold a python
// script the configuration runs (PyDir).
func agentNamed(ts []agentcfg.Target, home, ws string, writable []string, roots []agentcfg.Root, fm []fsrules.Mask) (_ []fsrules.Mask, _ []fsrules.Absent, _ []agentcfg.Target, notes []string, py []PyDir, once map[string]bool) {
	if len(ts) == 0 {
		return nil, nil, nil, nil, nil, nil
	}
	have := make(map[string]bool, len(fm))
	for _, m := range fm {
		have[m.Path] = true
	}
	guarded := make(map[string]bool, len(ts))
	for _, t := range ts {
		guarded[t.Path] = true
	}
	var masks []fsrules.Mask
	var absent []fsrules.Absent
	var links []agentcfg.Target
	b := besides{home: home, ws: ws, writable: writable, roots: roots, ts: ts, have: have, guarded: guarded}
	for _, t := range ts {
		b.agent = t.File.Agent
		data, err := readAtMost(t.Path, maxNamedSource)
		if err != nil {
			continue // absent or unreadable: it names nothing the host runs
		}
		for _, n := range agentcfg.Named(t, data, agentcfg.Context{Workspace: ws}, home) {
			why := fmt.Sprintf("agent config: %s (%s) runs it", t.Path, n.Key)
			b.server = serverKey(n.Key)
			p, via, err := resolveNamed(n.Path)
			for _, l := range via {
				if guarded[l] {
					continue
				}
				r := enclosing(l, rootPaths(roots))
				if r == "" || r == l {
					continue // not writable inside, or the user's own -w of the link
				}
				guarded[l] = true
				links = append(links, agentcfg.Target{
					File: agentcfg.File{Agent: t.File.Agent, Scope: agentcfg.Home, Path: l, Format: agentcfg.Whole,
						Why: "a symlink on the way to " + n.Path + ", which " + why[len("agent config: "):]},
					Path: l, Root: r,
				})
			}
			if err != nil {
				continue // a link loop, or too deep: nothing there runs
			}
			if n.Dir {
				b.loadDir(p, t.Path, n.Key)
				continue
			}
			b.add(p, why, n.Interp)
			if n.Cwd {
				b.runFrom(p, why, "after a cd")
			}
			if ld, err := filepath.EvalSymlinks(filepath.Dir(n.Path)); err == nil && len(via) > 0 && ld != filepath.Dir(p) {
				// Why: the script is a symlink, and what lies beside the
				// link counts too: a shell's `. "$(dirname "$0")/lib.sh"`
				// and perl's $FindBin::Bin take $0 as given, not resolved
				// (python, node and ruby resolve it: the target's
				// directory, above). Unprotected, the agent plants lib.sh
				// beside the link and the host runs it (review15c).
				b.add(filepath.Join(ld, filepath.Base(n.Path)), why, n.Interp)
			}
			fi, err := os.Lstat(p)
			if errors.Is(err, fs.ErrNotExist) {
				// Written during the run, it would run on the host next
				// time: watched, it leaves the tree.
				if r := enclosing(p, writable); r != "" && r != p && !guarded[p] && !have[p] {
					have[p] = true
					absent = append(absent, fsrules.Absent{Path: p, Kind: fsrules.ReadOnly, Rule: why})
				}
				continue
			}
			if err != nil {
				continue
			}
			// A directory (a PATH entry, a working directory) is not made
			// read-only: the agent may need to write there.
			if !fi.Mode().IsRegular() {
				continue
			}
			// A -w FILE root is the user's explicit choice; a guarded file
			// is merged key by key, not frozen.
			if r := enclosing(p, writable); r == "" || r == p || guarded[p] || have[p] {
				continue
			}
			have[p] = true
			masks = append(masks, fsrules.Mask{Path: p, Kind: fsrules.ReadOnly, Rule: why})
		}
	}
	return append(masks, b.masks...), append(absent, b.absent...), append(links, b.links...), b.notes, b.pyDirs, b.once
}

// besides collects what protects the files loaded from beside named
// scripts (agentcfg's beside.go: the rule and why).
type besides struct {
	home, ws  string
	writable  []string
	roots     []agentcfg.Root
	ts        []agentcfg.Target
	agent     string          // the agent whose configuration names the script
	server    bool            // the key that names it is an MCP server's (serverKey)
	have      map[string]bool // paths masked or watched already
	guarded   map[string]bool // paths guarded (agentNamed's)
	agentDirs []string        // resolved, on the first add (most starts name no script)
	masks     []fsrules.Mask
	absent    []fsrules.Absent
	pyDirs    []PyDir
	links     []agentcfg.Target
	notes     []string
	once      map[string]bool // the notes said once (saidBefore)
}

// agentDirs are the agents' own directories (agentcfg.AgentDirs) of the
// home, the workspace and every project a guarded target lies in,
// resolved as the named scripts are.
func agentDirs(ts []agentcfg.Target, home, ws string) []string {
	projects := []string{ws}
	for _, t := range ts {
		if t.File.Scope == agentcfg.Project {
			projects = append(projects, strings.TrimSuffix(t.Path, "/"+t.File.Path))
		}
	}
	out := []string{} // not nil: computed once
	for _, d := range agentcfg.AgentDirs(home, projects) {
		if r, _, err := resolveNamed(d); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// add protects what the interpreter of script p (resolved) loads from
// beside it; why says which configuration runs p, interp the interpreter
// the line names p the script of ("" when none: agentcfg.NamedFile).
func (b *besides) add(p, why, interp string) {
	fi, err := os.Stat(p)
	isDir := err == nil && fi.IsDir()
	if isDir && interp == "" {
		return // a cd's directory, a PATH entry: its files are named on their own
	}
	// why is "agent config: FILE (KEY) runs it": say what "it" is.
	runs := strings.TrimSuffix(why, "it") + p
	dir := filepath.Dir(p)
	if isDir {
		// Why: an interpreter given a directory runs code in it
		// (`node ~/.claude/mcp/srv`: its package.json "main" or
		// index.js; `python3 DIR`: its __main__.py, with DIR first on
		// sys.path; `npx DIR`: its bin): the directory is the script's
		// own, made read-only whole as one holding a script is.
		dir = p
		runs += " (" + interp + " runs what it holds)"
	}
	agent, root := b.under(dir)
	if agent == "" {
		return // in the project, or elsewhere: not guarded (see beside.go)
	}
	if root == "" {
		return // not writable inside
	}
	up := dir
	// Why: python3 imports from the script's directory before the
	// standard library, node resolves node_modules there, a shell script
	// sources its neighbours: a directory of the script's own, below the
	// agent's directory, is made read-only whole. Not the agent's
	// directory itself (its state), nor a directory the user made
	// writable by name, the home, the workspace or one holding it, or one
	// holding a guarded file (merged key by key, it must stay writable).
	if dir != agent && dir != root && dir != b.home && enclosing(b.ws, []string{dir}) == "" && !b.holdsGuarded(dir) {
		was := b.have[dir]
		b.protect(dir, true, runs+", whose interpreter loads what lies beside it")
		up = filepath.Dir(dir)
		if !was && b.have[dir] {
			b.noteRuntime(dir, runs)
		}
	} else if dir == agent && err == nil && (agentcfg.PythonInterp(interp) || fi.Mode().IsRegular() && agentcfg.Python(p, head(p))) {
		// Why: python runs what it is given whatever its name
		// (`python3 ~/.claude/noext`, no .py, no #!): the line's
		// interpreter counts, as the script's name and #! line do.
		b.protect(filepath.Join(dir, agentcfg.PyCache), true, runs+", which python runs with the cached code of its neighbours from here")
		// Why: python imports from the script's directory first, and the
		// agent's directory stays writable (its state): the modules there
		// at start are read-only, and one the agent adds leaves the tree
		// (PyDir: the sentinel judges the directory).
		if !slices.ContainsFunc(b.pyDirs, func(d PyDir) bool { return d.Dir == dir }) {
			pd := newPyDir(dir, p)
			b.pyDirs = append(b.pyDirs, pd)
			for _, n := range pd.Had {
				if n == filepath.Base(p) {
					continue // the script: agentNamed's own
				}
				fi, err := os.Lstat(filepath.Join(dir, n))
				b.protect(filepath.Join(dir, n), err == nil && fi.IsDir(), runs+", which imports the modules beside it")
			}
		}
		b.notes = append(b.notes, fmt.Sprintf("agent script: %s runs in python, which imports modules from its directory first, "+
			"where the agent can write: the modules there are read-only and a new one leaves the tree, but keep the script in a directory of its own, such as %s/, which jail makes read-only whole",
			p, filepath.Join(agent, "hooks")))
	} else if isDir && (dir == agent || dir != root && b.holdsGuarded(dir)) {
		// Why: `node ~/.claude` runs what the agent's own directory
		// holds (its package.json "main", npx its "bin", or index.js),
		// and that directory stays writable (its state): the entry
		// files are protected one by one instead (scriptdirs2).
		b.entryFiles(dir, why, runs, interp)
	}
	if isDir && (interp == "uv" || interp == "uvx" || agentcfg.PackageManager(interp)) {
		// Why: uv given a directory (`uv run --project ~/.claude srv`,
		// `uvx --from DIR`) runs that project: its pyproject.toml, uv.lock
		// and .venv decide what runs, as after a cd into it (review16c:
		// in the agent's directory itself, which stays writable, they
		// were the agent's to rewrite). So does a package manager given
		// a directory (`npm --prefix ~/.claude run x`: its .npmrc's
		// script-shell, yarn's yarnPath in .yarnrc.yml).
		b.runFrom(p, why, "as "+interp+"'s project")
	}
	// Why: node walks up from the script for node_modules/ and the
	// nearest package.json; up to the agent's directory, they are the
	// agent's to plant.
	for d := up; enclosing(d, []string{agent}) != ""; d = filepath.Dir(d) {
		for _, l := range agentcfg.LoadedAbove {
			b.protect(filepath.Join(d, l.Name), l.Dir, runs+": node looks for "+l.Name+" in each directory above a script")
		}
		if d == agent {
			break
		}
	}
}

// runFrom protects directory p (resolved), which a command line of the
// configuration moves to before it runs something (agentcfg.NamedFile.Cwd:
// `cd ~/.claude/hooks && make`, `cd D && npm test`, `bash -c 'cd D &&
// ./x'`, `uv run --directory D`), as a script's own directory: what runs
// there reads what the directory holds (a Makefile, package.json,
// pyproject.toml, a neighbour sourced by relative name) whatever the
// program, so under an agent's directory it is read-only whole, or
// watched while absent (created inside, it leaves the tree), and
// node_modules/ and package.json above it up to the agent's directory are
// protected as above a script. The agent's directory itself (its state),
// or one holding a guarded file, cannot be: a note says so. Not a
// directory the user made writable by name, the home, or one holding the
// workspace.
func (b *besides) runFrom(p, why, how string) {
	agent, root := b.under(p)
	if agent == "" || root == "" {
		return // in the project, or elsewhere: not guarded (see beside.go)
	}
	// why is "agent config: FILE (KEY) runs it": say what "it" is.
	runs := strings.TrimSuffix(why, "it") + "what it holds (a cd moves there)"
	up := p
	switch {
	case p == root && p != agent, p == b.home, enclosing(b.ws, []string{p}) != "":
		return // the user's -w of it by name, the home, the workspace: their choice
	case p == agent || b.holdsGuarded(p):
		// Why: the directory stays writable (the agent's state), so the
		// files a program started there reads to decide what to run
		// (`cd ~/.claude && make`: the Makefile) are protected one by
		// one; what else it reads there is said.
		for _, n := range agentcfg.RunFromFiles {
			b.protect(filepath.Join(p, n), false, runs+": a program started there reads "+n)
		}
		for _, n := range agentcfg.RunFromDirs {
			b.protect(filepath.Join(p, n), true, runs+": a program started there runs what "+n+" holds")
		}
		b.notes = append(b.notes, fmt.Sprintf("agent script: %s runs a program in %s "+how+", "+
			"where the agent can write: the files programs read there to decide what to run (Makefile, package.json, pyproject.toml...) are read-only or leave the tree if created, "+
			"but what else it reads there (a script by relative name, a file it opens) runs outside jail the next time the hook runs; "+
			"keep what it runs in a directory of its own, such as %s/, which jail makes read-only whole",
			strings.TrimSuffix(strings.TrimPrefix(why, "agent config: "), " runs it"), p, filepath.Join(agent, "hooks")))
	default:
		// Why: `cd ~/.claude/hooks && make` names no script, but make
		// runs the Makefile there (npm its package.json, uv its
		// pyproject.toml, a shell ./lib.sh): written by the agent, it
		// runs on the host at the hook's next run outside jail. The
		// directory is read-only whole, as a script's own is.
		was := b.have[p]
		b.protect(p, true, runs+", which a program run there reads")
		up = filepath.Dir(p)
		if !was && b.have[p] {
			b.noteRuntime(p, runs)
		}
	}
	// Why: node walks up from where it runs for node_modules/ and the
	// nearest package.json (npm too): up to the agent's directory, they
	// are the agent's to plant.
	for d := up; enclosing(d, []string{agent}) != ""; d = filepath.Dir(d) {
		for _, l := range agentcfg.LoadedAbove {
			b.protect(filepath.Join(d, l.Name), l.Dir, runs+": node looks for "+l.Name+" in each directory above where it runs")
		}
		if d == agent {
			break
		}
	}
}

// maxPackageJSON bounds what entryFiles reads of a package.json, and
// maxEntries the entry files it protects ("main" and "bin" together).
const (
	maxPackageJSON = 1 << 20
	maxEntries     = 16
)

// entryFiles protects what interp runs of directory dir (resolved), which
// cannot be read-only whole (the agent's directory itself, or one
// holding a guarded file): its package.json's "main" and "bin" files
// (package.json itself is read-only above: LoadedAbove), and the
// index.js, index.json and index.node node falls back to. Each is
// read-only, or watched while absent; one in a subdirectory is judged as
// a script there (its directory read-only whole). An entry outside dir
// is left (no rule of this file covers it). A note says what is not
// covered: what the entry files load by relative name.
func (b *besides) entryFiles(dir, why, runs, interp string) {
	var entries []string
	if data, err := readAtMost(filepath.Join(dir, "package.json"), maxPackageJSON); err == nil {
		var pkg struct {
			Main string          `json:"main"`
			Bin  json.RawMessage `json:"bin"`
		}
		if json.Unmarshal(data, &pkg) == nil {
			entries = append(entries, pkg.Main)
			var one string
			var many map[string]string
			if json.Unmarshal(pkg.Bin, &one) == nil {
				entries = append(entries, one)
			} else if json.Unmarshal(pkg.Bin, &many) == nil {
				for _, v := range many {
					entries = append(entries, v)
				}
			}
		}
	}
	entries = slices.DeleteFunc(entries, func(e string) bool { return e == "" })
	slices.Sort(entries)
	entries = slices.Compact(entries)
	if len(entries) > maxEntries {
		// Why: each entry is a mount; a package.json naming thousands
		// of bins must not make thousands. Past the bound they are
		// not protected, and the line says so.
		b.notes = append(b.notes, fmt.Sprintf("agent script: %s/package.json names %d entry files; the first %d are read-only, the rest are the agent's to rewrite: move the program into a directory of its own",
			dir, len(entries), maxEntries))
		entries = entries[:maxEntries]
	}
	// node's folder fallbacks (a "main" without its extension too).
	var files []string
	for _, e := range entries {
		if e == "" || filepath.IsAbs(e) {
			continue
		}
		f := filepath.Join(dir, e)
		if slices.Contains(strings.Split(e, "/"), "..") || !strings.HasPrefix(f, dir+"/") {
			continue // outside dir (or through a link's ..): not this rule's
		}
		files = append(files, f)
		if filepath.Ext(f) == "" {
			files = append(files, f+".js", f+".json", f+".node", filepath.Join(f, "index.js"))
		}
	}
	files = append(files, filepath.Join(dir, "index.js"), filepath.Join(dir, "index.json"), filepath.Join(dir, "index.node"))
	for _, f := range files {
		r, via, err := resolveNamed(f)
		if err != nil {
			continue // a link loop: nothing there runs
		}
		// Why: a mount lands on a link's target, and the link (lib ->
		// elsewhere, index.js -> x.js) is an entry the agent could
		// replace: protect keeps it a link to the same place.
		for _, l := range via {
			b.protect(l, l != f, runs+": "+interp+" runs "+f+" as the directory's entry")
		}
		f = r
		b.protect(f, false, runs+": "+interp+" runs it as the directory's entry")
		if filepath.Dir(f) != dir {
			// Why: lib/main.js loads its neighbours as a script does.
			b.add(f, why, interp)
		}
	}
	b.notes = append(b.notes, fmt.Sprintf("agent script: %s runs %s itself (%s runs its package.json \"main\" or \"bin\", or index.js), "+
		"where the agent keeps its state and can write: those entry files are read-only, but what they load from there by relative name is the agent's; "+
		"keep the program in a directory of its own, such as %s/, which jail makes read-only whole",
		strings.TrimSuffix(strings.TrimPrefix(why, "agent config: "), " runs it"), dir, interp, filepath.Join(dir, "mcp", "NAME")))
}

// serverKey reports whether configuration key k (agentcfg.NamedFile.Key,
// display form) configures MCP servers: Claude Code's mcpServers (and a
// project's), Codex's mcp_servers, Gemini's mcp, a .mcp.json's whole.
func serverKey(k string) bool {
	return strings.Contains(strings.ToLower(k), "mcp")
}

// maxRuntimeScan bounds the entries of a script directory noteRuntime
// looks at (a directory of hooks holds a few; one that holds thousands is
// state, said from what the first ones show).
const maxRuntimeScan = 256

// noteRuntime says, once per run, that script directory dir (made
// read-only, runs says which configuration runs what in it) holds files
// that something writes while it runs (agentcfg.RuntimeData: hook.log,
// state.json, a logs/ directory): the hook or server that writes them
// fails inside with "Read-only file system", which the agent's own
// display may not show (Claude Code shows a failed hook's output in its
// verbose mode only), so the user learns it here, with the fixes. The
// directory stays read-only: written by the agent, what lies beside the
// script runs on the host (beside.go). A directory that holds none of
// them, of a script an MCP server's key names, gets a line too: a server
// that creates its state there for the first time fails the same way,
// and a write the mount refuses leaves nothing jail could report later.
func (b *besides) noteRuntime(dir, runs string) {
	f, err := os.Open(dir)
	if err != nil {
		return
	}
	ents, _ := f.ReadDir(maxRuntimeScan)
	f.Close()
	var names []string
	for _, e := range ents {
		if agentcfg.RuntimeData(e.Name(), e.IsDir()) {
			n := e.Name()
			if e.IsDir() {
				n += "/"
			}
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		// Why: a server or hook that creates its state, logs or packages
		// beside its code for the first time fails inside, and a write a
		// read-only mount refuses leaves no trace jail could report: said
		// at start, with the fixes (scriptdirs2), once per directory and
		// configuration (b.once: the run remembers it in the state
		// directory), not at every start.
		if b.once == nil {
			b.once = map[string]bool{}
		}
		if b.server {
			b.notes = append(b.notes, fmt.Sprintf("agent script: %s is read-only (%s): an MCP server that creates its state, logs or packages there "+firstWriteMark+" with \"Read-only file system\", "+
				"which jail cannot see; keep them outside it (such as %s/, or the data directory the server takes from an argument or an environment variable), or pass -w %s to let the agent change what runs there",
				dir, strings.TrimPrefix(runs, "agent config: "), filepath.Join(filepath.Dir(dir), "data"), dir))
		} else {
			b.notes = append(b.notes, fmt.Sprintf("agent script: %s is read-only (%s): a hook or helper that creates a log, state or cache there "+firstWriteMark+" with \"Read-only file system\", "+
				"which jail cannot see (an agent may show that only in a verbose mode); keep them outside it (such as %s/), or pass -w %s to let the agent change what runs there",
				dir, strings.TrimPrefix(runs, "agent config: "), filepath.Join(filepath.Dir(dir), "logs"), dir))
		}
		b.once[b.notes[len(b.notes)-1]] = true
		return
	}
	slices.Sort(names)
	if len(names) > 4 {
		names = append(names[:4], "...")
	}
	b.notes = append(b.notes, fmt.Sprintf("agent script: %s is read-only (%s) but holds %s, written at runtime by the look of it: "+
		"a hook or server that writes there fails inside with \"Read-only file system\" (an agent may show that only in a verbose mode); "+
		"keep logs and state outside it (such as %s/), or pass -w %s to let the agent change what runs there",
		dir, strings.TrimPrefix(runs, "agent config: "), strings.Join(names, ", "), filepath.Join(filepath.Dir(dir), "logs"), dir))
}

// loadDir protects directory p (resolved), which the configuration in
// file (key) puts on a load path (agentcfg.NamedFile.Dir: PATH,
// PYTHONPATH, NODE_PATH in an env map or a hook's command line), when it
// lies under an agent's directory (~/.claude/bin, a project's
// .claude/py): read-only whole, or watched while it does not exist.
// Elsewhere it is not: the home's own PATH directories (~/bin,
// ~/.local/bin) are built-ins, and the project is the agent's to write.
// Not when it is the agent's directory itself (its state: a note says
// so), a directory the user made writable by name, the home, one holding
// the workspace or a guarded file.
func (b *besides) loadDir(p, file, key string) {
	agent, root := b.under(p)
	if agent == "" || root == "" {
		return // not the agent's, or not writable inside
	}
	why := fmt.Sprintf("agent config: %s (%s) puts it on a load path", file, key)
	switch {
	case p == root && p != agent:
		return // the user's -w of it by name: their choice
	case p == agent || p == b.home || enclosing(b.ws, []string{p}) != "" || b.holdsGuarded(p):
		b.notes = append(b.notes, fmt.Sprintf("agent script: %s (%s) puts %s on a load path (PATH, PYTHONPATH, NODE_PATH...), "+
			"where the agent can write: a program or module it plants there runs outside jail when the host's hooks call it by name; "+
			"keep them in a directory of their own, such as %s/, which jail makes read-only", file, key, p, filepath.Join(agent, "bin")))
		return
	}
	// Why: a hook's `python3`, `git` or `node` is the first one found on
	// PATH, an import the first module found on PYTHONPATH: what the agent
	// writes in such a directory runs in the host's next run of a hook
	// outside jail. Everything in it counts, so the whole directory is
	// read-only (a data directory is not on a load path: not touched).
	b.protect(p, true, why)
}

// holdsGuarded reports whether a guarded file lies inside dir.
func (b *besides) holdsGuarded(dir string) bool {
	for _, t := range b.ts {
		if strings.HasPrefix(t.Path, dir+"/") {
			return true
		}
	}
	return false
}

// protect makes p read-only when it exists, or watches it while it does
// not (created inside, it leaves the tree), when it lies in a writable
// tree and is not the root itself.
func (b *besides) protect(p string, dir bool, why string) {
	if r := enclosing(p, b.writable); r == "" || r == p || b.have[p] {
		return
	}
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		b.absent = append(b.absent, fsrules.Absent{Path: p, Dir: dir, Kind: fsrules.ReadOnly, Rule: why})
	case err != nil:
		return
	case fi.IsDir() || fi.Mode().IsRegular():
		b.masks = append(b.masks, fsrules.Mask{Path: p, Kind: fsrules.ReadOnly, Dir: fi.IsDir(), Rule: why})
	case fi.Mode()&fs.ModeSymlink != 0:
		// Why: a mount would land on the link's target, and the link, an
		// entry of a writable directory, could be replaced by the agent's
		// own node_modules: it is guarded as a symlink to the same place
		// (as agentNamed's links), and its target protected.
		b.have[p] = true
		if r := enclosing(p, rootPaths(b.roots)); r != "" && r != p && !b.guarded[p] {
			b.guarded[p] = true
			b.links = append(b.links, agentcfg.Target{
				File: agentcfg.File{Agent: b.agent, Scope: agentcfg.Home, Path: p, Format: agentcfg.Whole, Why: "a symlink, kept as one: " + why},
				Path: p, Root: r,
			})
		}
		if real, _, err := resolveNamed(p); err == nil && real != p {
			b.protect(real, dir, why)
		}
		return
	default:
		return // a FIFO, a socket, a device: nothing loads code from it
	}
	b.have[p] = true
}

// head is the start of file p (its #! line), or nil.
func head(p string) []byte {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := io.ReadFull(f, buf)
	return buf[:n]
}

// resolveNamed resolves the symlinks on the way to p (and p's own) as the
// kernel does (a ".." after a link is taken from the link's target); via
// are the symlinks met, in order. Where a component is missing, the rest
// is joined as named (p is absent: watched there). A loop or more than 40
// links is an error.
func resolveNamed(p string) (real string, via []string, err error) {
	return resolveNamedBy(nil, p)
}

// resolveNamedBy is resolveNamed with r's lookups (nil: afresh).
func resolveNamedBy(r *hostpath.Resolver, p string) (real string, via []string, err error) {
	if !filepath.IsAbs(p) {
		p = "/" + p
	}
	real, links, err := r.ResolveAsNamed(p)
	for _, l := range links {
		via = append(via, l.Path)
	}
	return real, via, err
}

// gitLinks returns guarded targets (format Whole: kept a symlink to the
// same place) for the symlinks gitguard met on the way to what it
// protects (gitguard.Plan.Links: a global core.hooksPath of ws/hl ->
// hooks). The mount protects the target; the link, an entry of a writable
// directory, would otherwise be replaced by a directory of the agent's,
// whose hooks every repository of the host then runs. have are the
// targets guarded already.
func gitLinks(links []gitguard.Protect, roots []agentcfg.Root, have []agentcfg.Target) []agentcfg.Target {
	return linkTargets("git", links, roots, have)
}

// linkTargets guards each link of links that lies inside a writable root
// (not a root itself, not guarded already) as agent's (named in the plan
// and the events).
func linkTargets(agent string, links []gitguard.Protect, roots []agentcfg.Root, have []agentcfg.Target) []agentcfg.Target {
	var out []agentcfg.Target
	seen := make(map[string]bool, len(have))
	for _, t := range have {
		seen[t.Path] = true
	}
	for _, l := range links {
		r := enclosing(l.Path, rootPaths(roots))
		if r == "" || r == l.Path || seen[l.Path] {
			continue // not writable inside, the user's own -w of the link, or guarded
		}
		seen[l.Path] = true
		out = append(out, agentcfg.Target{
			File: agentcfg.File{Agent: agent, Scope: agentcfg.Home, Path: l.Path, Format: agentcfg.Whole, Why: l.Why},
			Path: l.Path, Root: r,
		})
	}
	return out
}

// jailDirLinks guards each symlink on the way to one of jail's own
// directories (dirs: as the next run names them, $XDG_CONFIG_HOME/jail and
// the like) that lies inside a writable root. The plan masks where such a
// link points now, but the link itself is the agent's to replace: with
// ~/.config/jail a symlink into a dotfiles tree (GNU stow's way) and
// ~/.config the workspace, the agent removed the link and made a
// directory there, whose config.toml (write, net, no-default-deny) or
// trust.json every later run read as the user's (review14d). Guarded,
// the link comes back and what the agent put there is moved aside, as for
// git's links.
func jailDirLinks(dirs []string, roots []agentcfg.Root, have []agentcfg.Target) []agentcfg.Target {
	var links []gitguard.Protect
	for _, d := range dirs {
		for _, l := range linksOn(d) {
			links = append(links, gitguard.Protect{Path: l, Why: "a symlink on the way to jail's own directory " + d + ", which every later run follows"})
		}
	}
	return linkTargets("jail", links, roots, have)
}

// linksOn returns the symlinks the kernel follows on its way to p, each
// by the path it has at that point (after the links before it), up to
// the first component that does not exist; a dangling link is returned
// too (it is where the next run would look).
func linksOn(p string) []string {
	var out []string
	todo := strings.Split(filepath.Clean(p), "/")
	cur := "/"
	for len(todo) > 0 {
		part := todo[0]
		todo = todo[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur) // cur holds no link: the kernel's ".." too
			continue
		}
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if err != nil {
			return out
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		out = append(out, next)
		target, err := os.Readlink(next)
		if err != nil || len(out) > 40 {
			return out // unreadable, or a loop: the kernel stops here too
		}
		// Followed one link at a time, so that a link to a link is named
		// too (each is a place the agent might rewrite).
		if filepath.IsAbs(target) {
			cur = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return out
}

// rootPaths are the paths of roots (for enclosing).
func rootPaths(roots []agentcfg.Root) []string {
	out := make([]string, len(roots))
	for i, r := range roots {
		out[i] = r.Path
	}
	return out
}

// readAtMost reads p when it is a regular file of at most max bytes, or a
// symlink to one (a settings file kept in a dotfiles repository: the
// agent's loader follows the link, so what it names counts): plainfile's
// reader of named files. A FIFO or a device in its place (left by an
// earlier run) is refused before it is opened, the open cannot block, and
// what was opened is checked again (a swap between the look and the open).
func readAtMost(p string, max int64) ([]byte, error) {
	return plainfile.ReadNamed(p, max, errNotRegular)
}

// errNotRegular: an agent configuration file that is no regular file (or
// link to one) names nothing jail reads.
var errNotRegular = errors.New("not a regular file")

// under returns the agent's directory and the writable tree p lies in
// ("" for none), finding the agents' directories at first use.
func (b *besides) under(p string) (agent, root string) {
	if b.agentDirs == nil {
		b.agentDirs = agentDirs(b.ts, b.home, b.ws)
	}
	return enclosing(p, b.agentDirs), enclosing(p, b.writable)
}
