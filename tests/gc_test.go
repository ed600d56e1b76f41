//go:build linux

package tests

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gcStart starts jail in the background with env and argv, returning the
// command (SIGKILLed at the end of the test if still running).
func gcStart(t *testing.T, dir string, env []string, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// gcWait polls cond for up to 10s.
func gcWait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// jail gc removes what a SIGKILLed supervisor left (degraded mode's private
// TMPDIR, its registry record) and leaves a live supervisor's alone.
func TestGCLeftovers(t *testing.T) {
	state := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + state, "XDG_RUNTIME_DIR="} // the registry in the state directory (the fallback)
	tmpOf := func(sup int) []string {
		m, _ := filepath.Glob(fmt.Sprintf("%s/jail-%d-t*-tmp-*", os.TempDir(), sup))
		return m
	}
	// The live one first, and until its housekeeping has run: its trail
	// retention lists the registry, and that removes a dead supervisor's
	// record (List), which gc would then not name. It runs once the agent
	// has started (offstart), which under load came after the kill below
	// (a CI flake: the dead one's record gone, no line for its trail).
	trace := filepath.Join(t.TempDir(), "live.trace")
	live := gcStart(t, workspace(t), append(env, "JAIL_TRACE=1", "JAIL_TEST_STDERR="+trace), "/bin/sh", "-c", `exec "$@" 2>"$JAIL_TEST_STDERR"`, "sh", jail(t), "--x-degraded", "--", "sleep", "60")
	gcWait(t, "the live supervisor's housekeeping", func() bool {
		b, _ := os.ReadFile(trace)
		return strings.Contains(string(b), "supervisor retention")
	})
	dead := gcStart(t, workspace(t), env, jail(t), "--x-degraded", "--", "sleep", "60")
	records := func() int { m, _ := filepath.Glob(filepath.Join(state, "jail", "run", "*.json")); return len(m) }
	gcWait(t, "both private TMPDIRs and records", func() bool {
		return len(tmpOf(dead.Process.Pid)) == 1 && len(tmpOf(live.Process.Pid)) == 1 && records() == 2
	})
	deadTmp := tmpOf(dead.Process.Pid)[0]
	dead.Process.Signal(syscall.SIGKILL)
	dead.Wait()
	if _, err := os.Stat(deadTmp); err != nil {
		t.Fatalf("the SIGKILLed supervisor's TMPDIR is already gone: nothing to test")
	}
	r := run(t, runOpts{env: env}, "gc")
	mustCode(t, r, 0)
	if _, err := os.Stat(deadTmp); err == nil || !strings.Contains(r.stdout, deadTmp) {
		t.Errorf("jail gc left %s of a dead supervisor:\n%s", deadTmp, r.stdout)
	}
	if len(tmpOf(live.Process.Pid)) != 1 {
		t.Errorf("jail gc removed a live supervisor's TMPDIR:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, fmt.Sprintf("supervisor %d, gone", dead.Process.Pid)) || strings.Contains(r.stdout, fmt.Sprintf("supervisor %d,", live.Process.Pid)) {
		t.Errorf("jail gc output:\n%s", r.stdout)
	}
	if records() != 1 {
		// What is left, and what its supervisor is now (a flake seen once
		// in CI: the dead one's record kept, with no line for it).
		m, _ := filepath.Glob(filepath.Join(state, "jail", "run", "*.json"))
		var left []string
		for _, f := range m {
			b, _ := os.ReadFile(f)
			var e struct{ Pid int }
			_ = json.Unmarshal(b, &e)
			st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", e.Pid))
			left = append(left, fmt.Sprintf("%s\n  /proc/%d/stat: %q", b, e.Pid, st))
		}
		t.Errorf("jail gc: %d registry records left, want the live one's alone (dead %d, live %d):\n%s\ngc said:\n%s%s",
			records(), dead.Process.Pid, live.Process.Pid, strings.Join(left, "\n"), r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "ends without an exit event (kept)") {
		t.Errorf("jail gc did not name the dead supervisor's trail (kept):\n%s", r.stdout)
	}
}

// gcCgroup makes a v1 cgroup named name in each controller jail uses and
// returns a shell prefix that moves itself there.
func gcCgroup(t *testing.T, name string) string {
	t.Helper()
	var moves []string
	for _, c := range []string{"memory", "pids", "cpu", "cpuacct", "freezer"} {
		d := filepath.Join("/sys/fs/cgroup", c, name)
		if _, err := os.Stat(filepath.Dir(d) + "/cgroup.procs"); err != nil {
			continue
		}
		if err := os.Mkdir(d, 0o755); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			// Whatever is left is the test's own: empty it, then remove.
			// A killed supervisor's processes may still be exiting (the
			// groups are busy until they are gone): try again for a while,
			// so that no group of the test's outlives it.
			deadline := time.Now().Add(5 * time.Second)
			for {
				b, _ := os.ReadFile(d + "/cgroup.procs")
				for _, p := range strings.Fields(string(b)) {
					os.WriteFile(filepath.Join("/sys/fs/cgroup", c, "cgroup.procs"), []byte(p), 0)
				}
				ents, _ := os.ReadDir(d)
				for _, e := range ents {
					if e.IsDir() {
						syscall.Rmdir(filepath.Join(d, e.Name()))
					}
				}
				err := syscall.Rmdir(d)
				if err == nil || errors.Is(err, syscall.ENOENT) {
					return
				}
				if time.Now().After(deadline) {
					t.Errorf("the test's cgroup %s is left: %v", d, err)
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
		moves = append(moves, fmt.Sprintf("echo $$ > %s/cgroup.procs", d))
	}
	return strings.Join(moves, " && ")
}

// As root (cgroup v1 here): a supervisor started from another cgroup and
// SIGKILLed leaves its groups under that cgroup, where a later jail started
// elsewhere never looks; jail gc finds and removes them anywhere, and
// leaves a live supervisor's groups (started from a third cgroup) alone.
func TestGCStaleCgroupElsewhere(t *testing.T) {
	if limitsMode(t) != "v1" {
		// Unprivileged (or a v2 host without delegation) there is no jail
		// cgroup to leave behind: TestGCLeftovers covers what there is.
		r := run(t, runOpts{}, "gc")
		mustCode(t, r, 0)
		return
	}
	id := marker()
	deadCg, liveCg := "jailtest-gc-dead-"+id, "jailtest-gc-live-"+id
	deadMove, liveMove := gcCgroup(t, deadCg), gcCgroup(t, liveCg)
	jb := jail(t)
	dead := gcStart(t, workspace(t), nil, "/bin/sh", "-c", deadMove+" && exec "+jb+" --memory 64M --pids 64 -- sleep 60")
	live := gcStart(t, workspace(t), nil, "/bin/sh", "-c", liveMove+" && exec "+jb+" --memory 64M --pids 64 -- sleep 60")
	groups := func(sup int) []string { return limitsCgroupDirs(sup) }
	gcWait(t, "both supervisors' cgroups", func() bool { return len(groups(dead.Process.Pid)) > 0 && len(groups(live.Process.Pid)) > 0 })
	deadGroups := groups(dead.Process.Pid)
	for _, g := range deadGroups {
		if !strings.Contains(g, deadCg) {
			t.Fatalf("the dead supervisor's group %s is not under %s", g, deadCg)
		}
	}
	dead.Process.Signal(syscall.SIGKILL)
	dead.Wait()
	time.Sleep(200 * time.Millisecond)
	// A plain jail run from the test's own cgroup does not reach them.
	mustCode(t, run(t, runOpts{}, "--pids", "64", "--", "true"), 0)
	if len(groups(dead.Process.Pid)) == 0 {
		t.Fatalf("the stale groups were removed by a plain run: the test proves nothing")
	}
	r := run(t, runOpts{}, "gc")
	mustCode(t, r, 0)
	if left := groups(dead.Process.Pid); len(left) > 0 {
		t.Errorf("jail gc left the dead supervisor's cgroups %v:\n%s", left, r.stdout)
	}
	if len(groups(live.Process.Pid)) == 0 {
		t.Errorf("jail gc removed a live supervisor's cgroups:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "removed cgroup") {
		t.Errorf("jail gc says nothing:\n%s", r.stdout)
	}
}
