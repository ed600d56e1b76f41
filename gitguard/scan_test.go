package gitguard

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// tmp returns a symlink-free temp dir.
func tmp(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// git runs the installed git with an empty home, for layouts exactly as git
// makes them.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is needed")
		}
		t.Skip("git not installed")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+home, "XDG_CONFIG_HOME="+home,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
		"GIT_ALLOW_PROTOCOL=file", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=protocol.file.allow", "GIT_CONFIG_VALUE_0=always")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func write(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// repo makes a repository with one commit at dir.
func repo(t *testing.T, dir string) {
	os.MkdirAll(dir, 0o755)
	git(t, dir, "init", "-q", "-b", "main", ".")
	write(t, filepath.Join(dir, "f"), "x\n", 0o644)
	git(t, dir, "add", "f")
	git(t, dir, "commit", "-q", "-m", "one")
}

// found lists the .git and HEAD entries under roots, as fsrules' walk does.
func found(roots ...string) []string {
	var out []string
	for _, r := range roots {
		filepath.WalkDir(r, func(p string, d os.DirEntry, err error) error {
			if err == nil && (d.Name() == ".git" || d.Name() == "HEAD") {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

func scan(t *testing.T, ws string, extra ...func(*Input)) Plan {
	in := Input{Workspace: ws, Writable: []string{ws}, Found: found(ws)}
	for _, f := range extra {
		f(&in)
	}
	return Scan(in)
}

func paths(ps []Protect, base string) []string {
	var out []string
	for _, p := range ps {
		r, _ := filepath.Rel(base, p.Path)
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// wantIn fails the test (Errorf) unless each of want, relative to base,
// is a path in ps; what names the list in the failure.
func wantIn(t *testing.T, what string, ps []Protect, base string, want ...string) {
	t.Helper()
	if m := has(paths(ps, base), want...); len(m) > 0 {
		t.Errorf("%s lacks %v: %v", what, m, paths(ps, base))
	}
}

func has(list []string, want ...string) []string {
	var miss []string
	for _, w := range want {
		ok := false
		for _, x := range list {
			ok = ok || x == w
		}
		if !ok {
			miss = append(miss, w)
		}
	}
	return miss
}

func TestScanRepo(t *testing.T) {
	ws := tmp(t)
	repo(t, ws)
	os.MkdirAll(filepath.Join(ws, "src"), 0o755)
	p := scan(t, ws)
	wantIn(t, "read-only", p.ReadOnly, ws, ".git/config", ".git/hooks", ".git/branches")
	wantIn(t, "watch", p.Watch, ws, ".git/commondir", ".git/config.worktree", ".git/remotes")
	if m := has(p.Observe, ws, ws+"/src", ws+"/.git"); len(m) > 0 {
		t.Errorf("observe lacks %v: %v", m, p.Observe)
	}
	if len(p.Repos) != 1 || p.Repos[0] != ws+"/.git" {
		t.Errorf("repos %v", p.Repos)
	}
	if len(p.Hide) > 0 || len(p.Writable) > 0 {
		t.Errorf("hide %v writable %v", p.Hide, p.Writable)
	}
}

// What the repository's configuration points at inside the tree is
// protected: hooksPath (husky), includes, programs named by path, files a
// hook runs, a hook that is a symlink, hook managers' files.
func TestScanConfigEffects(t *testing.T) {
	ws := tmp(t)
	repo(t, ws)
	git(t, ws, "config", "core.hooksPath", ".husky/_")
	git(t, ws, "config", "include.path", "../shared.gitconfig")
	git(t, ws, "config", "core.fsmonitor", "./tools/fsmon --flag")
	git(t, ws, "config", "alias.lint", "!scripts/lint.sh --all")
	write(t, ws+"/shared.gitconfig", "[core]\n\tpager = ./tools/pager\n", 0o644)
	write(t, ws+"/.husky/_/pre-commit", "#!/bin/sh\n. \"$(dirname \"$0\")/h\"\n", 0o755)
	write(t, ws+"/.husky/_/h", "#!/bin/sh\n# husky\nsh -e .husky/pre-commit\n", 0o755)
	write(t, ws+"/.husky/pre-commit", "npm test\n", 0o644)
	write(t, ws+"/scripts/lint.sh", "#!/bin/sh\n", 0o755)
	write(t, ws+"/scripts/check.sh", "#!/bin/sh\n", 0o755)
	write(t, ws+"/.git/hooks/post-merge", "#!/bin/sh\n./scripts/check.sh\n", 0o755)
	os.Symlink("../../scripts/link-hook.sh", ws+"/.git/hooks/pre-push")
	p := scan(t, ws)
	ro, ab := paths(p.ReadOnly, ws), paths(p.Absent, ws)
	if m := has(ro, ".husky/_", ".husky", "shared.gitconfig", "scripts/lint.sh", "scripts/check.sh"); len(m) > 0 {
		t.Errorf("read-only lacks %v: %v", m, ro)
	}
	if m := has(ab, "tools/fsmon", "tools/pager", "scripts/link-hook.sh"); len(m) > 0 {
		t.Errorf("absent lacks %v: %v", m, ab)
	}
	for _, p := range append(ro, ab...) {
		// "-all", not "all": .git/shallow is protected (review15f).
		if strings.Contains(p, "flag") || strings.Contains(p, "-all") {
			t.Errorf("an argument became a path: %s", p)
		}
	}

	t.Run("absent hooksPath", func(t *testing.T) {
		ws := tmp(t)
		repo(t, ws)
		git(t, ws, "config", "core.hooksPath", ".githooks")
		if m := has(paths(scan(t, ws).Absent, ws), ".githooks"); len(m) > 0 {
			t.Errorf("absent lacks .githooks")
		}
	})
	t.Run("lefthook installed", func(t *testing.T) {
		ws := tmp(t)
		repo(t, ws)
		write(t, ws+"/lefthook.yml", "pre-commit: {}\n", 0o644)
		write(t, ws+"/.git/hooks/pre-commit", "#!/bin/sh\nlefthook run pre-commit\n", 0o755)
		p := scan(t, ws)
		if m := has(paths(p.ReadOnly, ws), "lefthook.yml"); len(m) > 0 {
			t.Errorf("lefthook.yml not read-only")
		}
		wantIn(t, "absent", p.Absent, ws, "lefthook-local.yml", ".lefthook-local.yml")
	})
	t.Run("manager config without its hooks", func(t *testing.T) {
		ws := tmp(t)
		repo(t, ws)
		write(t, ws+"/lefthook.yml", "pre-commit: {}\n", 0o644)
		p := scan(t, ws)
		if m := has(paths(p.ReadOnly, ws), "lefthook.yml"); len(m) == 0 {
			t.Errorf("lefthook.yml read-only though no hook runs lefthook")
		}
	})
	t.Run("user's relative hooksPath", func(t *testing.T) {
		ws := tmp(t)
		home := tmp(t)
		write(t, home+"/.gitconfig", "[core]\n\thooksPath = .githooks\n", 0o644)
		p := scan(t, ws, func(in *Input) { in.UserConfigs = UserConfigFiles([]string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}) })
		if m := has(paths(p.Absent, ws), ".githooks"); len(m) > 0 {
			t.Errorf("a repository made in the workspace would run %s/.githooks: %v", ws, p.Absent)
		}
	})
}

// Nested repositories, submodules and linked worktrees inside the tree.
func TestScanNested(t *testing.T) {
	base := tmp(t)
	lib := filepath.Join(base, "lib-src")
	repo(t, lib)
	ws := filepath.Join(base, "ws")
	repo(t, ws)
	git(t, ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
	git(t, ws, "worktree", "add", "-q", filepath.Join(ws, "wt"))
	repo(t, filepath.Join(ws, "vendor/deep/other"))
	p := scan(t, ws)
	ro := paths(p.ReadOnly, ws)
	if m := has(ro, ".git/modules/lib/config", ".git/modules/lib/hooks", "lib/.git", "wt/.git",
		".git/worktrees/wt/commondir", ".git/worktrees/wt/gitdir", "vendor/deep/other/.git/config"); len(m) > 0 {
		t.Errorf("read-only lacks %v: %v", m, ro)
	}
	if len(p.Hide) > 0 {
		t.Errorf("verified .git files hidden: %v (notes %v)", p.Hide, p.Notes)
	}
	if m := has(p.Observe, ws+"/.git/modules", ws+"/.git/worktrees"); len(m) > 0 {
		t.Errorf("observe lacks %v", m)
	}
}

// A .git file that does not verify is hidden inside and reported; one that
// leads to a git dir the agent cannot write is kept read-only.
func TestScanGitFiles(t *testing.T) {
	base := tmp(t)
	ws := filepath.Join(base, "ws")
	repo(t, ws)
	// A redirection an earlier run left: its target is agent-made.
	os.MkdirAll(ws+"/.cache/c/objects", 0o755)
	os.MkdirAll(ws+"/.cache/c/refs", 0o755)
	write(t, ws+"/.cache/g/HEAD", "ref: refs/heads/main\n", 0o644)
	write(t, ws+"/.cache/g/commondir", "../c\n", 0o644)
	write(t, ws+"/sub/.git", "gitdir: ../.cache/g\n", 0o644)
	write(t, ws+"/bad/.git", "gitdir:../.cache/g\n", 0o644)
	// The user's --separate-git-dir, outside the tree.
	sep := filepath.Join(base, "sep.git")
	git(t, base, "init", "-q", "--bare", sep)
	write(t, ws+"/sep/.git", "gitdir: "+sep+"\n", 0o644)
	p := scan(t, ws)
	if m := has(paths(p.Hide, ws), "sub/.git", "bad/.git"); len(m) > 0 {
		t.Errorf("hide lacks %v: %v", m, p.Hide)
	}
	wantIn(t, "read-only", p.ReadOnly, ws, "sep/.git", ".cache/g/commondir")
	notes := strings.Join(p.Notes, "\n")
	for _, w := range []string{ws + "/sub/.git is hidden", ws + "/bad/.git is hidden", ws + "/sep/.git leads to"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
}

// gitWorktree makes a main repo at base/repo and a linked worktree at
// base/wt, as "git worktree add" lays them out.
func gitWorktree(t *testing.T, base string) (repoDir, wt string) {
	repoDir, wt = filepath.Join(base, "repo"), filepath.Join(base, "wt")
	repo(t, repoDir)
	git(t, repoDir, "worktree", "add", "-q", wt)
	return repoDir, wt
}

func TestScanWorktreeRoot(t *testing.T) {
	base := tmp(t)
	r, wt := gitWorktree(t, base)
	p := scan(t, wt)
	if len(p.Writable) != 1 || p.Writable[0] != r+"/.git" {
		t.Fatalf("writable %v, notes %v", p.Writable, p.Notes)
	}
	ro := paths(p.ReadOnly, base)
	if m := has(ro, "repo/.git/config", "repo/.git/hooks", "repo/.git/worktrees/wt/commondir", "repo/.git/worktrees/wt/gitdir", "wt/.git"); len(m) > 0 {
		t.Errorf("read-only lacks %v: %v", m, ro)
	}
	if m := has(paths(p.Watch, base), "repo/.git/commondir", "repo/.git/worktrees/wt/config.worktree"); len(m) > 0 {
		t.Errorf("watch lacks %v", m)
	}
	p = scan(t, wt, func(in *Input) { in.AllowGitConfig = true })
	if len(p.ReadOnly) != 0 || len(p.Writable) != 1 || p.Guard != nil {
		t.Errorf("--allow-git-config: %+v", p)
	}
}

// A .git file written by an earlier agent must not make an arbitrary
// directory writable.
func TestScanWorktreeForged(t *testing.T) {
	base := tmp(t)
	_, wt := gitWorktree(t, base)
	victim := filepath.Join(base, "victim")
	os.MkdirAll(victim+"/objects", 0o755)
	os.MkdirAll(victim+"/refs", 0o755)
	write(t, victim+"/worktrees/x/HEAD", "ref: refs/heads/main\n", 0o644)
	write(t, victim+"/worktrees/x/commondir", "../..\n", 0o644)
	write(t, victim+"/worktrees/x/gitdir", base+"/elsewhere/.git\n", 0o644)
	for _, content := range []string{
		"gitdir: " + victim,
		"gitdir: " + victim + "/worktrees/x",
		"gitdir: /",
		"gitdir: ../../../../../../../../../etc",
		"gitdir:" + victim + "/worktrees/x",
		"garbage",
	} {
		write(t, wt+"/.git", content+"\n", 0o644)
		p := scan(t, wt)
		if len(p.Writable) != 0 {
			t.Errorf(".git %q made %v writable", content, p.Writable)
		}
		if n := strings.Join(p.Notes, "\n"); !strings.Contains(n, "stays read-only") && !strings.Contains(n, wt+"/.git is hidden inside") {
			t.Errorf(".git %q: no note: %v", content, p.Notes)
		}
	}
}

// The guard: what appears after start, as the sentinel would report it.
func TestGuardInspect(t *testing.T) {
	ws := tmp(t)
	repo(t, ws)
	os.MkdirAll(ws+"/sub", 0o755)
	p := scan(t, ws)
	g := p.Guard

	// commondir in a git dir known at start.
	write(t, ws+"/.git/commondir", "../evil\n", 0o644)
	f, _ := g.Inspect(ws+"/.git", []string{"commondir"})
	if len(f) != 1 || f[0].Path != ws+"/.git/commondir" || f[0].Replace != nil {
		t.Errorf("commondir: %+v", f)
	}
	os.Remove(ws + "/.git/commondir")

	// A config in a git dir that had none is cut down, not removed.
	// (Simulated: the config known at start replaced by a new file.)
	os.Remove(ws + "/.git/config")
	write(t, ws+"/.git/config", "[user]\n\temail = a@b\n[core]\n\tfsmonitor = evil\n", 0o644)
	f, _ = g.Inspect(ws+"/.git", []string{"config"})
	if len(f) != 1 || f[0].Replace == nil {
		t.Fatalf("config: %+v", f)
	}
	out, changed := f[0].Replace([]byte("[user]\n\temail = a@b\n[core]\n\tfsmonitor = evil\n"))
	if !changed || strings.Contains(string(out), "fsmonitor") || !strings.Contains(string(out), "a@b") {
		t.Errorf("replacement %q", out)
	}
	if _, changed := f[0].Replace([]byte("[user]\n\temail = a@b\n")); changed {
		t.Errorf("a harmless config would be replaced")
	}

	// A .git file planted in a first-level subdirectory.
	write(t, ws+"/sub/.git", "gitdir: ../.git\n", 0o644)
	f, _ = g.Inspect(ws+"/sub", []string{".git"})
	if len(f) != 1 || f[0].Path != ws+"/sub/.git" {
		t.Errorf("sub/.git: %+v", f)
	}
	os.Remove(ws + "/sub/.git")

	// git init in a new first-level directory: observed, then judged.
	os.MkdirAll(ws+"/newdir", 0o755)
	_, obs := g.Inspect(ws, []string{"newdir"})
	if len(obs) != 1 || obs[0] != ws+"/newdir" {
		t.Fatalf("new subdirectory not observed: %v", obs)
	}
	git(t, ws+"/newdir", "init", "-q")
	git(t, ws+"/newdir", "config", "core.hooksPath", "x")
	write(t, ws+"/newdir/.git/hooks/pre-commit", "#!/bin/sh\n", 0o755)
	f, obs = g.Inspect(ws+"/newdir", []string{".git"})
	var got []string
	for _, x := range f {
		got = append(got, strings.TrimPrefix(x.Path, ws+"/"))
	}
	if m := has(got, "newdir/.git/config", "newdir/.git/hooks/pre-commit"); len(m) > 0 || len(got) != 2 {
		t.Errorf("git init: findings %v (missing %v)", got, m)
	}
	if m := has(obs, ws+"/newdir/.git", ws+"/newdir/.git/hooks"); len(m) > 0 {
		t.Errorf("git init: observe %v", obs)
	}

	// A worktree the agent adds inside: kept.
	git(t, ws, "worktree", "add", "-q", ws+"/wt2")
	f, obs = g.Inspect(ws+"/.git", []string{"worktrees"})
	if len(f) != 0 {
		t.Errorf("git worktree add: %+v", f)
	}
	f, _ = g.Inspect(ws, []string{"wt2"})
	f2, _ := g.Inspect(ws+"/wt2", []string{".git"})
	if len(f)+len(f2) != 0 {
		t.Errorf("git worktree add: %+v %+v", f, f2)
	}
	// ... unless its commondir leads elsewhere.
	write(t, ws+"/.git/worktrees/wt2/commondir", "../../../evil\n", 0o644)
	f, _ = g.Inspect(ws+"/.git/worktrees/wt2", []string{"commondir"})
	if len(f) != 1 {
		t.Errorf("worktree commondir to elsewhere: %+v", f)
	}
}

// Sweep (the exit check) finds at any depth what the sentinel does not
// watch, survives a JSON round trip (a killed run's next start), and says
// nothing about an untouched tree or an ordinary git workflow.
func TestGuardSweep(t *testing.T) {
	ws := tmp(t)
	repo(t, ws)
	p := scan(t, ws)
	b, err := json.Marshal(p.Guard)
	if err != nil {
		t.Fatal(err)
	}
	var g Guard
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if f, notes := g.Sweep(0); len(f)+len(notes) != 0 {
		t.Fatalf("untouched tree: %+v %v", f, notes)
	}
	// An ordinary workflow: commits, branches, tags, gc, a worktree.
	write(t, ws+"/g", "y\n", 0o644)
	git(t, ws, "add", "g")
	git(t, ws, "commit", "-q", "-m", "two")
	git(t, ws, "tag", "-a", "v1", "-m", "t")
	git(t, ws, "gc", "-q", "--prune=now")
	git(t, ws, "worktree", "add", "-q", ws+"/wt")
	if f, _ := g.Sweep(0); len(f) != 0 {
		t.Fatalf("ordinary workflow: %+v", f)
	}
	// Deep plants.
	write(t, ws+"/a/b/.git", "gitdir: ../../.git\n", 0o644)
	os.MkdirAll(ws+"/x/y/bare/objects", 0o755)
	os.MkdirAll(ws+"/x/y/bare/refs", 0o755)
	write(t, ws+"/x/y/bare/HEAD", "ref: refs/heads/main\n", 0o644)
	write(t, ws+"/x/y/bare/config", "[core]\n\tpager = evil\n", 0o644)
	write(t, ws+"/x/g/HEAD", "ref: refs/heads/main\n", 0o644)
	write(t, ws+"/x/g/commondir", "../y/bare\n", 0o644)
	os.Symlink("../../.git", ws+"/x/y/.git")
	f, _ := g.Sweep(0)
	var got []string
	for _, x := range f {
		got = append(got, strings.TrimPrefix(x.Path, ws+"/"))
	}
	if m := has(got, "a/b/.git", "x/y/bare/config", "x/g/commondir", "x/y/.git"); len(m) > 0 {
		t.Errorf("sweep missed %v (found %v)", m, got)
	}
}

// git writes a worktree's commondir and gitdir, and the new checkout's .git
// file, with open+write: the first event sees them empty. An empty file is
// not judged yet (git refuses it anyway; the write that follows is another
// event, and the exit check judges what stays).
func TestGuardEmptyWhileWritten(t *testing.T) {
	ws := tmp(t)
	repo(t, ws)
	os.MkdirAll(ws+"/sub", 0o755)
	g := scan(t, ws).Guard
	write(t, ws+"/sub/.git", "", 0o644)
	if f, _ := g.Inspect(ws+"/sub", []string{".git"}); len(f) != 0 {
		t.Errorf("an empty .git file judged: %+v", f)
	}
	write(t, ws+"/sub/.git", "gitdir: /tmp\n", 0o644)
	if f, _ := g.Inspect(ws+"/sub", []string{".git"}); len(f) != 1 {
		t.Errorf("once written, not judged: %+v", f)
	}
	os.Remove(ws + "/sub/.git")
	write(t, ws+"/.git/worktrees/x/HEAD", "ref: refs/heads/x\n", 0o644)
	write(t, ws+"/.git/worktrees/x/commondir", "", 0o644)
	f, _ := g.Inspect(ws+"/.git", []string{"worktrees"})
	f2, _ := g.Inspect(ws+"/.git/worktrees/x", []string{"commondir"})
	if len(f)+len(f2) != 0 {
		t.Errorf("an empty commondir judged: %+v %+v", f, f2)
	}
	write(t, ws+"/.git/worktrees/x/commondir", "../../../elsewhere\n", 0o644)
	if f, _ := g.Inspect(ws+"/.git/worktrees/x", []string{"commondir"}); len(f) != 1 {
		t.Errorf("once written, not judged: %+v", f)
	}
}

// git worktree add writes the new checkout's .git file before the
// worktree's commondir (and HEAD): at that moment the .git file leads to a
// directory that is no git dir yet. It is judged again when that directory
// changes, and kept once git has finished; the exit check (Sweep) judges
// whatever is left undecided.
func TestGuardWorktreeAddOrder(t *testing.T) {
	ws := tmp(t)
	repo(t, ws)
	g := scan(t, ws).Guard
	wd := ws + "/.git/worktrees/wt"
	write(t, wd+"/gitdir", ws+"/wt/.git\n", 0o644)
	write(t, wd+"/locked", "initializing\n", 0o644)
	write(t, ws+"/wt/.git", "gitdir: "+wd+"\n", 0o644)
	var all []Finding
	inspect := func(dir string, names ...string) {
		f, obs := g.Inspect(dir, names)
		all = append(all, f...)
		for _, d := range obs {
			f, _ := g.Inspect(d, nil)
			all = append(all, f...)
		}
	}
	inspect(ws+"/.git", "worktrees")
	inspect(ws, "wt")
	inspect(ws+"/wt", ".git")
	if len(all) != 0 {
		t.Fatalf("git worktree add, halfway: %+v", all)
	}
	write(t, wd+"/commondir", "", 0o644) // open, not written yet
	inspect(wd, "commondir")
	inspect(ws+"/wt", ".git")
	if len(all) != 0 {
		t.Fatalf("git worktree add, commondir being written: %+v", all)
	}
	write(t, wd+"/commondir", "../..\n", 0o644)
	write(t, wd+"/HEAD", "ref: refs/heads/wt\n", 0o644)
	os.Remove(wd + "/locked")
	inspect(wd, "commondir", "HEAD", "locked")
	if len(all) != 0 {
		t.Fatalf("git worktree add, done: %+v", all)
	}
	if f, _ := g.Sweep(0); len(f) != 0 {
		t.Errorf("exit check after git worktree add: %+v", f)
	}

	// The .git file seen before worktrees/NAME: once that turns out to be
	// a worktree's git dir, its commondir is judged as one.
	wsb := tmp(t)
	repo(t, wsb)
	g = scan(t, wsb).Guard
	all = nil
	wdb := wsb + "/.git/worktrees/wt"
	write(t, wdb+"/gitdir", wsb+"/wt/.git\n", 0o644)
	write(t, wsb+"/wt/.git", "gitdir: "+wdb+"\n", 0o644)
	inspect(wsb, "wt")
	inspect(wsb+"/wt", ".git")
	inspect(wsb+"/.git", "worktrees")
	write(t, wdb+"/commondir", "../../../elsewhere\n", 0o644)
	inspect(wdb, "commondir")
	var paths []string
	for _, f := range all {
		paths = append(paths, strings.TrimPrefix(f.Path, wsb+"/"))
	}
	if m := has(paths, ".git/worktrees/wt/commondir"); len(m) > 0 {
		t.Errorf("a worktree's commondir leading elsewhere, .git file first: %v", paths)
	}

	// The same .git file, but its target becomes a git dir of its own
	// (objects, refs, a config that runs code) instead of a worktree.
	ws2 := tmp(t)
	repo(t, ws2)
	os.MkdirAll(ws2+"/sub", 0o755)
	g = scan(t, ws2).Guard
	all = nil
	os.MkdirAll(ws2+"/x", 0o755)
	write(t, ws2+"/sub/.git", "gitdir: ../x\n", 0o644)
	inspect(ws2, "x")
	inspect(ws2+"/sub", ".git")
	if len(all) != 0 {
		t.Fatalf("while x is no git dir: %+v", all)
	}
	os.MkdirAll(ws2+"/x/objects", 0o755)
	os.MkdirAll(ws2+"/x/refs", 0o755)
	write(t, ws2+"/x/config", "[core]\n\tworktree = ../sub\n\tfsmonitor = evil\n", 0o644)
	write(t, ws2+"/x/HEAD", "ref: refs/heads/main\n", 0o644)
	inspect(ws2+"/x", "HEAD")
	var got []string
	for _, f := range all {
		got = append(got, strings.TrimPrefix(f.Path, ws2+"/"))
	}
	if m := has(got, "x/config"); len(m) > 0 {
		t.Errorf("the target that became a repository is not judged: %v", got)
	}

	// Left undecided at exit: Sweep judges it.
	ws3 := tmp(t)
	repo(t, ws3)
	g = scan(t, ws3).Guard
	os.MkdirAll(ws3+"/y", 0o755)
	write(t, ws3+"/a/b/.git", "gitdir: ../../y\n", 0o644)
	if f, _ := g.Sweep(0); len(f) != 1 || f[0].Path != ws3+"/a/b/.git" {
		t.Errorf("exit check: %+v", f)
	}
}

// A verified worktree whose repository was made during the run: that
// repository's config is judged too (git reads it through the worktree).
func TestGuardWorktreeOfNewRepo(t *testing.T) {
	ws := tmp(t)
	os.MkdirAll(ws+"/sub", 0o755)
	g := scan(t, ws).Guard
	fake := ws + "/sub/deep/fake"
	os.MkdirAll(fake+"/objects", 0o755)
	os.MkdirAll(fake+"/refs", 0o755)
	write(t, fake+"/HEAD", "ref: refs/heads/main\n", 0o644)
	write(t, fake+"/config", "[core]\n\tfsmonitor = evil\n", 0o644)
	write(t, fake+"/worktrees/w/HEAD", "ref: refs/heads/main\n", 0o644)
	write(t, fake+"/worktrees/w/commondir", "../..\n", 0o644)
	write(t, fake+"/worktrees/w/gitdir", ws+"/sub/.git\n", 0o644)
	write(t, ws+"/sub/.git", "gitdir: "+fake+"/worktrees/w\n", 0o644)
	f, _ := g.Inspect(ws+"/sub", []string{".git"})
	var got []string
	for _, x := range f {
		got = append(got, strings.TrimPrefix(x.Path, ws+"/"))
	}
	if m := has(got, "sub/deep/fake/config"); len(m) > 0 {
		t.Errorf("the new repository behind a worktree is not judged: %v", got)
	}
}

// A directory the exit check cannot read (the agent chmod 000'd it after
// planting something inside) is reported: what it holds was not checked,
// and its owner can make it readable again.
func TestGuardSweepUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads a mode-0 directory; the unprivileged run of this package covers it")
	}
	ws := tmp(t)
	repo(t, ws)
	g := scan(t, ws).Guard
	write(t, ws+"/x/y/.git", "gitdir: /tmp\n", 0o644)
	os.Chmod(ws+"/x", 0)
	defer os.Chmod(ws+"/x", 0o755)
	f, _ := g.Sweep(0)
	if len(f) != 1 || f[0].Path != ws+"/x" || !f[0].ReportOnly {
		t.Errorf("unreadable directory: %+v", f)
	}
	// One that was unreadable before the run is the user's own: not told
	// at every exit.
	time.Sleep(100 * time.Millisecond) // past the slack for coarse file times
	g = scan(t, ws).Guard
	if f, _ := g.Sweep(0); len(f) != 0 {
		t.Errorf("an unreadable directory older than the run: %+v", f)
	}
}

// A bare repository made in the workspace root (or a first-level
// subdirectory) itself: git in that directory uses it, so its config is
// judged whichever file comes last.
func TestGuardBareInObservedDir(t *testing.T) {
	ws := tmp(t)
	os.MkdirAll(ws+"/sub", 0o755)
	g := scan(t, ws).Guard
	for _, d := range []string{ws, ws + "/sub"} {
		os.MkdirAll(d+"/objects", 0o755)
		os.MkdirAll(d+"/refs", 0o755)
		write(t, d+"/HEAD", "ref: refs/heads/main\n", 0o644)
		if f, _ := g.Inspect(d, []string{"objects", "refs", "HEAD"}); len(f) != 0 {
			t.Errorf("%s: a harmless bare repository judged: %+v", d, f)
		}
		write(t, d+"/config", "[core]\n\tbare = true\n\tfsmonitor = evil\n", 0o644)
		if f, _ := g.Inspect(d, []string{"config"}); len(f) != 1 || f[0].Path != d+"/config" {
			t.Errorf("%s: config written last: %+v", d, f)
		}
	}
}

// Freeze (degraded mode: no read-only mounts): in the read-only directories
// (hooks/, a hooksPath directory) what is added or written is found, by
// Inspect and by Sweep; what is as at start, and *.sample files, are not;
// the config is covered by the git dir's own judge; a read-only file that
// nothing judges is returned.
func TestGuardFreeze(t *testing.T) {
	ws := tmp(t)
	repo(t, ws)
	write(t, ws+"/.husky/_/pre-commit", "#!/bin/sh\nexit 0\n", 0o755)
	write(t, ws+"/.git/hooks/post-checkout", "#!/bin/sh\nexit 0\n", 0o755)
	git(t, ws, "config", "core.hooksPath", ".husky/_")
	p := scan(t, ws)
	g := p.Guard
	lost := g.Freeze(p.ReadOnly)
	for _, l := range lost {
		if strings.HasSuffix(l, "/.git/config") || strings.HasSuffix(l, "/hooks") || strings.Contains(l, ".husky/_") {
			t.Errorf("%s reported uncovered", l)
		}
	}
	if r := g.Dirs[ws+"/.git/hooks"]; r.Kind != RoleFrozen {
		t.Fatalf(".git/hooks not frozen: %+v (read-only: %v)", r, paths(p.ReadOnly, ws))
	}
	if f, _ := g.Inspect(ws+"/.git/hooks", nil); len(f) != 0 {
		t.Fatalf("untouched hooks: %+v", f)
	}
	write(t, ws+"/.git/hooks/pre-commit", "#!/bin/sh\nevil\n", 0o755)
	write(t, ws+"/.git/hooks/x.sample", "#!/bin/sh\nevil\n", 0o755)
	time.Sleep(20 * time.Millisecond) // a later change time
	f, err := os.OpenFile(ws+"/.husky/_/pre-commit", os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("evil\n")
	f.Close()
	var got []string
	for _, d := range []string{ws + "/.git/hooks", ws + "/.husky/_"} {
		fs, _ := g.Inspect(d, nil)
		for _, x := range fs {
			got = append(got, strings.TrimPrefix(x.Path, ws+"/"))
		}
	}
	if m := has(got, ".git/hooks/pre-commit", ".husky/_/pre-commit"); len(m) > 0 || len(got) != 2 {
		t.Errorf("Inspect found %v, want .git/hooks/pre-commit .husky/_/pre-commit", got)
	}
	sw, _ := g.Sweep(0)
	got = nil
	for _, x := range sw {
		got = append(got, strings.TrimPrefix(x.Path, ws+"/"))
	}
	if m := has(got, ".git/hooks/pre-commit", ".husky/_/pre-commit"); len(m) > 0 {
		t.Errorf("Sweep missed %v (found %v)", m, got)
	}
}

// TestGuardInspectWholeRoot: the sentinel's first look (and a look again
// after its queue overflowed) lists the root whole (Inspect with no
// names): a first-level directory made after the scan is observed, one
// made as a link to a directory is not (git init there writes through the
// link, into a directory observed as what it is), nor is a file; each
// entry's type is the listing's own (session 44: a stat per entry was 20
// ms of a start in a root of 3,000 files).
func TestGuardInspectWholeRoot(t *testing.T) {
	ws := tmp(t)
	repo(t, ws)
	g := scan(t, ws).Guard
	os.MkdirAll(ws+"/later", 0o755)
	os.MkdirAll(ws+"/elsewhere", 0o755)
	if err := os.Symlink(ws+"/elsewhere", ws+"/link"); err != nil {
		t.Fatal(err)
	}
	write(t, ws+"/file", "x\n", 0o644)
	_, obs := g.Inspect(ws, nil)
	sort.Strings(obs)
	if want := []string{ws + "/elsewhere", ws + "/later"}; !slices.Equal(obs, want) {
		t.Errorf("observed %v, want %v", obs, want)
	}
	if r := g.Dirs[ws+"/later"]; r.Kind != RoleSub {
		t.Errorf("later: role %q, want %q", r.Kind, RoleSub)
	}
}
