//go:build linux

package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/proctest"
)

// This file: a jail exec command's first exec is told from every other
// exec of the sandbox by what it is (init's own fork child), not by "its
// parent is init", which any orphan of the agent's also has.

// orphanExecProbe, run as the agent: leaves an orphan (reparented to
// init) that execs in a loop with an argv the supervisor cannot read (a
// pointer to page 0: the kernel fails each with EFAULT, after the
// notification), so a jail exec start always has a rival exec from a child
// of init waiting beside it.
const orphanExecProbe = `
import os, ctypes, platform, time
nr = {"x86_64": 59, "aarch64": 221}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.argtypes = [ctypes.c_long, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p]
if os.fork() == 0:
    if os.fork() == 0:
        open("orphan.pid", "w").write("%d\n" % os.getpid())
        while True:
            libc.syscall(nr, b"/bin/true", 8, None)
            time.sleep(0.0003)
    os._exit(0)
os.wait()
time.sleep(300)
`

// TestExecOrphanNoMatch: with an orphan of the agent's exec'ing beside
// them, every jail exec command's first exec is recorded as itself (its
// pid, its argv), and the orphan's execs never carry a command's argv. On
// main's binary (f83664d) the orphan took the match: the trail recorded
// exec events of the orphan's pid with the jail exec command's argv.
func TestExecOrphanNoMatch(t *testing.T) { execOrphanNoMatch(t, orphanExecProbe) }

// TestExecOrphanNoMatchDegraded: TestExecOrphanNoMatch in a degraded run
// (review17a). There an unprivileged supervisor's kcmp on init fails
// (EPERM: init is not dumpable, and no user namespace gives the
// supervisor CAP_SYS_PTRACE over it), and the match fell back to "its
// parent is init".
func TestExecOrphanNoMatchDegraded(t *testing.T) {
	execOrphanNoMatch(t, orphanExecProbe, "--x-degraded")
}

// cloneParentExecProbe, run as the agent: makes a process with
// clone(CLONE_PARENT), so its parent is the agent's, init's forking thread,
// as a jail exec command's is, and it has not exec'd (PF_FORKNOEXEC), as
// the command has not at its first exec; it execs in a loop with an argv
// the supervisor cannot read, as orphanExecProbe's orphan does.
const cloneParentExecProbe = `
import os, ctypes, platform, time
arch = platform.machine()
nr = {"x86_64": 59, "aarch64": 221}[arch]
clone = {"x86_64": 56, "aarch64": 220}[arch]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
CLONE_PARENT, SIGCHLD = 0x8000, 17
pid = libc.syscall(clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0)
if pid == 0:
    libc.syscall.argtypes = [ctypes.c_long, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p]
    open("orphan.pid", "w").write("%d\n" % os.getpid())
    while True:
        libc.syscall(nr, b"/bin/true", 8, None)
        time.sleep(0.0003)
time.sleep(300)
`

// TestExecCloneParentNoMatchDegraded: where kcmp is refused (a degraded
// run of an unprivileged user: init is not dumpable to the supervisor), a
// process the agent made with clone(CLONE_PARENT) is, like a jail exec
// command at its first exec, a fresh child of init's forking thread. It
// took the commands' match (their argv in the trail, their limits): on
// main (e99ca00), as jailtest, the trail recorded the clone's failed
// execs with the commands' argv. Now init reports each command's pidfd
// (CLONE_PIDFD) before its exec is answered, and only that process is
// the command.
func TestExecCloneParentNoMatchDegraded(t *testing.T) {
	execOrphanNoMatch(t, cloneParentExecProbe, "--x-degraded")
}

// TestExecCloneParentNoMatch: TestExecCloneParentNoMatchDegraded in a run
// with a pid namespace (kcmp, where jail may use it).
func TestExecCloneParentNoMatch(t *testing.T) { execOrphanNoMatch(t, cloneParentExecProbe) }

func execOrphanNoMatch(t *testing.T, probe string, flags ...string) {
	ws := workspace(t)
	name := "o" + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name, append(flags, "--", "/usr/bin/python3", "-c", probe)...)
	var orphan int
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && orphan == 0; time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(ws, "orphan.pid")); err == nil && strings.HasSuffix(string(b), "\n") {
			orphan, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	if orphan == 0 {
		t.Fatalf("the probe left no orphan in 30s\n%s", sessJail(t, ws, "", "logs", name).stderr)
	}
	in := sessInspect(t, name)
	if in.Audit == "" {
		t.Fatalf("jail inspect gave no trail: %+v", in)
	}
	const n = 15
	for i := 0; i < n; i++ {
		r := run(t, runOpts{dir: ws, timeout: 25 * time.Second}, "exec", name, "--", "/bin/echo", fmt.Sprintf("cmd-%d", i))
		if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("cmd-%d", i)) {
			t.Fatalf("jail exec %d: exit %d\n%s%s", i, r.code, r.stdout, r.stderr)
		}
	}
	killNow(t, ws, name)
	mine, stolen := 0, 0
	for _, e := range eventsOf(trailEvents(t, in.Audit), "exec") {
		argv, _ := e["argv"].([]any)
		if len(argv) != 2 || argv[0] != "/bin/echo" || !strings.HasPrefix(fmt.Sprint(argv[1]), "cmd-") {
			continue
		}
		if pid, _ := e["pid"].(float64); int(pid) == orphan {
			stolen++
			continue
		}
		mine++
	}
	if stolen > 0 || mine != n {
		t.Fatalf("%d of %d jail exec commands recorded as the orphan's exec (pid %d), %d as their own", stolen, n, orphan, mine)
	}
}

// TestExecLateStartConsistent: a request init reads just before its
// deadline, whose first exec reaches the supervisor only after the client
// was given up on (the supervisor stopped from the host in between), must
// not run once the client was told it did not start; if it ran, the client
// is told it started. The command calls setsid, so a process-group kill
// after the fact does not reach it. On main's binary (f83664d) jail exec
// said "did not start" (125) and the command ran anyway: late.out appeared.
func TestExecLateStartConsistent(t *testing.T) {
	waitsOnDeadline(t)
	ws := workspace(t)
	name, in := startInspected(t, ws, "l")
	cont := func(pid int) { syscall.Kill(pid, syscall.SIGCONT) }
	// Stopped whole, not only signalled (proctest.Stop).
	if err := proctest.Stop(in.InitPid, 10*time.Second); err != nil {
		t.Fatalf("stop init: %v", err)
	}
	defer cont(in.InitPid)
	defer cont(in.Pid)
	t0 := time.Now()
	wait := jailExecBg(t, ws, name, 60*time.Second, "/usr/bin/setsid", "/bin/sh", "-c", "sleep 1; echo ran > late.out")
	// The request's deadline is at least t0+15s: init reads it at t0+14s,
	// forks, and the command's first exec waits for the stopped supervisor
	// until after the deadline.
	time.Sleep(time.Until(t0.Add(14 * time.Second)))
	if err := proctest.Stop(in.Pid, 10*time.Second); err != nil {
		t.Fatalf("stop the supervisor: %v", err)
	}
	cont(in.InitPid)
	time.Sleep(time.Until(t0.Add(17 * time.Second)))
	cont(in.Pid)
	code, out := wait()
	time.Sleep(3 * time.Second) // the command's sleep 1, had it started
	_, ran := os.Stat(filepath.Join(ws, "late.out"))
	killNow(t, ws, name)
	// The trail says whether its first exec was let through: the supervisor
	// answers it, so this does not depend on a kill's race with setsid.
	execd := false
	for _, e := range eventsOf(trailEvents(t, in.Audit), "exec") {
		if argv, _ := e["argv"].([]any); len(argv) > 0 && argv[0] == "/usr/bin/setsid" && e["decision"] == "allow" {
			execd = true
		}
	}
	switch {
	case code == 125 && (ran == nil || execd):
		t.Fatalf("jail exec said the command did not start (exit 125), and it did: exec allowed %v, late.out written %v\n%s", execd, ran == nil, out)
	case code != 125 && code != 0:
		t.Fatalf("jail exec: exit %d, want 0 (started) or 125 (did not start)\n%s", code, out)
	case code == 0 && !execd:
		t.Fatalf("jail exec said the command started, and the trail has no allowed exec of it\n%s", out)
	}
	t.Logf("jail exec: exit %d after %s; ran: %v\n%s", code, time.Since(t0).Round(time.Millisecond), ran == nil, out)
}
