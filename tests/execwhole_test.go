//go:build linux

package tests

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/proctest"
	"github.com/jail-sandbox/jail/procstat"
)

// This file: a jail exec command whose client was told it did not start
// leaves nothing running, not even what it moved out of its process group.

// hasChild tells whether pid has a child: by the children's stat lines,
// readable by anyone (init's own task/*/children is not: init is not
// dumpable, so a test run as the user cannot read it).
func hasChild(pid int) bool {
	all, _ := procstat.All("")
	for _, st := range all {
		if st.PPid == pid {
			return true
		}
	}
	return false
}

// TestExecLateKillWhole: init forks the command and stops (the host stops
// it while the command's first exec waits for the stopped supervisor),
// the supervisor allows that exec, and init's answer never comes: the
// client is told after the deadlines that the command did not start (125).
// The command had set a setsid'd process going: it must be gone at once,
// init still stopped, and stay gone once init runs again. On main's binary
// (e413f85) the deadline's kill went through init to the command's process
// group only: the setsid'd sleep was alive with init stopped and after.
func TestExecLateKillWhole(t *testing.T) {
	waitsOnDeadline(t)
	lateKillWhole(t, func(secs string) string { return "setsid sleep " + secs + " & exec sleep " + secs + "1" }, false)
}

// TestExecLateKillDoubleFork: as TestExecLateKillWhole, with the command's
// setsid'd child forking the sleep and exiting at once: the sleep's parent,
// process group and session are all gone, nothing in /proc links it to the
// command, and only the command's own cgroup (where the sandbox has one)
// still holds it. Seen failing on main's binary (9f4d378, root, cgroup v1):
// the sleep ran on after the 125 (proctree's walk cannot find it). Without
// a cgroup (this host as a user) it was skipped: proctree was all there
// was. Now the command is its own child subreaper (execreap): the sleep is
// re-parented to it, and proctree finds it by its parent; run everywhere.
func TestExecLateKillDoubleFork(t *testing.T) {
	waitsOnDeadline(t)
	lateKillWhole(t, func(secs string) string {
		return "setsid /bin/sh -c 'sleep " + secs + " & exit 0'; exec sleep " + secs + "1"
	}, false)
}

// lateKillWhole runs script(secs) as a jail exec command whose start is
// given up after its exec was allowed, and wants the process
// "sleep secs" it leaves gone. needCgroup: skipped where the run has no
// cgroup (proctree's limit).
func lateKillWhole(t *testing.T, script func(secs string) string, needCgroup bool) {
	ws := workspace(t)
	name, in := startInspected(t, ws, "k")
	defer killNow(t, ws, name)
	if needCgroup && (in.Cgroup == "" || in.Cgroup == "none") {
		t.Skip("the run has no cgroup: a jail exec command's kill walks /proc (proctree), which a double-forked setsid'd child escapes")
	}
	cont := func(pid int) { syscall.Kill(pid, syscall.SIGCONT) }
	defer cont(in.InitPid)
	defer cont(in.Pid)
	secs := marker()
	escaped := []string{"sleep", secs}
	defer func() {
		for _, p := range proctest.Pids(escaped...) {
			syscall.Kill(p, syscall.SIGKILL)
		}
	}()
	// Stopped whole, not only signalled (proctest.Stop): a thread of init
	// left running would take the request.
	if err := proctest.Stop(in.InitPid, 10*time.Second); err != nil {
		t.Fatalf("stop init: %v", err)
	}
	wait := jailExecBg(t, ws, name, 60*time.Second, "/bin/sh", "-c", script(secs))
	// The supervisor has sent the request; it is stopped before it can
	// answer the command's first exec, init forks the command, and is
	// stopped in turn while its fork waits on that exec.
	time.Sleep(time.Second)
	// Every thread of the supervisor stopped before init runs: one left
	// running answered the command's exec at once, init reported the
	// start before the test stopped it, and the test waited 60 s for a
	// command that ran (seen as jailtest under load, 2 runs in 69 of a
	// copy of this test: proctest.Stop).
	if err := proctest.Stop(in.Pid, 10*time.Second); err != nil {
		t.Fatalf("stop the supervisor: %v", err)
	}
	cont(in.InitPid)
	// init's fork child (an idle session: init's only child) waits on
	// its exec, which the stopped supervisor does not answer.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !hasChild(in.InitPid); time.Sleep(20 * time.Millisecond) {
	}
	// Signalled only: init's forking thread waits in the vfork until the
	// exec is answered, so init is not stopped whole before then; it takes
	// the stop when the vfork returns, before init runs a line of its own.
	syscall.Kill(in.InitPid, syscall.SIGSTOP)
	cont(in.Pid)
	// The setsid'd sleep runs once the exec is allowed.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && len(proctest.Pids(escaped...)) == 0; time.Sleep(50 * time.Millisecond) {
	}
	if len(proctest.Pids(escaped...)) == 0 {
		cont(in.InitPid)
		_, out := wait()
		t.Fatalf("the command's exec did not run with init stopped (init forked nothing?)\n%s", out)
	}
	code, out := wait()
	if code != 125 {
		// -1: still waiting when the test's context ended it (60 s, twice
		// the deadlines). The trail says how far the supervisor got.
		var trail []string
		for _, e := range trailEvents(t, in.Audit) {
			trail = append(trail, fmt.Sprint(e["ts"], " ", e["type"], " ", e["pid"], " ", e["argv"], e["text"], " ", e["decision"]))
		}
		t.Fatalf("jail exec with init stopped after the command's exec: exit %d, want 125\n%s\ntrail:\n%s", code, out, strings.Join(trail, "\n"))
	}
	time.Sleep(500 * time.Millisecond)
	if left := proctest.Pids(escaped...); len(left) > 0 {
		t.Errorf("jail exec said the command did not start, and its setsid'd process %v runs on (init stopped)\n%s", left, out)
	}
	cont(in.InitPid)
	time.Sleep(time.Second)
	if left := proctest.Pids(escaped...); len(left) > 0 {
		t.Errorf("jail exec said the command did not start, and its setsid'd process %v runs on once init runs again\n%s", left, out)
	}
}
