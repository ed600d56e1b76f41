//go:build linux

package tests

import (
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
	// Any jail start on this machine cleans stale groups, and other
	// packages' tests start jails at the same time: when one of them takes
	// the killed supervisor's groups before this test's own start, that
	// round proves nothing, so it is tried again (never passed).
	for attempt := 1; ; attempt++ {
		dead := gcStart(t, workspace(t), nil, jail(t), "--pids", "64", "--", "sleep", "60")
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
		mustCode(t, run(t, runOpts{}, append([]string{"--pids", "64", "--"}, argv...)...), want)
		if left := limitsCgroupDirs(dead.Process.Pid); len(left) > 0 {
			t.Errorf("a start left the killed supervisor's groups %v", left)
		}
		return
	}
}
