//go:build linux

package tests

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// callerSlack is a timer slack no default has: what the agent must see is
// jail's caller's, passed through, not init's nor the kernel's default.
const callerSlack = 70_000

// withSlack runs f on a thread whose timer slack is slack: a process
// forked there (exec.Cmd.Start) inherits it.
func withSlack(t *testing.T, slack int, f func()) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		t.Fatalf("PR_GET_TIMERSLACK: %v", err)
	}
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(slack), 0, 0, 0); err != nil {
		t.Fatalf("PR_SET_TIMERSLACK: %v", err)
	}
	defer unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(old), 0, 0, 0)
	f()
}

// TestTimerSlackAgentIsCallers: init runs with a coarse timer slack of its
// own (ns.InitTimerSlack, fewer wake-ups of its runtime), but the agent
// and every command it runs keep the slack jail was started with.
func TestTimerSlackAgentIsCallers(t *testing.T) {
	var r result
	withSlack(t, callerSlack, func() {
		r = sh(t, runOpts{}, `cat /proc/self/timerslack_ns; sh -c 'cat /proc/self/timerslack_ns'`)
	})
	mustCode(t, r, 0)
	want := strconv.Itoa(callerSlack) + "\n" + strconv.Itoa(callerSlack)
	if got := strings.TrimSpace(r.stdout); got != want {
		t.Errorf("the agent's timer slack: %q, want %q (jail's caller's)", got, want)
	}
}

// TestTimerSlackInit: init itself runs with ns.InitTimerSlack (the
// owner of init's user namespace may read it, root or not).
func TestTimerSlackInit(t *testing.T) {
	cmd := exec.Command(jail(t), "--quiet", "--", "sleep", "5")
	cmd.Dir = workspace(t)
	withSlack(t, callerSlack, func() {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	})
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, pid := range childrenOf(cmd.Process.Pid) {
			comm, _ := os.ReadFile("/proc/" + pid + "/comm")
			if strings.TrimSpace(string(comm)) != "jail-init" {
				continue
			}
			b, err := os.ReadFile("/proc/" + pid + "/timerslack_ns")
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(b)); got != "1000000" {
				t.Errorf("init's timer slack %s, want 1000000", got)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no jail-init child of the supervisor found")
}

// TestTimerSlackSupervisor: jail's supervisor runs with a coarse timer
// slack of its own on every thread (package slack, set by its ELF entry
// before the Go runtime makes its first thread: its monitor thread wakes
// less often), whatever its caller had; the agent still gets the caller's
// (TestTimerSlackAgentIsCallers).
func TestTimerSlackSupervisor(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("jail's own entry (make build's -E jail_supervisor_entry) is amd64's")
	}
	const want = "1000000" // slack.Supervisor
	cmd := exec.Command(jail(t), "--quiet", "--", "sh", "-c", "cat /proc/self/timerslack_ns; sleep 5")
	cmd.Dir = workspace(t)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	withSlack(t, callerSlack, func() {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	})
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	// The agent's first line: the sandbox runs, and every thread the
	// supervisor made for it is there.
	line := make([]byte, 64)
	n, err := out.Read(line)
	if err != nil {
		t.Fatalf("the agent's timer slack: %v", err)
	}
	if got := strings.TrimSpace(string(line[:n])); got != strconv.Itoa(callerSlack) {
		t.Errorf("the agent's timer slack %s, want %d (jail's caller's)", got, callerSlack)
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	ents, err := os.ReadDir("/proc/" + pid + "/task")
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) < 2 {
		t.Fatalf("the supervisor has %d threads, want its runtime's too", len(ents))
	}
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/timerslack_ns") // a thread's own
		if errors.Is(err, os.ErrPermission) && os.Geteuid() != 0 {
			// Another process's slack is CAP_SYS_NICE's to read, even
			// the same user's (init's is readable as the owner of its
			// user namespace): the root pass reads the supervisor's.
			t.Skip("another process's timer slack needs CAP_SYS_NICE to read")
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(b)); got != want {
			t.Errorf("the supervisor's thread %s: timer slack %s, want %s", e.Name(), got, want)
		}
	}
}

// childrenOf lists the pids whose parent is ppid.
func childrenOf(ppid int) []string {
	var kids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(ppid) {
			kids = append(kids, e.Name())
		}
	}
	return kids
}
