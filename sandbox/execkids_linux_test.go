package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/ns"
)

// A pidfd's fdinfo names its process in the reader's pid namespace.
func TestFdinfoPid(t *testing.T) {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		t.Fatalf("pidfd_open: %v", err)
	}
	defer unix.Close(fd)
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
	if err != nil {
		t.Fatal(err)
	}
	if got := fdinfoPid(b); got != os.Getpid() {
		t.Fatalf("fdinfoPid = %d, want %d\n%s", got, os.Getpid(), b)
	}
	if got := fdinfoPid([]byte("pos:\t0\nflags:\t02\n")); got != 0 {
		t.Fatalf("fdinfoPid of no Pid line = %d, want 0", got)
	}
}

// freshPair starts a parent (standing in for init) with two children that
// never exec'd: both fresh children of it, as a jail exec command at its
// first exec and an agent's clone(CLONE_PARENT) child are of init.
func freshPair(t *testing.T) (parent int, kids [2]int) {
	t.Helper()
	cmd := exec.Command("/usr/bin/python3", "-c", `
import os, sys, time
for _ in range(2):
    if os.fork() == 0:
        time.sleep(60)
        os._exit(0)
time.sleep(60)
`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	parent = cmd.Process.Pid
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", parent, parent))
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(b))
		if len(f) == 2 {
			for i := range f {
				kids[i], _ = strconv.Atoi(f[i])
			}
			return parent, kids
		}
	}
	t.Fatalf("the stand-in for init made no two children")
	return
}

// reportedKid takes init's report, not what /proc shows: of two fresh
// children of init, only the reported one is the command (review17d: an
// agent's clone(CLONE_PARENT) child is a fresh child of init too); one whose
// exec comes before the report waits for it; a start that ends (pending
// cleared) ends the wait.
func TestReportedKid(t *testing.T) {
	initPid, kids := freshPair(t)
	x := &execs{}
	es := &ns.ExecSpec{ID: 7, ReportChild: true}
	x.mu.Lock()
	x.setPending(es)
	x.mu.Unlock()

	got := make(chan bool, 1)
	ask := func(pid int) {
		go func() {
			x.mu.Lock()
			got <- x.reportedKid(initPid, pid)
			x.mu.Unlock()
		}()
	}
	report := func(id, pid int) {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			t.Fatalf("pidfd_open: %v", err)
		}
		x.child(ns.Message{Type: ns.MsgExecChild, ID: id}, []*os.File{os.NewFile(uintptr(fd), "pidfd")})
	}
	answer := func(what string) bool {
		select {
		case v := <-got:
			return v
		case <-time.After(5 * time.Second):
			t.Fatalf("reportedKid still waits after %s", what)
			return false
		}
	}

	// No report yet: the clone's exec waits; the report of the command
	// ends the wait, and the clone is not the command.
	ask(kids[1])
	select {
	case v := <-got:
		t.Fatalf("reportedKid answered %v before any report", v)
	case <-time.After(200 * time.Millisecond):
	}
	report(7, kids[0])
	if answer("the report") {
		t.Fatalf("a fresh child of init that init did not report passed as the command")
	}
	x.mu.Lock()
	isCmd := x.reportedKid(initPid, kids[0])
	other := x.reportedKid(initPid, kids[1])
	x.mu.Unlock()
	if !isCmd || other {
		t.Fatalf("reportedKid: reported child %v (want true), other fresh child %v (want false)", isCmd, other)
	}

	// A report for another command is not this one's.
	x.mu.Lock()
	x.setPending(&ns.ExecSpec{ID: 8, ReportChild: true})
	x.mu.Unlock()
	report(7, kids[1])
	ask(kids[1])
	time.Sleep(100 * time.Millisecond)
	// The start ends without a report (init failed it before the fork).
	x.mu.Lock()
	x.setPending(nil)
	x.mu.Unlock()
	if answer("the start ended") {
		t.Fatalf("a report for command 7 made command 8's match")
	}
}
