package jail_test

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/internal/proctest"
	"github.com/jail-sandbox/jail/policy"
)

// TestCmdSignalKillWhole: Cmd.Signal(SIGKILL) ends the command and what it
// moved out of its process group (a setsid'd child), with or without a
// cgroup of its own. Where the command had none (no cgroup: an ordinary
// user on a v1 host; no exec audit: the supervisor never sees its exec to
// put it in one) the kill reached the command's process group only, and
// the setsid'd sleep ran on until the run's end. Seen failing on main
// (b5e615a): as root with NoExecAudit, and as jailtest both ways.
//
// The double-fork case (execreap): the setsid'd child forks the sleep and
// exits at once, so nothing in /proc linked the sleep to the command
// (parent, group and session gone) and proctree's walk missed it where
// the command has no cgroup. Seen failing on main (f8cc28d) with
// NoExecAudit as root and as jailtest: the sleep ran on.
func TestCmdSignalKillWhole(t *testing.T) {
	scripts := map[string]func(secs string) string{
		"setsid": func(secs string) string { return "setsid sleep " + secs + " & exec sleep " + secs + "1" },
		"double-fork": func(secs string) string {
			return "setsid /bin/sh -c 'sleep " + secs + " & exit 0'; exec sleep " + secs + "1"
		},
		// The command clears its child-subreaper mark first (the agent
		// filter refuses it), then double-forks.
		"unmark": func(secs string) string {
			return "exec /usr/bin/python3 -c 'import ctypes, os, sys; ctypes.CDLL(None).prctl(36, 0, 0, 0, 0); os.execv(\"/bin/sh\", [\"sh\", \"-c\", sys.argv[1]])' " +
				"\"setsid /bin/sh -c 'sleep " + secs + " & exit 0'; exec sleep " + secs + "1\""
		},
	}
	for _, how := range []string{"setsid", "double-fork", "unmark"} {
		for _, noAudit := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/no-exec-audit=%v", how, noAudit), func(t *testing.T) {
				cmdSignalKillWhole(t, scripts[how], noAudit)
			})
		}
	}
}

// cmdSignalKillWhole starts script(secs) as a command, SIGKILLs it once
// both its sleeps run, and wants "sleep secs" gone.
func cmdSignalKillWhole(t *testing.T, script func(secs string) string, noAudit bool) {
	p := policy.Default()
	p.NoExecAudit = noAudit
	sb, err := jail.Start(context.Background(), &p, jail.Options{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer sb.Close()
	secs := fmt.Sprintf("%d.%d", 900+os.Getpid()%100, time.Now().UnixNano()%1000000)
	left := []string{"sleep", secs}
	defer func() {
		for _, pid := range proctest.Pids(left...) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	cmd := sb.Command("/bin/sh", "-c", script(secs))
	if err := cmd.Start(); err != nil {
		t.Fatalf("Start command: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(proctest.Pids(left...)) == 0 || len(proctest.Pids("sleep", secs+"1")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the command's setsid'd sleep never ran")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("Signal: %v", err)
	}
	_ = cmd.Wait()
	deadline = time.Now().Add(5 * time.Second)
	for len(proctest.Pids(left...)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the command's setsid'd child outlived its SIGKILL (pids %v)", proctest.Pids(left...))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
