package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/sentinel"
)

// PyDir is an agent's directory that holds a python script the host's
// agent configuration runs (~/.codex/notify.py for Codex's notify =
// ["python3", "~/.codex/notify.py"]). python3 imports from the script's
// directory before its own library, but that directory is the agent's
// state and stays writable (agentcfg's beside.go): the modules in it at
// start are read-only, and a module the agent adds (pyModule) is moved
// out of the tree by the sentinel while the sandbox runs, at exit, and
// at the next start after a killed supervisor.
type PyDir struct {
	Dir string `json:"dir"`
	// Script is the script that imports from Dir (the first one found).
	Script string `json:"script"`
	// Had are Dir's entries that were modules at start (sorted): theirs
	// to keep (read-only by mount).
	Had []string `json:"had,omitempty"`
	// Dirs are Dir's directories named as a package could be but with no
	// __init__ at start (~/.claude/todos/): an __init__ added to one
	// leaves.
	Dirs []string `json:"dirs,omitempty"`
}

// pyModule reports whether an entry named name, of type t, is what
// python's import finds in a directory on sys.path: a source module
// (.py), a module with no source (.pyc), an extension module (.so:
// json.cpython-311-x86_64-linux-gnu.so, json.abi3.so), a package (a
// directory with an __init__ of one of those kinds; one without is a
// namespace portion, which a module of the same name later on sys.path
// wins over). A symlink counts by its name, whatever it leads to (the
// import follows it).
func pyModule(dir, name string, t os.FileMode) bool {
	switch filepath.Ext(name) {
	case ".py", ".pyc", ".so":
		return true
	}
	if t&os.ModeSymlink != 0 {
		return pyIdent(name)
	}
	return t.IsDir() && pyIdent(name) && hasInit(filepath.Join(dir, name))
}

// pyIdent reports whether name is a python identifier in ASCII (what
// `import name` can name; a package directory is named so).
func pyIdent(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// hasInit reports whether directory d holds an __init__ module.
func hasInit(d string) bool {
	ents, err := os.ReadDir(d)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if n := e.Name(); strings.HasPrefix(n, "__init__.") && pyModule(d, n, e.Type()&^os.ModeDir) {
			return true
		}
	}
	return false
}

// newPyDir lists what dir holds at start for the PyDir of script.
func newPyDir(dir, script string) PyDir {
	pd := PyDir{Dir: dir, Script: script}
	ents, _ := os.ReadDir(dir) // sorted
	for _, e := range ents {
		switch n := e.Name(); {
		case pyModule(dir, n, e.Type()):
			pd.Had = append(pd.Had, n)
		case e.IsDir() && pyIdent(n):
			pd.Dirs = append(pd.Dirs, n)
		}
	}
	return pd
}

// pyJudge judges the PyDirs for the sentinel: a directory that is one of
// them, or a directory in one that is no package (observed until it
// holds an __init__).
type pyJudge struct {
	dirs map[string]*PyDir
	subs map[string]pySub
}

// pySub is a directory in a PyDir that was no package when last looked at.
type pySub struct {
	pd  *PyDir
	old bool // there at start: the user's; only an __init__ added leaves
}

func newPyJudge(ds []PyDir) *pyJudge {
	if len(ds) == 0 {
		return nil
	}
	j := &pyJudge{dirs: map[string]*PyDir{}, subs: map[string]pySub{}}
	for i := range ds {
		pd := &ds[i]
		j.dirs[pd.Dir] = pd
		for _, d := range pd.Dirs {
			j.subs[filepath.Join(pd.Dir, d)] = pySub{pd: pd, old: true}
		}
	}
	return j
}

// observe are the directories to watch from the start.
func (j *pyJudge) observe() []string {
	var out []string
	for d := range j.dirs {
		out = append(out, d)
	}
	for d := range j.subs {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// inspect judges dir after a change to names (nil: everything); ok is
// false when dir is none of the judge's.
func (j *pyJudge) inspect(dir string, names []string) (items []sentinel.Item, observe []string, ok bool) {
	if j == nil {
		return nil, nil, false
	}
	if sub, ok := j.subs[dir]; ok {
		// A directory that is no package: one once an __init__ appears.
		if names != nil && !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "__init__.") }) {
			return nil, nil, true // the agent's state changing (~/.claude/todos/)
		}
		if !sub.old {
			if hasInit(dir) {
				items = append(items, j.item(sub.pd, dir))
			}
			return items, nil, true
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if n := e.Name(); strings.HasPrefix(n, "__init__.") && pyModule(dir, n, e.Type()&^os.ModeDir) {
				items = append(items, j.item(sub.pd, filepath.Join(dir, n)))
			}
		}
		return items, nil, true
	}
	pd, ok := j.dirs[dir]
	if !ok {
		return nil, nil, false
	}
	if names == nil {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, nil, true
		}
		for _, e := range ents {
			names = append(names, e.Name())
		}
	}
	for _, n := range names {
		if ext := filepath.Ext(n); ext != ".py" && ext != ".pyc" && ext != ".so" && !pyIdent(n) {
			continue // no module by its name (~/.claude/.credentials.json): no lstat per event
		}
		p := filepath.Join(dir, n)
		if strings.HasPrefix(n, sentinel.AsidePrefix) || slices.Contains(pd.Had, n) || j.subs[p].old {
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil {
			continue // gone again
		}
		switch {
		case pyModule(dir, n, fi.Mode().Type()):
			items = append(items, j.item(pd, p))
		case fi.IsDir() && pyIdent(n) && j.subs[p].pd == nil:
			// Empty when made: watched until an __init__ appears in it.
			j.subs[p] = pySub{pd: pd}
			observe = append(observe, p)
		}
	}
	return items, observe, true
}

func (j *pyJudge) item(pd *PyDir, p string) sentinel.Item {
	return sentinel.Item{Path: p, Rule: "agent script: " + pd.Script,
		Reason: "a python module that was not there at start, beside " + pd.Script + ", which the host's agent configuration runs in python (it imports from its directory first)"}
}

// check judges every PyDir and the directories in them that were there
// at start (the exit check, and a killed run's): a new package is a new
// entry of its PyDir.
func (j *pyJudge) check() []sentinel.Item {
	if j == nil {
		return nil
	}
	var out []sentinel.Item
	for _, d := range j.observe() {
		if _, ok := j.dirs[d]; ok || j.subs[d].old {
			items, _, _ := j.inspect(d, nil)
			out = append(out, items...)
		}
	}
	return out
}
