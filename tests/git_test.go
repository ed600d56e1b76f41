//go:build linux

package tests

// End-to-end tests of the git protection (issue 10, class 1): nothing the
// agent writes may change what the user's own git executes or which
// repository it uses, whether the file existed at start or appears later.
//
// Each attack is made inside the sandbox the way an agent would, then a HOST
// git (GIT_CONFIG_NOSYSTEM=1, HOME in a temp dir) runs status, commit and
// checkout in the scratch repository: its fsmonitor or hook payload would
// write a marker file. No marker may appear. Each attack is paired with a
// control run under --allow-git-config (which trusts the agent with git) in
// which the same attack must write the marker: an attack that cannot work
// proves nothing.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gitHost is the host side of a git test: a private HOME and state dir for
// git and jail, and the marker a payload writes.
type gitHost struct {
	home, state, marker, trail string
}

func newGitHost(t *testing.T) *gitHost {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		skipOrFailGit(t, "git is not installed")
	}
	h := &gitHost{home: t.TempDir(), state: t.TempDir(), marker: filepath.Join(t.TempDir(), "PWNED")}
	h.trail = filepath.Join(t.TempDir(), "trail.jsonl")
	return h
}

func skipOrFailGit(t *testing.T, why string) {
	t.Helper()
	if inCI() {
		t.Fatal(why)
	}
	t.Skip(why)
}

// env is the environment of host git and of jail: nothing of the real HOME.
func (h *gitHost) env() []string {
	return []string{
		"HOME=" + h.home, "XDG_CONFIG_HOME=" + filepath.Join(h.home, ".config"),
		"XDG_STATE_HOME=" + h.state, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=host", "GIT_AUTHOR_EMAIL=host@example.invalid",
		"GIT_COMMITTER_NAME=host", "GIT_COMMITTER_EMAIL=host@example.invalid",
		"GIT_TERMINAL_PROMPT=0", "LC_ALL=C",
	}
}

// git runs the host's git in dir.
func (h *gitHost) git(dir string, args ...string) (string, error) {
	out, err := h.cmd(dir, args...).CombinedOutput()
	return string(out), err
}

// cmd is the host's git in dir, not started.
func (h *gitHost) cmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), h.env()...)
	return cmd
}

func (h *gitHost) mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := h.git(dir, args...)
	if err != nil {
		t.Fatalf("host git %v in %s: %v\n%s", args, dir, err, out)
	}
	return out
}

// repo makes dir a repository with one commit, as the user would have it.
func (h *gitHost) repo(t *testing.T, dir string) {
	t.Helper()
	h.mustGit(t, dir, "init", "-q", "-b", "main", ".")
	os.WriteFile(filepath.Join(dir, "README"), []byte("hello\n"), 0o644)
	h.mustGit(t, dir, "add", "README")
	h.mustGit(t, dir, "commit", "-q", "-m", "initial")
}

// use is what the user's tools do after (or during) the run: an IDE's
// status, a commit (pre-commit, commit-msg, post-commit hooks), a checkout
// (post-checkout).
func (h *gitHost) use(dirs ...string) string {
	var log strings.Builder
	for i, d := range dirs {
		for _, args := range [][]string{
			{"status"},
			{"-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "-m", "host commit"},
			{"checkout", "-q", "-b", fmt.Sprintf("host-%d-%d", i, time.Now().UnixNano())},
			{"status", "--porcelain"},
		} {
			out, err := h.git(d, args...)
			fmt.Fprintf(&log, "$ git %v (in %s): %v\n%s", args, d, err, out)
		}
	}
	return log.String()
}

func (h *gitHost) pwned() bool {
	_, err := os.Lstat(h.marker)
	return err == nil
}

// run runs a script in the sandbox with the marker path as $1 ($M) and args
// as $2...
func (h *gitHost) run(t *testing.T, ws, script string, flags []string, args ...string) result {
	t.Helper()
	a := append([]string{"--audit", h.trail}, flags...)
	a = append(a, "--", "/bin/sh", "-c", gitAgentPrelude+script, "sh", h.marker)
	return run(t, runOpts{dir: ws, env: h.env()}, append(a, args...)...)
}

// gitAgentPrelude gives agent scripts $M (the marker's host path) and
// mkcommon DIR, which makes DIR the common part of a git directory (objects,
// refs, a config running the payload, payload hooks) without HEAD, so that it
// is not itself a repository: only a redirection makes git use it.
const gitAgentPrelude = `M=$1
payload() { printf '#!/bin/sh\necho PWNED >> %s\n' "$M"; }
mkcommon() {
  mkdir -p "$1/objects" "$1/refs/heads" "$1/hooks"
  printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = "echo PWNED >> %s; false"\n\thooksPath = %s/hooks\n' "$M" "$(cd "$1" && pwd)" > "$1/config"
  for h in pre-commit commit-msg post-commit post-checkout; do payload > "$1/hooks/$h"; chmod +x "$1/hooks/$h"; done
}
# mkgitdir DIR COMMON: a per-worktree git dir (HEAD, commondir) using COMMON.
mkgitdir() { mkdir -p "$1"; echo 'ref: refs/heads/main' > "$1/HEAD"; echo "$2" > "$1/commondir"; }
`

// quarantined returns the paths listed in every quarantine manifest.
func (h *gitHost) quarantined(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(h.state, "jail", "quarantine", "*", "manifest.jsonl"))
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var e struct {
				Path string `json:"path"`
			}
			if json.Unmarshal([]byte(line), &e) == nil && e.Path != "" {
				out = append(out, e.Path)
			}
		}
	}
	return out
}

// trailQuarantine returns the paths of the quarantine events in the trail.
func (h *gitHost) trailQuarantine(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(h.trail)
	if err != nil {
		t.Fatalf("trail: %v", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var e struct {
			Type string `json:"type"`
			Path string `json:"path"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == "quarantine" {
			out = append(out, e.Path)
		}
	}
	return out
}

func hasPath(list []string, p string) bool {
	for _, x := range list {
		if x == p {
			return true
		}
	}
	return false
}

// expectSafe is the verdict of an attack test: the host's git ran no
// payload, and each of want was quarantined, listed in the manifest and the
// trail, and named on stderr.
func (h *gitHost) expectSafe(t *testing.T, r result, hostLog string, want ...string) {
	t.Helper()
	if h.pwned() {
		t.Errorf("the host's git ran the agent's payload (%s exists)\nagent stdout:\n%s\nstderr:\n%s\nhost git:\n%s",
			h.marker, r.stdout, r.stderr, hostLog)
	}
	q, tq := h.quarantined(t), h.trailQuarantine(t)
	for _, p := range want {
		if !hasPath(q, p) {
			t.Errorf("%s not in the quarantine manifest %v", p, q)
		}
		if !hasPath(tq, p) {
			t.Errorf("%s: no quarantine event in the trail (%v)", p, tq)
		}
		if !strings.Contains(r.stderr, p) {
			t.Errorf("stderr does not name %s:\n%s", p, r.stderr)
		}
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still in the tree", p)
		}
	}
}

// expectGone is expectSafe without a trail (jail gc writes none).
func (h *gitHost) expectGone(t *testing.T, r result, hostLog string, want ...string) {
	t.Helper()
	if h.pwned() {
		t.Errorf("the host's git ran the agent's payload\n%s\nhost git:\n%s", r.stderr, hostLog)
	}
	q := h.quarantined(t)
	for _, p := range want {
		if !hasPath(q, p) {
			t.Errorf("%s not in the quarantine manifest %v", p, q)
		}
		if !strings.Contains(r.stderr, p) {
			t.Errorf("the output does not name %s:\n%s", p, r.stderr)
		}
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still in the tree", p)
		}
	}
}

// control runs the same attack with --allow-git-config: the payload must run.
func gitControl(t *testing.T, attack func(t *testing.T, h *gitHost, flags ...string) (string, result)) {
	t.Run("control --allow-git-config", func(t *testing.T) {
		h := newGitHost(t)
		hostLog, r := attack(t, h, "--allow-git-config")
		if !h.pwned() {
			t.Fatalf("control: the attack did not work even with git trusted: it is broken\nstdout:\n%s\nstderr:\n%s\nhost:\n%s", r.stdout, r.stderr, hostLog)
		}
	})
}

// --- attacks ---------------------------------------------------------------

// .git/commondir (absent at start, so nothing could be mounted over it)
// redirects the repository to an agent-made common dir whose config sets
// core.fsmonitor and core.hooksPath.
func TestGitCommondir(t *testing.T) {
	attack := func(t *testing.T, h *gitHost, flags ...string) (string, result) {
		ws := workspace(t)
		h.repo(t, ws)
		r := h.run(t, ws, `mkcommon .cache/c && echo ../.cache/c > .git/commondir && echo planted`, flags)
		mustCode(t, r, 0)
		if !strings.Contains(r.stdout, "planted") {
			t.Fatalf("the agent could not plant the attack:\n%s%s", r.stdout, r.stderr)
		}
		return h.use(ws), r
	}
	h := newGitHost(t)
	hostLog, r := attack(t, h)
	h.expectSafe(t, r, hostLog, gitLastWorkspace(t, hostLog)+"/.git/commondir")
	gitControl(t, attack)
}

// gitLastWorkspace extracts the first directory host git ran in.
func gitLastWorkspace(t *testing.T, hostLog string) string {
	t.Helper()
	i := strings.Index(hostLog, "(in ")
	j := strings.Index(hostLog[i:], ")")
	if i < 0 || j < 0 {
		t.Fatalf("no directory in host log %q", hostLog)
	}
	return hostLog[i+4 : i+j]
}

// In a linked worktree the shared git dir is writable (commits must work):
// the agent neither redirects the main repository (commondir created in the
// common dir) nor the worktree itself (its worktrees/NAME/commondir
// rewritten), nor plants hooks or config there.
func TestGitWorktreeCommonDir(t *testing.T) {
	attack := func(t *testing.T, h *gitHost, flags ...string) (string, result) {
		main := workspace(t)
		h.repo(t, main)
		wt := filepath.Join(workspace(t), "wt")
		h.mustGit(t, main, "worktree", "add", "-q", wt)
		common := filepath.Join(main, ".git")
		r := h.run(t, wt, `C=$2
git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m 'agent commit in the worktree' && echo commit-ok
mkcommon "$C/x" && echo x > "$C/commondir" && echo planted-main
name=$(basename "$(sed 's/^gitdir: //' .git)")
echo ../../x > "$C/worktrees/$name/commondir" && echo planted-wt
true`, flags, common)
		mustCode(t, r, 0)
		return h.use(main, wt), r
	}
	h := newGitHost(t)
	hostLog, r := attack(t, h)
	if !strings.Contains(r.stdout, "planted-main") || !strings.Contains(r.stdout, "commit-ok") {
		t.Fatalf("the agent could not write the common dir (commits would fail):\n%s%s", r.stdout, r.stderr)
	}
	main := gitLastWorkspace(t, hostLog)
	h.expectSafe(t, r, hostLog, main+"/.git/commondir")
	if strings.Contains(r.stdout, "planted-wt") {
		t.Errorf("the worktree's commondir was writable:\n%s", r.stdout)
	}
	gitControl(t, attack)
}

// A .git FILE planted in a subdirectory (first level: the sentinel's case;
// deeper: the exit check's) makes git in that directory use an agent-made
// git dir.
func TestGitPlantedGitFile(t *testing.T) {
	attack := func(t *testing.T, h *gitHost, flags ...string) (string, result) {
		ws := workspace(t)
		h.repo(t, ws)
		os.MkdirAll(filepath.Join(ws, "sub"), 0o755)
		r := h.run(t, ws, `mkcommon .cache/c && mkgitdir .cache/g ../c
echo 'gitdir: ../.cache/g' > sub/.git
mkdir -p a/b && echo 'gitdir: ../../.cache/g' > a/b/.git && echo planted`, flags)
		mustCode(t, r, 0)
		return h.use(filepath.Join(ws, "sub"), filepath.Join(ws, "a/b")), r
	}
	h := newGitHost(t)
	hostLog, r := attack(t, h)
	sub := gitLastWorkspace(t, hostLog)
	ws := filepath.Dir(sub)
	h.expectSafe(t, r, hostLog, ws+"/sub/.git", ws+"/a/b/.git")
	gitControl(t, attack)
}

// core.hooksPath naming a directory inside the tree (husky's .husky/_, or a
// .githooks that does not exist yet): the agent can neither change the hooks
// nor the scripts they call, nor create the directory. Hook-manager configs
// (lefthook) are read-only when their hooks are installed, and their local
// override, absent at start, cannot be created.
func TestGitHooksPathInTree(t *testing.T) {
	husky := func(h *gitHost, ws string) {
		h.repo(t, ws)
		h.mustGit(t, ws, "config", "core.hooksPath", ".husky/_")
		fsWrite(t, ws, ".husky/_/h", "#!/bin/sh\nn=$(basename \"$0\"); s=$(dirname \"$(dirname \"$0\")\")/$n\n[ -f \"$s\" ] || exit 0\nsh -e \"$s\"\n", 0o755)
		for _, hook := range []string{"pre-commit", "commit-msg", "post-checkout"} {
			fsWrite(t, ws, ".husky/_/"+hook, "#!/bin/sh\n. \"$(dirname \"$0\")/h\"\n", 0o755)
		}
		fsWrite(t, ws, ".husky/pre-commit", "true\n", 0o644)
	}
	attack := func(t *testing.T, h *gitHost, flags ...string) (string, result) {
		ws := workspace(t)
		husky(h, ws)
		r := h.run(t, ws, `echo "echo PWNED >> $M" >> .husky/pre-commit
echo "echo PWNED >> $M" > .husky/commit-msg
payload > .husky/_/post-commit; chmod +x .husky/_/post-commit
payload > .husky/_/pre-commit
true`, flags)
		mustCode(t, r, 0)
		return h.use(ws), r
	}
	h := newGitHost(t)
	hostLog, r := attack(t, h)
	if h.pwned() {
		t.Errorf("husky: the host ran the payload:\n%s\n%s", r.stderr, hostLog)
	}
	gitControl(t, attack)

	t.Run("absent hooksPath", func(t *testing.T) {
		attack := func(t *testing.T, h *gitHost, flags ...string) (string, result) {
			ws := workspace(t)
			h.repo(t, ws)
			h.mustGit(t, ws, "config", "core.hooksPath", ".githooks")
			// Made elsewhere and renamed into place: it appears whole.
			r := h.run(t, ws, `mkdir -p .cache/h && payload > .cache/h/pre-commit && chmod +x .cache/h/pre-commit && mv .cache/h .githooks && echo planted`, flags)
			mustCode(t, r, 0)
			return h.use(ws), r
		}
		h := newGitHost(t)
		hostLog, r := attack(t, h)
		h.expectSafe(t, r, hostLog, gitLastWorkspace(t, hostLog)+"/.githooks")
		gitControl(t, attack)
	})

	t.Run("lefthook", func(t *testing.T) {
		h := newGitHost(t)
		ws := workspace(t)
		h.repo(t, ws)
		fsWrite(t, ws, "lefthook.yml", "pre-commit:\n  commands:\n    lint:\n      run: true\n", 0o644)
		fsWrite(t, ws, ".git/hooks/pre-commit", "#!/bin/sh\n# lefthook\nlefthook run pre-commit \"$@\"\n", 0o755)
		r := h.run(t, ws, `echo "  evil: {run: 'echo PWNED >> $M'}" >> lefthook.yml
printf 'pre-commit:\n  commands:\n    evil:\n      run: echo PWNED\n' > lefthook-local.yml
true`, nil)
		mustCode(t, r, 0)
		if got := fsReadFile(t, filepath.Join(ws, "lefthook.yml")); strings.Contains(got, "PWNED") {
			t.Errorf("lefthook.yml was writable: %q", got)
		}
		h.expectSafe(t, r, "", filepath.Join(ws, "lefthook-local.yml"))
	})
}

// git init after start, where no .git existed: the agent's repository
// stays (objects, refs, HEAD, index, harmless config such as user.*), while
// config keys that run code and non-sample hooks are quarantined.
func TestGitInitAfterStart(t *testing.T) {
	attack := func(t *testing.T, h *gitHost, flags ...string) (string, result) {
		ws := workspace(t)
		os.MkdirAll(filepath.Join(ws, "lib"), 0o755)
		r := h.run(t, ws, `git init -q -b main . && git config user.email agent@example.invalid && git config user.name agent &&
echo hi > f && git add f && git commit -q -m 'agent commit' && echo committed
git config core.fsmonitor "echo PWNED >> $M; false"
payload > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit
(cd lib && git init -q && git config core.fsmonitor "echo PWNED >> $M; false")
true`, flags)
		mustCode(t, r, 0)
		return h.use(ws, filepath.Join(ws, "lib")), r
	}
	h := newGitHost(t)
	hostLog, r := attack(t, h)
	if !strings.Contains(r.stdout, "committed") {
		t.Fatalf("git init/commit failed inside:\n%s%s", r.stdout, r.stderr)
	}
	ws := gitLastWorkspace(t, hostLog)
	h.expectSafe(t, r, hostLog, ws+"/.git/hooks/pre-commit")
	if out := h.mustGit(t, ws, "log", "--format=%s", "main"); !strings.Contains(out, "agent commit") {
		t.Errorf("the agent's commit is gone: %q", out)
	}
	if out, _ := h.git(ws, "config", "user.email"); strings.TrimSpace(out) != "agent@example.invalid" {
		t.Errorf("a harmless config key was dropped: user.email = %q", out)
	}
	for _, d := range []string{ws, ws + "/lib"} {
		if out, _ := h.git(d, "config", "--local", "core.fsmonitor"); out != "" {
			t.Errorf("%s: core.fsmonitor survived: %q", d, out)
		}
	}
	gitControl(t, attack)
}

// The sentinel: while the sandbox still runs, a host git status right after
// the agent planted a redirection must not run its payload. The test waits
// (at most 2 s) until the planted entries are gone, then runs host git while
// the agent is still alive.
func TestGitSentinelDuringRun(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	h.repo(t, ws)
	os.MkdirAll(filepath.Join(ws, "sub"), 0o755)
	script := gitAgentPrelude + `mkcommon .cache/c && mkgitdir .cache/g ../c
echo ../.cache/c > .git/commondir
echo 'gitdir: ../.cache/g' > sub/.git
mkdir newdir && echo 'gitdir: ../.cache/g' > newdir/.git
touch planted
i=0; while [ ! -e host-done ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
ls -a .git sub newdir > agent-view 2>&1
`
	cmd, so, se, planted := h.startPlanted(t, ws, script)
	defer cmd.Process.Kill()
	watched := []string{ws + "/.git/commondir", ws + "/sub/.git", ws + "/newdir/.git"}
	for _, p := range watched {
		for fileExists(p) && time.Since(planted) < 2*time.Second {
			time.Sleep(time.Millisecond)
		}
		if fileExists(p) {
			t.Errorf("%s still there %v after the agent planted it: no sentinel", p, time.Since(planted))
		}
	}
	t.Logf("planted entries gone after %v (upper bound; the test polls)", time.Since(planted))
	hostLog := h.use(ws, ws+"/sub", ws+"/newdir")
	if h.pwned() {
		t.Errorf("host git during the run ran the payload:\n%s", hostLog)
	}
	os.WriteFile(filepath.Join(ws, "host-done"), nil, 0o644)
	if err := cmd.Wait(); err != nil {
		t.Errorf("jail: %v\n%s%s", err, so.String(), se.String())
	}
	r := result{stdout: so.String(), stderr: se.String()}
	h.expectSafe(t, r, hostLog, watched...)
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// A supervisor killed with SIGKILL cannot run its exit check: the next start
// (in another workspace), or jail gc, finds the earlier run's record, checks
// its trees, quarantines what the agent left and says so.
func TestGitKilledRunLeftovers(t *testing.T) {
	for _, next := range []string{"second start", "jail gc"} {
		t.Run(next, func(t *testing.T) {
			h := newGitHost(t)
			ws := workspace(t)
			h.repo(t, ws)
			// a/b/.git is deep (only an exit check finds it); .git/commondir
			// is renamed aside at once by the sentinel, and its move into the
			// quarantine is left pending by the killed supervisor.
			script := gitAgentPrelude + `mkcommon .cache/c && mkgitdir .cache/g ../c
mkdir -p a/b && echo 'gitdir: ../../.cache/g' > a/b/.git
echo ../.cache/c > .git/commondir
i=0; while [ -e .git/commondir ] && [ $i -lt 100 ]; do sleep 0.02; i=$((i+1)); done
touch planted
sleep 60`
			killAfterPlanting(t, ws, h.env(), h.marker, "--", "/bin/sh", "-c", script, "sh", h.marker)
			planted := ws + "/a/b/.git"
			if !fileExists(planted) {
				t.Fatalf("precondition: %s should survive a SIGKILLed supervisor", planted)
			}
			if aside, _ := filepath.Glob(ws + "/.git/.jail-quarantine-*"); len(aside) != 1 {
				t.Fatalf("precondition: .git/commondir should be renamed aside, pending: %v", aside)
			}

			var r result
			if next == "jail gc" {
				r = run(t, runOpts{env: h.env()}, "gc")
				r.stderr += r.stdout // gc reports on stdout
			} else {
				r = run(t, runOpts{dir: workspace(t), env: h.env()}, "--audit", h.trail, "--", "true")
			}
			mustCode(t, r, 0)
			hostLog := h.use(ws, ws+"/a/b")
			if next == "jail gc" {
				h.expectGone(t, r, hostLog, planted, ws+"/.git/commondir")
			} else {
				h.expectSafe(t, r, hostLog, planted, ws+"/.git/commondir")
			}
			if left, _ := filepath.Glob(ws + "/.git/.jail-quarantine-*"); len(left) > 0 {
				t.Errorf("the pending move was not completed: %v", left)
			}
			if !strings.Contains(r.stderr, "earlier run") {
				t.Errorf("%s does not say an earlier run left this:\n%s", next, r.stderr)
			}
		})
	}
}

// --- what must keep working --------------------------------------------------

// commit, branch, tag, stash, rebase, gc and fetch work inside, the host sees
// their results, and nothing is quarantined.
func TestGitWorkflowInside(t *testing.T) {
	h := newGitHost(t)
	remote := filepath.Join(workspace(t), "remote.git")
	h.mustGit(t, filepath.Dir(remote), "init", "-q", "--bare", "-b", "main", remote)
	ws := workspace(t)
	h.repo(t, ws)
	h.mustGit(t, ws, "remote", "add", "origin", remote)
	h.mustGit(t, ws, "push", "-q", "origin", "main")
	up := filepath.Join(workspace(t), "up")
	h.mustGit(t, filepath.Dir(up), "clone", "-q", remote, up)
	os.WriteFile(filepath.Join(up, "upstream.txt"), []byte("up\n"), 0o644)
	h.mustGit(t, up, "add", ".")
	h.mustGit(t, up, "commit", "-q", "-m", "upstream change")
	h.mustGit(t, up, "push", "-q", "origin", "main")

	script := `set -e
git config --get user.email >/dev/null 2>&1 || export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.invalid GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.invalid
echo one > a.txt && git add a.txt && git commit -q -m 'agent one'
git branch feature && git checkout -q feature
echo two > b.txt && git add b.txt && git commit -q -m 'agent two'
git tag -a v1 -m 'agent tag'
echo wip >> a.txt && git stash -q
git fetch -q origin
git rebase -q origin/main
git checkout -q main
git gc -q --prune=now
git worktree add -q wt-inside
(cd wt-inside && echo w > w.txt && git add w.txt && git commit -q -m 'agent in a worktree')
git init -q newrepo && (cd newrepo && echo n > n && git add n && git commit -q -m 'agent new repo')
echo all-ok`
	r := run(t, runOpts{dir: ws, env: h.env()}, "--audit", h.trail, "-r", remote, "--", "/bin/sh", "-c", script)
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "all-ok") {
		t.Fatalf("git workflow failed inside:\n%s%s", r.stdout, r.stderr)
	}
	checks := map[string][]string{
		"agent two":           {"log", "--format=%s", "feature"},
		"upstream change":     {"log", "--format=%s", "feature"},
		"v1":                  {"tag"},
		"stash@{0}":           {"stash", "list"},
		"origin/main":         {"branch", "-r"},
		"agent in a worktree": {"log", "--format=%s", "wt-inside", "--"},
	}
	for want, args := range checks {
		if out := h.mustGit(t, ws, args...); !strings.Contains(out, want) {
			t.Errorf("host git %v: %q lacks %q", args, out, want)
		}
	}
	h.mustGit(t, ws, "fsck", "--no-progress")
	if out := h.mustGit(t, ws+"/wt-inside", "status", "--porcelain"); out != "" {
		t.Errorf("the agent's worktree is not clean on the host: %q", out)
	}
	if out := h.mustGit(t, ws+"/newrepo", "log", "--format=%s"); !strings.Contains(out, "agent new repo") {
		t.Errorf("the agent's new repository: %q", out)
	}
	// The one cost: git gc in a repository with no commit-graph at start
	// writes one, which leaves the tree, said (a commit-graph decides
	// what the host's next gc keeps: review15f); the host's next gc
	// writes it again.
	graph := filepath.Join(ws, ".git", "objects", "info", "commit-graph")
	for _, q := range h.quarantined(t) {
		if q != graph {
			t.Errorf("an ordinary git workflow was quarantined: %s\n%s", q, r.stderr)
		}
	}
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.Contains(l, "quarantine") && !strings.Contains(l, graph) && !strings.Contains(l, "1 entry the agent left") {
			t.Errorf("notices about quarantine in an ordinary workflow:\n%s", r.stderr)
			break
		}
	}
}

// --dry-run lists the git protections: read-only control files, watched
// absent ones, the observed directories; the trail's start event carries
// the same.
func TestGitDryRun(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	h.repo(t, ws)
	h.mustGit(t, ws, "config", "core.hooksPath", ".githooks")
	r := run(t, runOpts{dir: ws, env: h.env()}, "--dry-run", "--", "true")
	mustCode(t, r, 0)
	for _, want := range [][]string{
		{"read-only", ws + "/.git/config"},
		{"read-only", ws + "/.git/hooks"},
		{"watch", ws + "/.git/commondir"},
		{"watch", ws + "/.githooks"},
		{"observe", ws},
		{"git", "exit"},
	} {
		found := false
		for _, l := range strings.Split(r.stdout, "\n") {
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(l, w)
			}
			found = found || ok
		}
		if !found {
			t.Errorf("--dry-run has no line with %q:\n%s", want, r.stdout)
		}
	}
	mustCode(t, run(t, runOpts{dir: ws, env: h.env()}, "--audit", h.trail, "--", "true"), 0)
	b, _ := os.ReadFile(h.trail)
	first := strings.SplitN(string(b), "\n", 2)[0]
	for _, want := range []string{`"git"`, ws + `/.git/commondir`, `.githooks`} {
		if !strings.Contains(first, want) {
			t.Errorf("the start event lacks %s", want)
		}
	}
}

// startPlanted starts script as the agent under jail in ws, with h's trail
// and environment, and waits until it has touched "planted" (its attack is
// in place): it returns the running jail, its output and when the plant
// was seen. The caller kills it when done.
func (h *gitHost) startPlanted(t *testing.T, ws, script string) (cmd *exec.Cmd, so, se *syncBuffer, planted time.Time) {
	t.Helper()
	cmd = exec.Command(jail(t), "--audit", h.trail, "--", "/bin/sh", "-c", script, "sh", h.marker)
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), h.env()...)
	so, se = &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = so, se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !fileExists(filepath.Join(ws, "planted")) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the agent never planted: %s %s", so.String(), se.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cmd, so, se, time.Now()
}
