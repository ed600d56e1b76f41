package gitguard

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ParseGitlinks reads the gitlinks of index files as git writes them:
// versions 2, 3 (an intent-to-add entry has extended flags) and 4
// (prefix-compressed names), SHA-1 and SHA-256; compared with git ls-files.
func TestParseGitlinks(t *testing.T) {
	for _, c := range []struct {
		ver, format string
	}{{"2", "sha1"}, {"3", "sha1"}, {"4", "sha1"}, {"4", "sha256"}, {"2", "sha256"}} {
		ws := tmp(t)
		git(t, ws, "init", "-q", "-b", "main", "--object-format="+c.format, ".")
		for _, f := range []string{"a/long/directory/name/one.txt", "a/long/directory/name/two.txt", "b.txt", "z/y/x/w.txt"} {
			write(t, filepath.Join(ws, f), "x\n", 0o644)
		}
		git(t, ws, "add", ".")
		git(t, ws, "commit", "-q", "-m", "one")
		h := strings.TrimSpace(git(t, ws, "rev-parse", "HEAD"))
		for _, p := range []string{"a/long/directory/name/sub", "deep/er/c", "m"} {
			git(t, ws, "update-index", "--add", "--cacheinfo", "160000,"+h+","+p)
		}
		write(t, filepath.Join(ws, "a/long/directory/name/ita.txt"), "x\n", 0o644)
		git(t, ws, "add", "-N", "a/long/directory/name/ita.txt")
		git(t, ws, "update-index", "--index-version", c.ver)
		var want []string
		for _, l := range strings.Split(git(t, ws, "ls-files", "-s"), "\n") {
			if strings.HasPrefix(l, "160000 ") {
				_, p, _ := strings.Cut(l, "\t")
				want = append(want, p)
			}
		}
		b, err := os.ReadFile(filepath.Join(ws, ".git/index"))
		if err != nil {
			t.Fatal(err)
		}
		hs := 20
		if c.format == "sha256" {
			hs = 32
		}
		got, err := ParseGitlinks(b, hs)
		if err != nil || !slices.Equal(got, want) || len(want) != 3 {
			t.Errorf("index v%s %s: gitlinks %q (%v), git ls-files: %q", c.ver, c.format, got, err, want)
		}
		if abs, _ := indexGitlinks(filepath.Join(ws, ".git"), ws); len(abs) != 3 || abs[1] != ws+"/deep/er/c" {
			t.Errorf("index v%s %s: indexGitlinks %q", c.ver, c.format, abs)
		}
	}
	// Truncated or foreign data: no panic, an error.
	for _, b := range []string{"", "DIRC", "DIRC\x00\x00\x00\x02\x00\x00\x00\x05", "DIRC\x00\x00\x00\x09\x00\x00\x00\x00"} {
		if _, err := ParseGitlinks([]byte(b), 20); err == nil {
			t.Errorf("ParseGitlinks(%q): no error", b)
		}
	}
}

// events plays what the sentinel does: an inotify event for name in dir
// when dir is observed, then each newly observed directory inspected once.
type events struct {
	g     *Guard
	found []Finding
}

func (e *events) ev(dir, name string) {
	if _, ok := e.g.Dirs[dir]; !ok {
		return
	}
	f, obs := e.g.Inspect(dir, []string{name})
	e.found = append(e.found, f...)
	for len(obs) > 0 {
		d := obs[0]
		obs = obs[1:]
		f, more := e.g.Inspect(d, nil)
		e.found = append(e.found, f...)
		obs = append(obs, more...)
	}
}

// start is the sentinel's first pass (rearm): every observed directory
// inspected once, before the sandbox starts.
func (e *events) start() *events {
	var dirs []string
	for d := range e.g.Dirs {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	for _, d := range dirs {
		f, obs := e.g.Inspect(d, nil)
		e.found = append(e.found, f...)
		for len(obs) > 0 {
			f, more := e.g.Inspect(obs[0], nil)
			e.found = append(e.found, f...)
			obs = append(obs[1:], more...)
		}
	}
	return e
}

// mkdirs makes the directories of rel under ws one by one, with events.
func (e *events) mkdirs(ws, rel string) {
	d := ws
	for _, c := range strings.Split(rel, "/") {
		os.Mkdir(filepath.Join(d, c), 0o755)
		e.ev(d, c)
		d = filepath.Join(d, c)
	}
}

// nested makes a repository at ws/rel with core.fsmonitor set, with the
// events git init and git config cause.
func (e *events) nested(t *testing.T, ws, rel string) {
	p := filepath.Join(ws, rel)
	git(t, p, "init", "-q")
	e.ev(p, ".git")
	git(t, p, "config", "core.fsmonitor", p+"/fsm.sh")
	e.ev(p+"/.git", "config")
}

func (e *events) judged(p string) bool {
	for _, f := range e.found {
		if strings.HasPrefix(f.Path, p) {
			return true
		}
	}
	return false
}

// A repository made deeper than the first level of subdirectories is judged
// while the sandbox runs when the index names it as a gitlink: git status at
// the top of the work tree runs git in every populated gitlink, which reads
// that repository's config (core.fsmonitor runs a program). Three orders:
// gitlink first, repository first, and a gitlink registered (not checked
// out) before the run.
func TestGuardGitlinkDeep(t *testing.T) {
	t.Run("gitlink-first", func(t *testing.T) {
		ws := tmp(t)
		repo(t, ws)
		e := (&events{g: scan(t, ws).Guard}).start()
		h := strings.TrimSpace(git(t, ws, "rev-parse", "HEAD"))
		git(t, ws, "update-index", "--add", "--cacheinfo", "160000,"+h+",a/b/c")
		e.ev(ws+"/.git", "index")
		e.mkdirs(ws, "a/b/c")
		e.nested(t, ws, "a/b/c")
		if !e.judged(ws + "/a/b/c/.git") {
			t.Errorf("a/b/c/.git with core.fsmonitor, named by a gitlink, not judged: %+v", e.found)
		}
	})
	t.Run("repo-first", func(t *testing.T) {
		ws := tmp(t)
		repo(t, ws)
		e := (&events{g: scan(t, ws).Guard}).start()
		e.mkdirs(ws, "a/b/c")
		e.nested(t, ws, "a/b/c")
		h := strings.TrimSpace(git(t, ws, "rev-parse", "HEAD"))
		git(t, ws, "update-index", "--add", "--cacheinfo", "160000,"+h+",a/b/c")
		e.ev(ws+"/.git", "index")
		if !e.judged(ws + "/a/b/c/.git") {
			t.Errorf("a/b/c/.git with core.fsmonitor, then named by a gitlink, not judged: %+v", e.found)
		}
	})
	t.Run("in-submodule", func(t *testing.T) {
		// A submodule's git dir under .git/modules/ (core.worktree): git
		// status in the superproject runs status in the submodule, which
		// looks into the submodule's own gitlinks.
		ws := tmp(t)
		repo(t, ws)
		sub := tmp(t)
		repo(t, sub)
		git(t, ws, "submodule", "add", "-q", sub, "s")
		e := (&events{g: scan(t, ws).Guard}).start()
		h := strings.TrimSpace(git(t, ws+"/s", "rev-parse", "HEAD"))
		git(t, ws+"/s", "update-index", "--add", "--cacheinfo", "160000,"+h+",p/q")
		e.ev(ws+"/.git/modules/s", "index")
		e.mkdirs(ws+"/s", "p/q")
		e.nested(t, ws, "s/p/q")
		if !e.judged(ws + "/s/p/q/.git") {
			t.Errorf("s/p/q/.git named by a gitlink of submodule s not judged: %+v", e.found)
		}
	})
	t.Run("registered-before", func(t *testing.T) {
		ws := tmp(t)
		repo(t, ws)
		h := strings.TrimSpace(git(t, ws, "rev-parse", "HEAD"))
		git(t, ws, "update-index", "--add", "--cacheinfo", "160000,"+h+",x/y/z")
		os.MkdirAll(ws+"/x", 0o755)
		e := (&events{g: scan(t, ws).Guard}).start()
		e.mkdirs(ws+"/x", "y/z")
		e.nested(t, ws, "x/y/z")
		if !e.judged(ws + "/x/y/z/.git") {
			t.Errorf("x/y/z/.git in a submodule path registered before the run not judged: %+v", e.found)
		}
	})
}

// The index is the agent's: any bytes, no panic.
func FuzzParseGitlinks(f *testing.F) {
	f.Add([]byte("DIRC\x00\x00\x00\x04\x00\x00\x00\x02"+strings.Repeat("\x00", 24)+"\x00\x00\xe0\x00"+strings.Repeat("\x00", 34)+"\x00\x03a/b\x00\x05c/d\x00"), 20)
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x01"+strings.Repeat("\x00", 24)+"\x00\x00\xe0\x00"+strings.Repeat("\x00", 32)+"\x4f\xff"+"a/b\x00"), 20)
	f.Fuzz(func(t *testing.T, b []byte, hs int) {
		if hs != 20 && hs != 32 {
			hs = 20
		}
		ParseGitlinks(b, hs)
	})
}

// A split index (core.splitIndex, review13e): the gitlinks of the shared
// index, a gitlink added after the split, and a file of the shared index
// made a gitlink (a replacement: its entry has no name in .git/index) are
// all found; review13c's parse of .git/index alone found only the second.
func TestIndexGitlinksSplit(t *testing.T) {
	for _, ver := range []string{"2", "4"} {
		ws := tmp(t)
		git(t, ws, "init", "-q", "-b", "main", ".")
		for _, f := range []string{"a.txt", "r/f", "z.txt"} {
			write(t, filepath.Join(ws, f), "x\n", 0o644)
		}
		git(t, ws, "add", ".")
		git(t, ws, "commit", "-q", "-m", "one")
		h := strings.TrimSpace(git(t, ws, "rev-parse", "HEAD"))
		git(t, ws, "update-index", "--add", "--cacheinfo", "160000,"+h+",s/shared")
		git(t, ws, "update-index", "--index-version", ver, "--split-index")
		git(t, ws, "update-index", "--add", "--cacheinfo", "160000,"+h+",s/new")
		git(t, ws, "update-index", "--cacheinfo", "160000,"+h+",r/f")
		want := []string{ws + "/r/f", ws + "/s/new", ws + "/s/shared"}
		got, _ := indexGitlinks(filepath.Join(ws, ".git"), ws)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			ls := git(t, ws, "ls-files", "-s")
			t.Errorf("split index v%s: indexGitlinks %q, want %q\ngit ls-files -s:\n%s", ver, got, want, ls)
		}
	}
}
