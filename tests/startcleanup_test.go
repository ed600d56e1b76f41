//go:build linux

package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A plain run still removes the groups a SIGKILLed supervisor left beside
// its own (the stale-cgroup cleanup runs once the agent runs now, neither
// before init's clone nor while init builds the sandbox; it must still run).
func TestStartRemovesStaleCgroups(t *testing.T) {
	startSweeps(t, 0, "true")
}

// A start undone before its agent runs (a command init cannot find) still
// removes them: the sweep waits for the agent or for the run's end.
func TestUndoneStartRemovesStaleCgroups(t *testing.T) {
	startSweeps(t, 127, "/nonexistent-jail-sweep")
}

// startSweeps leaves a SIGKILLed supervisor's groups, runs jail -- argv
// (exit code want) and checks that run removed them.
func startSweeps(t *testing.T, want int, argv ...string) {
	t.Helper()
	if limitsMode(t) != "v1" {
		// Unprivileged (or a v2 host without delegation) there is no jail
		// cgroup to leave behind (TestGCStaleCgroupElsewhere does the same).
		return
	}
	// Any jail start on this machine cleans the stale groups beside its own
	// (its own cgroup and the hierarchy roots), and other packages' tests
	// start jails all the time: both runs here live in a private cgroup of
	// their own in every v1 hierarchy, so only this test's start (and a
	// whole-tree `jail gc`) can take the killed supervisor's groups. A round
	// where one did anyway proves nothing and is tried again (never passed).
	wrap := privateCgroupWrapper(t)
	for attempt := 1; ; attempt++ {
		dead := gcStart(t, workspace(t), nil, wrap, "--pids", "64", "--", "sleep", "60")
		gcWait(t, "the supervisor's cgroups", func() bool { return len(limitsCgroupDirs(dead.Process.Pid)) > 0 })
		dead.Process.Signal(syscall.SIGKILL)
		dead.Wait()
		// init dies with its supervisor (its parent-death signal); its groups
		// are empty then, and stale.
		time.Sleep(200 * time.Millisecond)
		if len(limitsCgroupDirs(dead.Process.Pid)) == 0 {
			if attempt < 5 {
				t.Logf("round %d: another start cleaned the killed supervisor's groups first; again", attempt)
				continue
			}
			t.Fatal("the killed supervisor left no group in 5 rounds: the test proves nothing")
		}
		mustCode(t, runWith(t, runOpts{}, wrap, append([]string{"--pids", "64", "--"}, argv...)...), want)
		if left := limitsCgroupDirs(dead.Process.Pid); len(left) > 0 {
			t.Errorf("a start left the killed supervisor's groups %v", left)
		}
		return
	}
}

// privateCgroupWrapper makes a cgroup of the test's own under the root of
// every v1 hierarchy and returns a script that moves itself into them and
// execs jail with its arguments: a jail started through it nests its groups
// there, out of sight of other runs' start-time sweeps.
func privateCgroupWrapper(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("jailtest-sweep-%d-%d", os.Getpid(), time.Now().UnixNano())
	var dirs []string
	// The v1 controllers jail makes groups in (package cgroup's list);
	// cpuset is not among them (a child there needs cpus and mems first).
	for _, ctrl := range []string{"memory", "pids", "cpu", "cpuacct", "freezer"} {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", ctrl, "tasks")); err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(filepath.Join("/sys/fs/cgroup", ctrl))
		if err != nil || slices.Contains(dirs, filepath.Join(real, name)) {
			continue // co-mounted controllers (cpu,cpuacct) share one
		}
		d := filepath.Join(real, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatalf("private cgroup: %v", err)
		}
		dirs = append(dirs, d)
	}
	if len(dirs) == 0 {
		t.Fatal("no v1 hierarchy under /sys/fs/cgroup although jail reports cgroup v1")
	}
	t.Cleanup(func() {
		for _, d := range dirs {
			// Depth first: whatever jail groups are left inside, then ours.
			var all []string
			filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
				if err == nil && e.IsDir() {
					all = append(all, p)
				}
				return nil
			})
			for i := len(all) - 1; i >= 0; i-- {
				os.Remove(all[i])
			}
		}
	})
	var moves []string
	for _, d := range dirs {
		moves = append(moves, fmt.Sprintf("echo $$ > '%s/cgroup.procs' || exit 99", d))
	}
	script := filepath.Join(t.TempDir(), "jail-in-private-cgroup")
	body := "#!/bin/sh\n" + strings.Join(moves, "\n") + fmt.Sprintf("\nexec '%s' \"$@\"\n", jail(t))
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}
