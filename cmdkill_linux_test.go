package jail_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/policy"
)

// TestCmdSignalKillWhole: Cmd.Signal(SIGKILL) ends the command and what it
// moved out of its process group (a setsid'd child), with or without a
// cgroup of its own. Where the command had none (no cgroup: an ordinary
// user on a v1 host; no exec audit: the supervisor never sees its exec to
// put it in one) the kill reached the command's process group only, and
// the setsid'd sleep ran on until the run's end. Seen failing on main
// (b5e615a): as root with NoExecAudit, and as jailtest both ways.
func TestCmdSignalKillWhole(t *testing.T) {
	for _, noAudit := range []bool{false, true} {
		t.Run(fmt.Sprintf("no-exec-audit=%v", noAudit), func(t *testing.T) {
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
				for _, pid := range cmdlinePids(left...) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}()
			cmd := sb.Command("/bin/sh", "-c", "setsid sleep "+secs+" & exec sleep "+secs+"1")
			if err := cmd.Start(); err != nil {
				t.Fatalf("Start command: %v", err)
			}
			deadline := time.Now().Add(20 * time.Second)
			for len(cmdlinePids(left...)) == 0 || len(cmdlinePids("sleep", secs+"1")) == 0 {
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
			for len(cmdlinePids(left...)) > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("the command's setsid'd child outlived its SIGKILL (pids %v)", cmdlinePids(left...))
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// cmdlinePids lists the live host pids whose command line is argv.
func cmdlinePids(argv ...string) []int {
	want := strings.Join(argv, "\x00") + "\x00"
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err != nil || string(b) != want {
			continue
		}
		if s, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := strings.LastIndexByte(string(s), ')'); i > 0 && len(s) > i+2 && s[i+2] == 'Z' {
				continue
			}
		}
		out = append(out, pid)
	}
	return out
}
