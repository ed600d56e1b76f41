package cgroup

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/proctree"
)

// startInSub starts sh -c script blocked on stdin, moves it into sub,
// then lets it go.
func startInSub(t *testing.T, sub *Sub, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "read x; "+script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	startHeld(t, cmd, sub.Add)
	return cmd
}

// waitMarker waits until n processes with marker in their argv live.
func waitMarker(t *testing.T, marker string, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); markerAlive(marker) < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d processes with %s, want %d", markerAlive(marker), marker, n)
		}
	}
}

// TestV1SubKillsDoubleForkedSetsid: a command's double-forked setsid'd
// child whose parent exited has no link to the command left in /proc
// (parent, group and session all gone): the /proc walk jail exec used
// (proctree) leaves it running, which this test sees first, or it shows
// nothing. Its sub-cgroup's kill ends it, and leaves the sandbox's other
// processes alone.
func TestV1SubKillsDoubleForkedSetsid(t *testing.T) {
	haveV1(t)
	g := openV1Real(t, Limits{Pids: 64})
	other := fmt.Sprintf("%d.%d", 100000+os.Getpid(), time.Now().UnixNano()%1000000)
	escaped := fmt.Sprintf("%d.%d", 200000+os.Getpid(), time.Now().UnixNano()%1000000)
	agent := exec.Command("/bin/sleep", other)
	startIn(t, g, agent)
	sub, err := g.Sub("exec-1")
	if err != nil {
		t.Fatal(err)
	}
	cmd := startInSub(t, sub, `setsid /bin/sh -c 'sleep `+escaped+` & exit 0'; exec sleep 1000`)
	t.Cleanup(func() { _ = killDir(sub.Path()) })
	waitMarker(t, escaped, 1)
	time.Sleep(100 * time.Millisecond) // the setsid'd sh exits
	never := map[int]bool{os.Getpid(): true}
	proctree.Kill("/proc", cmd.Process.Pid, 0, never, func(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) })
	_ = cmd.Wait()
	time.Sleep(100 * time.Millisecond)
	if markerAlive(escaped) == 0 {
		t.Fatal("the double-forked setsid'd sleep died of proctree's kill: the test proves nothing")
	}
	if pids, _ := readPids(sub.Path()); len(pids) == 0 {
		t.Fatal("the escaped sleep is not in the command's sub")
	}
	if g.Only(agent.Process.Pid) {
		t.Error("Only said the agent is alone with a process in a sub")
	}
	if err := sub.Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := markerAlive(escaped); n != 0 {
		t.Fatalf("%d processes of the command survived its sub's kill", n)
	}
	if markerAlive(other) != 1 {
		t.Fatal("the sub's kill reached a process of the sandbox outside it")
	}
	if ok, err := sub.Remove(); !ok || err != nil {
		t.Fatalf("Remove of the emptied sub: %v %v", ok, err)
	}
	if _, err := os.Stat(sub.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("sub %s left: %v", sub.Path(), err)
	}
}

// TestV1KillTakesSubs: the group's Kill reaches its subs' processes and
// Delete removes the subs with it. Seen failing with Kill and Delete not
// taking the subs: the sub's sleep ran on after Kill, and Delete failed
// (a group with a sub cannot be removed).
func TestV1KillTakesSubs(t *testing.T) {
	haveV1(t)
	g := openV1Real(t, Limits{})
	marker := fmt.Sprintf("%d.%d", 300000+os.Getpid(), time.Now().UnixNano()%1000000)
	sub, err := g.Sub("exec-2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Sub("exec-2"); err == nil {
		t.Fatal("a second sub of one name was made")
	}
	for _, bad := range []string{"", "..", "a/b", "cgroup.procs", "X"} {
		if _, err := g.Sub(bad); err == nil {
			t.Fatalf("sub %q was made", bad)
		}
	}
	startInSub(t, sub, `setsid /bin/sh -c 'sleep `+marker+` & exit 0'; exec sleep `+marker)
	t.Cleanup(func() { _ = killDir(sub.Path()) })
	waitMarker(t, marker, 2)
	if ok, err := sub.Remove(); ok || err != nil {
		t.Fatalf("Remove of a sub with processes: %v %v", ok, err)
	}
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Second); markerAlive(marker) > 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
	}
	if n := markerAlive(marker); n != 0 {
		t.Fatalf("%d processes of a sub survived the group's Kill", n)
	}
	if err := g.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sub.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Delete left the sub %s", sub.Path())
	}
}
