//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A repository made deeper than the first level of subdirectories and named
// by a gitlink of the index (review13c): the host's `git status` at the top
// of the work tree (an IDE's git view during the run) runs git in every
// populated gitlink, which reads that repository's config: its
// core.fsmonitor ran on the host while the sandbox ran, since the watch
// judged new .git entries at the first level only and the exit check came
// later. The agent needs no .gitmodules: git update-index --cacheinfo
// 160000 is enough, and the index is data it may write.
func TestGitGitlinkDuringRun(t *testing.T) {
	gitlinkDuringRun(t, `h=$(git rev-parse HEAD)
git update-index --add --cacheinfo 160000,$h,a/b/c
`)
}

// TestGitGitlinkSplitIndex (review13e): the same gitlink written in a split
// index (core.splitIndex; git's index holds a "link" extension and the
// entries live in .git/sharedindex.HASH, which git writes beside
// .git/index whatever GIT_INDEX_FILE says). The index is built aside and
// moved in whole, so no version of .git/index that the watch parses
// holds the gitlink itself: on review13c's code only .git/index was parsed,
// the gitlink was not observed, and the host's git status during the run
// ran the nested repository's core.fsmonitor.
func TestGitGitlinkSplitIndex(t *testing.T) {
	gitlinkDuringRun(t, `h=$(git rev-parse HEAD)
cp .git/index /tmp/ix
GIT_INDEX_FILE=/tmp/ix git update-index --add --cacheinfo 160000,$h,a/b/c
GIT_INDEX_FILE=/tmp/ix git update-index --split-index
mv /tmp/ix .git/index
`)
}

// TestGitGitlinkSplitIndexReplaced (review13e): in a split index, a file
// of the shared index turned into a gitlink is a replacement: its entry in
// .git/index has no name (the name is the shared entry's, found through
// the replace bitmap).
func TestGitGitlinkSplitIndexReplaced(t *testing.T) {
	gitlinkDuringRun(t, `h=$(git rev-parse HEAD)
mkdir -p a/b && echo x > a/b/c && git add a/b/c && rm a/b/c
cp .git/index /tmp/ix
GIT_INDEX_FILE=/tmp/ix git update-index --split-index
GIT_INDEX_FILE=/tmp/ix git update-index --cacheinfo 160000,$h,a/b/c
mv /tmp/ix .git/index
`)
}

// TestGitGitlinkBehindDecoys (review13e): the watch takes at most 4,096
// gitlinks from an index (each costs watches and work at every change);
// 4,096 decoys that sort first hide a real one from it, and the host's git
// status during the run then ran the nested repository's core.fsmonitor.
// A bound the agent can fill cannot be closed by the watch: the exit check
// still covers every depth, and the user is now told during the run, at
// once, not to run git there on the host until the run ends (review13c's
// code said nothing).
func TestGitGitlinkBehindDecoys(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	h.repo(t, ws)
	script := gitAgentPrelude + `h=$(git rev-parse HEAD)
i=0; while [ $i -lt 4100 ]; do printf '160000 %s 0\t0/%05d\n' $h $i; i=$((i+1)); done | git update-index --add --index-info
git update-index --add --cacheinfo 160000,$h,a/b/c
touch planted
i=0; while [ ! -e host-done ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
`
	cmd, so, se, planted := h.startPlanted(t, ws, script)
	defer cmd.Process.Kill()
	const told = "more than 4096 gitlinks"
	for !strings.Contains(se.String(), told) && time.Since(planted) < 2*time.Second {
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.Contains(se.String(), told) {
		t.Errorf("2 s after the agent filled the index with decoys, jail had not said so (%q):\n%s", told, se.String())
	}
	os.WriteFile(filepath.Join(ws, "host-done"), nil, 0o644)
	if err := cmd.Wait(); err != nil {
		t.Errorf("jail: %v\n%s%s", err, so.String(), se.String())
	}
	if n := strings.Count(se.String(), told); n != 1 {
		t.Errorf("said %d times, want once:\n%s", n, se.String())
	}
}

// gitlinkDuringRun: the agent runs register (which makes a/b/c a gitlink
// of the work tree's index), plants a repository with a core.fsmonitor
// there, and waits while the host runs git status at the top.
func gitlinkDuringRun(t *testing.T, register string) {
	h := newGitHost(t)
	ws := workspace(t)
	h.repo(t, ws)
	script := gitAgentPrelude + register + `
mkdir -p a/b/c && cd a/b/c && git init -q && payload > ../fsm.sh && chmod +x ../fsm.sh &&
git config core.fsmonitor "$(dirname "$PWD")/fsm.sh" && cd ../../..
touch planted
i=0; while [ ! -e host-done ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
`
	cmd, so, se, planted := h.startPlanted(t, ws, script)
	defer cmd.Process.Kill()
	cfg := filepath.Join(ws, "a/b/c/.git/config")
	armed := func() bool {
		b, _ := os.ReadFile(cfg)
		return strings.Contains(string(b), "fsmonitor")
	}
	for armed() && time.Since(planted) < 2*time.Second {
		time.Sleep(time.Millisecond)
	}
	if armed() {
		t.Errorf("%s still sets core.fsmonitor %v after the agent planted it", cfg, time.Since(planted))
	}
	out, err := h.git(ws, "status")
	if h.pwned() {
		t.Errorf("host git status at the top of the work tree, during the run, ran the nested repository's core.fsmonitor:\n%v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(ws, "host-done"), nil, 0o644)
	if err := cmd.Wait(); err != nil {
		t.Errorf("jail: %v\n%s%s", err, so.String(), se.String())
	}
	if q := h.quarantined(t); !hasPath(q, cfg) {
		t.Errorf("%s not in the quarantine manifest %v\n%s", cfg, q, se.String())
	}
	if out, _ := h.git(ws, "status"); h.pwned() {
		t.Errorf("host git status after the run ran the payload:\n%s", out)
	}
}

// The user's global core.hooksPath inside a writable tree that holds no
// repository (a workspace of many repositories, ~/src with ~/src/hooks):
// its hooks run in every repository of the host, and they were writable.
func TestGitUserHooksPathNoRepo(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	hooks := filepath.Join(ws, "hooks")
	os.MkdirAll(hooks, 0o755)
	os.WriteFile(filepath.Join(hooks, "pre-commit"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
	os.WriteFile(filepath.Join(h.home, ".gitconfig"), []byte("[core]\n\thooksPath = "+hooks+"\n"), 0o644)
	r := h.run(t, ws, `payload > hooks/post-commit; chmod +x hooks/post-commit
payload >> hooks/pre-commit
rm -f hooks/pre-commit; payload > hooks/pre-commit; chmod +x hooks/pre-commit
mv hooks hooks.old && mkdir hooks && payload > hooks/pre-commit && chmod +x hooks/pre-commit
true`, nil)
	mustCode(t, r, 0)
	other := t.TempDir()
	h.repo(t, other)
	log := h.use(other)
	if h.pwned() {
		t.Errorf("the global core.hooksPath's hooks, written in the sandbox, ran on the host:\n%s\nstderr:\n%s", log, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(hooks, "pre-commit")); string(b) != "#!/bin/sh\nexit 0\n" {
		t.Errorf("hooks/pre-commit = %q", b)
	}
}

// TestGitUserHooksPathSymlink (review13e): the user's global
// core.hooksPath through a symlink in a writable tree (ws/hl -> hooks).
// The mount lands on the link's target; the link itself, an entry of the
// workspace, was replaced by the agent's own directory of hooks, which
// every repository of the host then ran (review13c's protect knew the
// link but judged nothing of it outside a git dir).
func TestGitUserHooksPathSymlink(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	hooks := filepath.Join(ws, "hooks")
	os.MkdirAll(hooks, 0o755)
	os.WriteFile(filepath.Join(hooks, "pre-commit"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
	if err := os.Symlink("hooks", filepath.Join(ws, "hl")); err != nil {
		t.Fatal(err)
	}
	// And a link on the way: init.templateDir = ws/tl/tpl, tl -> tdir.
	os.MkdirAll(filepath.Join(ws, "tdir/tpl/hooks"), 0o755)
	if err := os.Symlink("tdir", filepath.Join(ws, "tl")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(h.home, ".gitconfig"), []byte("[core]\n\thooksPath = "+filepath.Join(ws, "hl")+
		"\n[init]\n\ttemplateDir = "+filepath.Join(ws, "tl/tpl")+"\n"), 0o644)
	r := h.run(t, ws, `rm -f hl && mkdir hl && payload > hl/post-commit && chmod +x hl/post-commit
rm -f tl && mkdir -p tl/tpl/hooks && payload > tl/tpl/hooks/post-checkout && chmod +x tl/tpl/hooks/post-checkout
true`, nil)
	mustCode(t, r, 0)
	other := t.TempDir()
	h.repo(t, other)
	log := h.use(other)
	if h.pwned() {
		t.Errorf("the global core.hooksPath's link, replaced in the sandbox, ran the agent's hooks on the host:\n%s\nstderr:\n%s", log, r.stderr)
	}
	for l, want := range map[string]string{"hl": "hooks", "tl": "tdir"} {
		if to, err := os.Readlink(filepath.Join(ws, l)); err != nil || to != want {
			t.Errorf("%s: %q, %v: no longer the user's symlink\n%s", l, to, err, r.stderr)
		}
	}
}

// TestGitUserHooksPathSecondLink (review13f): a second symlink on the way
// to the user's global core.hooksPath, inside the first one's target
// (hooksPath = ws/a/c/hooks, a -> b, b/c -> ../d), and one inside a
// protected link's target (hl -> e/hooks, e -> f). review13e kept only the
// first link met (a, hl): the agent repointed b/c (or replaced e) with a
// directory of its own, and every repository of the host ran its hooks,
// though d/hooks and f/hooks stayed read-only.
func TestGitUserHooksPathSecondLink(t *testing.T) {
	for _, c := range []struct{ hooks, attack string }{
		{"a/c/hooks", "rm -f b/c && mkdir -p b/c/hooks && payload > b/c/hooks/post-commit && chmod +x b/c/hooks/post-commit"},
		{"hl", "rm -f e && mkdir -p e/hooks && payload > e/hooks/post-commit && chmod +x e/hooks/post-commit"},
	} {
		h := newGitHost(t)
		ws := workspace(t)
		for _, d := range []string{"b", "d/hooks", "f/hooks"} {
			os.MkdirAll(filepath.Join(ws, d), 0o755)
		}
		for l, to := range map[string]string{"a": "b", "b/c": "../d", "hl": "e/hooks", "e": "f"} {
			if err := os.Symlink(to, filepath.Join(ws, l)); err != nil {
				t.Fatal(err)
			}
		}
		os.WriteFile(filepath.Join(h.home, ".gitconfig"), []byte("[core]\n\thooksPath = "+filepath.Join(ws, c.hooks)+"\n"), 0o644)
		r := h.run(t, ws, c.attack+"\ntrue", nil)
		mustCode(t, r, 0)
		other := t.TempDir()
		h.repo(t, other)
		log := h.use(other)
		if h.pwned() {
			t.Errorf("hooksPath %s: a second link on the way, replaced in the sandbox, ran the agent's hooks on the host:\n%s\nstderr:\n%s", c.hooks, log, r.stderr)
		}
		for l, want := range map[string]string{"a": "b", "b/c": "../d", "hl": "e/hooks", "e": "f"} {
			if to, err := os.Readlink(filepath.Join(ws, l)); err != nil || to != want {
				t.Errorf("hooksPath %s: %s: %q, %v: no longer the user's symlink\n%s", c.hooks, l, to, err, r.stderr)
			}
		}
	}
}

// TestGitUserHooksPathDotDotAfterLink (review20a): the user's global
// core.hooksPath names a ".." after a symlink (ws/l/../hooks, l ->
// sub/dir): git hands the text to the kernel, which walks the ".." from
// the link's target, so git runs ws/sub/hooks. jail cleaned the text
// first (ws/hooks) and kept that one read-only: the agent's hook in
// ws/sub/hooks ran in every repository of the host.
func TestGitUserHooksPathDotDotAfterLink(t *testing.T) {
	for name, attack := range map[string]string{
		"write": `payload > sub/hooks/post-commit && chmod +x sub/hooks/post-commit`,
		// The directory the ".." leaves, swapped for a link of the agent's.
		"swap": `mv sub/dir sub/dir.old; mkdir -p evil/x evil/hooks && ln -sfn ../evil/x sub/dir
payload > evil/hooks/post-commit && chmod +x evil/hooks/post-commit`,
	} {
		h := newGitHost(t)
		ws := workspace(t)
		for _, d := range []string{"hooks", "sub/dir", "sub/hooks"} {
			os.MkdirAll(filepath.Join(ws, d), 0o755)
		}
		if err := os.Symlink("sub/dir", filepath.Join(ws, "l")); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(h.home, ".gitconfig"), []byte("[core]\n\thooksPath = "+ws+"/l/../hooks\n"), 0o644)
		r := h.run(t, ws, attack+"\ntrue", nil)
		mustCode(t, r, 0)
		other := t.TempDir()
		h.repo(t, other)
		log := h.use(other)
		if h.pwned() {
			t.Errorf("%s: the agent's hook where the global core.hooksPath leads (ws/l/../hooks) ran on the host:\n%s\nstderr:\n%s", name, log, r.stderr)
		}
	}
}
