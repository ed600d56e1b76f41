//go:build linux

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKilledRunGitDoesNotWidenWorkspace: an agent leaves a .git deep in its
// workspace (only the exit check finds it) and its supervisor is killed,
// so that check never runs. The next start repairs what the killed run left
// before it decides this run's protections: started from a directory
// below that .git, its workspace must be the directory it started in, not
// the "work tree" the leftover made of its parent, which is writable to
// this run's agent only through what the earlier agent planted. Seen
// failing (the parent writable) on main at 08ccd94, where the plan took
// the check's resolution of the workspace, made before the repair.
func TestKilledRunGitDoesNotWidenWorkspace(t *testing.T) {
	_, env := endHome(t)
	ws := workspace(t)
	os.Chmod(ws, 0o777) // as root the sandbox writes as host nobody
	m := marker()
	script := `mkdir -p a/b/y g/objects g/refs && echo 'ref: refs/heads/main' > g/HEAD &&
echo 'gitdir: ../../g' > a/b/.git && chmod -R a+rwx a g && touch planted; sleep 60 # ` + m
	killAfterPlanting(t, ws, env, m, "--quiet", "--", "/bin/sh", "-c", script)
	if !fileExists(filepath.Join(ws, "a", "b", ".git")) {
		t.Fatalf("precondition: a/b/.git should survive a SIGKILLed supervisor (only the exit check finds it)")
	}

	r := sh(t, runOpts{dir: filepath.Join(ws, "a", "b", "y"), env: env}, `touch ../widened 2>/dev/null; pwd`)
	mustCode(t, r, 0)
	if !strings.Contains(r.stderr, "earlier run") {
		t.Fatalf("the second start did not repair the killed run (the test cannot fail):\n%s", r.stderr)
	}
	if fileExists(filepath.Join(ws, "a", "b", ".git")) {
		t.Fatalf("the killed run's a/b/.git is still there after the repair:\n%s", r.stderr)
	}
	if fileExists(filepath.Join(ws, "a", "b", "widened")) {
		t.Fatalf("the workspace was widened to a/b by the killed run's .git, removed before the plan:\n%s", r.stderr)
	}
}

// killAfterPlanting starts jail with args in ws (env added to the
// test's), waits until its agent has made ws/planted, then SIGKILLs the
// supervisor and waits until no process carrying marker is left: what the
// agent planted stays for the next start (or jail gc) to find.
// afterKilledRun starts jail with flags in ws, kills its supervisor once
// the agent planted, runs plant (what the agent did after the kill), and
// starts again: it returns that start's result, which checked the killed
// run (fatal if it did not: the caller's test could not fail).
func afterKilledRun(t *testing.T, ws string, env []string, plant func(), flags ...string) result {
	t.Helper()
	m := marker()
	killAfterPlanting(t, ws, env, m, append(append([]string{"--quiet"}, flags...), "--", "/bin/sh", "-c", "touch planted; sleep 60 # "+m)...)
	plant()
	r := sh(t, runOpts{dir: ws, env: env}, `true`)
	mustCode(t, r, 0)
	if !strings.Contains(r.stderr, "earlier run") {
		t.Fatalf("the second start did not check the killed run (the test cannot fail):\n%s", r.stderr)
	}
	return r
}

func killAfterPlanting(t *testing.T, ws string, env []string, marker string, args ...string) {
	t.Helper()
	cmd := exec.Command(jail(t), args...)
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var se syncBuffer
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !fileExists(filepath.Join(ws, "planted")) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the agent never planted: %s", se.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	waitNoProcs(t, marker, 10*time.Second)
}
