package fsrules

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/jail-sandbox/jail/dircache"
)

// memDirs is a DirReader that records what the walk kept of each directory
// (record) and then answers from that alone (replay), as package dircache
// does for a tree unchanged since an earlier run.
type memDirs struct {
	replay bool
	kept   map[string][]fs.DirEntry
	total  map[string]int
	reads  int
}

func (m *memDirs) ReadDir(view, dir string, keep func(string, fs.FileMode) bool) ([]fs.DirEntry, int, uint64, error) {
	k := view + "\x00" + dir
	if m.replay {
		ents, ok := m.kept[k]
		if !ok {
			m.reads++
			return dircache.Uncached{}.ReadDir(view, dir, keep)
		}
		return ents, m.total[k], 0, nil
	}
	ents, total, dev, err := dircache.Uncached{}.ReadDir(view, dir, keep)
	if err == nil {
		m.kept[k], m.total[k] = ents, total
	}
	return ents, total, dev, err
}

// allDirs keeps every entry, whatever keep says: the walk as it was before
// it chose what to keep.
type allDirs struct{}

func (allDirs) ReadDir(view, dir string, _ func(string, fs.FileMode) bool) ([]fs.DirEntry, int, uint64, error) {
	return dircache.Uncached{}.ReadDir(view, dir, func(string, fs.FileMode) bool { return true })
}

// TestExpandFromKept: a walk answered from what an earlier walk kept of
// each directory gives the same plan as a walk that reads everything, on a
// tree with every kind of protection (secrets, read-only git files and
// hooks, a symlink and a hard link to secrets, a hard link of a hook, an absent nested name, user
// globs); and it reads no directory.
func TestExpandFromKept(t *testing.T) {
	ws := tmp(t)
	outside := tmp(t)
	for _, f := range []string{".env", "src/a.go", "src/b/.npmrc", "src/b/c/id_rsa", ".git/HEAD", ".git/config",
		".git/hooks/pre-commit", ".git/refs/heads/main", "sub/.git/HEAD", "sub/.git/config", "data/x.sqlite",
		"docs/readme.md", ".vscode/settings.json"} {
		p := filepath.Join(ws, f)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte("x"), 0o644))
	}
	must(t, os.MkdirAll(filepath.Join(ws, "deep/.docker"), 0o755))
	must(t, os.MkdirAll(filepath.Join(ws, "secrets/inner"), 0o755))
	must(t, os.WriteFile(filepath.Join(outside, "token"), []byte("s"), 0o600))
	must(t, os.Symlink(filepath.Join(outside, "token"), filepath.Join(ws, "src/prod.env")))
	must(t, os.Link(filepath.Join(ws, ".env"), filepath.Join(ws, "docs/copy.txt")))
	// A hook with a second name: the files of a read-only directory count.
	must(t, os.Link(filepath.Join(ws, ".git/hooks/pre-commit"), filepath.Join(ws, "src/hook-copy")))
	in := Input{Workspace: ws, Writable: []string{ws}, Deny: []string{"**/*.sqlite", "**/secrets/**", "(?i)**/README*"},
		Dirs: allDirs{}}
	plain, err := Expand(in)
	must(t, err)
	m := &memDirs{kept: map[string][]fs.DirEntry{}, total: map[string]int{}}
	in.Dirs = m
	first, err := Expand(in)
	must(t, err)
	m.replay = true
	second, err := Expand(in)
	must(t, err)
	want, _ := json.MarshalIndent(plain, "", " ")
	for name, p := range map[string]Plan{"recording": first, "replaying": second} {
		if got, _ := json.MarshalIndent(p, "", " "); string(got) != string(want) {
			t.Errorf("%s walk differs from a plain one:\n%s\nwant\n%s", name, got, want)
		}
	}
	if m.reads != 0 {
		t.Errorf("the replaying walk read %d directories", m.reads)
	}
	if len(plain.Masks) < 8 || len(plain.Found) == 0 || len(plain.Absent) == 0 {
		t.Fatalf("the tree protects too little to compare (the test is broken): %+v", plain)
	}
}

// TestInnerReject: the fast reject on inner literal elements changes no
// answer of Match.
func TestInnerReject(t *testing.T) {
	paths := []string{"/ws/secrets", "/ws/a/secrets", "/ws/a/secrets/b/c", "/ws/a/secretsx/b", "/ws/xsecrets/b",
		"/ws/a/SECRETS/b", "/ws/a/b/private/key.pem", "/ws/private", "/ws/a/.git/hooks/x", "/ws/a/.git/hooksx", "/other/secrets/x"}
	for _, pat := range []string{"**/secrets/**", "(?i)**/secrets/**", "a/**/private/*.pem", "**/.git/hooks/", "secrets", "**/b/**/c"} {
		p, err := Compile(pat, "/ws", "/home/u")
		must(t, err)
		slow := *p
		slow.inner = nil
		for _, a := range paths {
			for _, dir := range []bool{false, true} {
				if got, want := p.Match(a, dir), slow.Match(a, dir); got != want {
					t.Errorf("%s ~ %s (dir %v): %v, without the fast reject %v", pat, a, dir, got, want)
				}
			}
		}
	}
}
