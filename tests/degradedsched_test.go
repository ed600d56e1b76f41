//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// degradedSchedProbe, run as the agent of a degraded run inside jail (no
// pid namespace of its own: init, jail's supervisor and the outer agent
// are named by their pids), sets each ancestor's scheduling to what it is
// (nice, policy, I/O priority: a call that would change it, the door, not
// a change), then the agent's own (pid 0), which must stay open.
const degradedSchedProbe = `
import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
IOPRIO_SET, IOPRIO_GET = {"x86_64": (251, 252), "aarch64": (30, 31)}[platform.machine()]
def ioprio(p):
    cur = libc.syscall(IOPRIO_GET, 1, p)
    if cur < 0 or libc.syscall(IOPRIO_SET, 1, p, cur) < 0:
        raise OSError(ctypes.get_errno(), "ioprio")
def nice(p):
    os.setpriority(os.PRIO_PROCESS, p, os.getpriority(os.PRIO_PROCESS, p))
def policy(p):
    os.sched_setscheduler(p, os.sched_getscheduler(p), os.sched_getparam(p))
def ppid(p):
    for l in open("/proc/%d/status" % p):
        if l.startswith("PPid:"):
            return int(l.split()[1])
p = os.getppid()
while p > 1:
    name = open("/proc/%d/comm" % p).read().strip()
    for what, f in (("nice", nice), ("policy", policy), ("ioprio", ioprio)):
        try:
            f(p)
            print("OPEN", what, p, name)
        except OSError as e:
            print("shut", what, p, name, e.errno)
    p = ppid(p)
for what, f in (("nice", nice), ("policy", policy), ("ioprio", ioprio)):
    try:
        f(0)
        print("keep self", what)
    except OSError as e:
        print("LOST self", what, e.errno)
`

// TestHostsDegradedSched: in a degraded run (jail --degraded inside jail:
// no pid namespace) the agent names init and jail's supervisor by their
// pids, all with its uid, and the kernel let it set their nice value,
// scheduling policy (SCHED_IDLE) and I/O priority (idle class): the
// supervisor's end-of-run checks and its git watch and agent
// configuration guard, what degraded mode still promises, then ran only
// when nothing else wanted the CPU or the disk. Seen failing on main
// (b5e615a), root and jailtest: "OPEN nice/policy/ioprio" for init, the
// inner supervisor and the outer agent. Now a run whose init is not pid 1
// refuses scheduling changes to any process but the caller's own.
func TestHostsDegradedSched(t *testing.T) {
	degradedProbe(t, degradedSchedProbe, "scheduling", "keep self nice", "keep self policy", "keep self ioprio", "shut nice", "shut policy", "shut ioprio")
}

// degradedStopScript runs a degraded inner jail (jail in jail: no pid
// namespace) whose agent SIGSTOPs init through the thread init forked it
// from (it shares the agent's Landlock domain: the signal scope lets the
// signal through), then exits 7. timeout(1) bounds the wait.
const degradedStopScript = `cd inner || exit 1
timeout 10 "$1" --degraded -- /bin/sh -c '
for t in $(ls /proc/$PPID/task); do kill -STOP $t 2>/dev/null && echo "init stopped via $t" && break; done
exit 7'
echo "inner-exit=$?"
`

// TestHostsDegradedInitStopped: in a degraded run the agent can SIGSTOP
// init, which then never reaped the agent's command nor reported its
// exit: the run (and the user's terminal) was held until the kill switch
// or Ctrl-C, with no word of why. Seen failing on main (b5e615a), root
// and jailtest: inner-exit=124 (timeout's) after 10 s. Now the
// supervisor continues a stopped init and says so: the run ends with the
// command's status.
func TestHostsDegradedInitStopped(t *testing.T) {
	jb := jail(t)
	outer := workspace(t)
	os.MkdirAll(filepath.Join(outer, "inner"), 0o755)
	r := run(t, runOpts{dir: outer}, "-r", hostsJailDir(t), "--", "/bin/sh", "-c", degradedStopScript, "sh", jb)
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "init stopped via") {
		t.Fatalf("the attack did not take (init not stopped):\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "inner-exit=7") {
		t.Errorf("the run did not end with the command's status once init was stopped:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "init was stopped") {
		t.Errorf("the run did not say init was stopped and continued:\n%s", r.stderr)
	}
}
