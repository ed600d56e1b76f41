package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The python judge (PyDir): in an agent's directory that holds a python
// script the configuration runs, what python's import finds and was not
// there at start leaves (a module, a sourceless .pyc, an extension
// module, a package, a symlink by a module's name, an __init__ added to a
// directory that was there); the agent's other state, and the modules
// there at start, stay.
func TestPyJudge(t *testing.T) {
	d, _ := filepath.EvalSymlinks(t.TempDir())
	mk := func(rel, s string) {
		t.Helper()
		p := filepath.Join(d, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("notify.py", "import json\n")
	mk("helper.py", "")
	mk("oldpkg/__init__.py", "")
	mk("todos/t.json", "[]")
	mk("shell-snapshots/s.sh", "")
	os.Mkdir(filepath.Join(d, "empty"), 0o755)
	pd := newPyDir(d, filepath.Join(d, "notify.py"))
	if !slices.Equal(pd.Had, []string{"helper.py", "notify.py", "oldpkg"}) || !slices.Equal(pd.Dirs, []string{"empty", "todos"}) {
		t.Fatalf("PyDir at start: had %q dirs %q", pd.Had, pd.Dirs)
	}
	j := newPyJudge([]PyDir{pd})
	mk("notyet/x.txt", "")
	// While the run goes: a new directory is observed, and leaves once it
	// holds an __init__; events of the agent's state are not looked into.
	its, obs, ok := j.inspect(d, []string{"notyet", "history.jsonl"})
	if !ok || len(its) != 0 || !slices.Equal(obs, []string{filepath.Join(d, "notyet")}) {
		t.Fatalf("inspect: items %v observe %q ok %v", its, obs, ok)
	}
	if its, _, _ := j.inspect(filepath.Join(d, "notyet"), []string{"x.txt"}); len(its) != 0 {
		t.Errorf("notyet/x.txt: items %v", its)
	}
	mk("notyet/__init__.pyc", "x")
	its, _, _ = j.inspect(filepath.Join(d, "notyet"), []string{"__init__.pyc"})
	if len(its) != 1 || its[0].Path != filepath.Join(d, "notyet") {
		t.Errorf("new package: items %v", its)
	}
	os.Remove(filepath.Join(d, "notyet/__init__.pyc"))
	// The agent's moves.
	mk("json.py", "print('PWNED')")
	mk("re.pyc", "x")
	mk("_socket.cpython-311-x86_64-linux-gnu.so", "x")
	mk("os/__init__.py", "")
	mk("todos/__init__.py", "")
	mk("history.jsonl", "{}")
	mk("todos/u.json", "[]")
	if err := os.Symlink("/elsewhere/mod", filepath.Join(d, "subprocess")); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range j.check() {
		got = append(got, it.Path[len(d)+1:])
	}
	slices.Sort(got)
	want := []string{"_socket.cpython-311-x86_64-linux-gnu.so", "json.py", "os", "re.pyc", "subprocess", "todos/__init__.py"}
	if !slices.Equal(got, want) {
		t.Errorf("moved %q, want %q", got, want)
	}
	if its, _, ok := j.inspect(filepath.Join(d, "todos"), []string{"v.json"}); !ok || len(its) != 0 {
		t.Errorf("todos/v.json: items %v ok %v", its, ok)
	}
	if _, _, ok := j.inspect("/elsewhere", nil); ok {
		t.Errorf("a directory not the judge's was judged")
	}
}
