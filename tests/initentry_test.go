//go:build linux

// End-to-end tests of init's start by the lean init's own ELF entry
// (session 8): the supervisor execs the lean init through Go's vfork path,
// the entry (before the Go runtime) makes the namespaces and clones init as
// the supervisor's child, so the supervisor is never forked. Both ways of
// starting init (--x-fork-init: the old fork) must give the same sandbox.
package tests

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

var initStartLine = regexp.MustCompile(`(?m)^jail: supervisor init start: (.*)$`)

const (
	startEntry = "the lean init's entry (no fork of jail)"
	startFork  = "a fork of jail"
)

// entryHome is a HOME with the lean init's copy in place (so that the
// next runs can start it by its entry), or the test is skipped (failed in
// CI) when JAIL_BIN has no lean init.
func entryHome(t *testing.T) string {
	t.Helper()
	home := leanHome(t)
	leanCopy(t, home)
	return home
}

// wantEntry is how init is started by default: by its entry on amd64,
// where make build links one.
func wantEntry() string {
	if runtime.GOARCH == "amd64" {
		return startEntry
	}
	return startFork
}

// Both ways start the same sandbox: the trace says which one ran (the
// entry by default, a fork with --x-fork-init), and the agent sees the
// same user, id maps, namespaces and capabilities either way. (The
// probe's own pipeline is left out of ps' list, and its names are counted
// once: ps sees a member as grep, or as sh before its exec, by timing.)
func TestInitEntryStartsInit(t *testing.T) {
	home := entryHome(t)
	probe := `id -u; id -g; cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups
grep -E '^(CapEff|CapPrm|CapInh|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status
grep -E '^(PPid|NSpid|Uid|Gid):' /proc/1/status; cat /proc/1/comm
readlink /proc/self/ns/user /proc/self/ns/mnt /proc/self/ns/pid /proc/self/ns/net /proc/self/ns/ipc /proc/self/ns/uts /proc/self/ns/cgroup | sed 's/:.*//'
ps -o pid=,sid=,pgid=,comm= -p 1; ps -o sid=,comm= -A | grep -v -e ' ps$' -e ' grep$' -e ' sort$' | sort -u`
	out := map[string]string{}
	for _, c := range []struct{ flag, want string }{{"", wantEntry()}, {"--x-fork-init", startFork}} {
		args := []string{"--quiet"}
		if c.flag != "" {
			args = append(args, c.flag)
		}
		args = append(args, "--", "/bin/sh", "-c", probe)
		r := run(t, runOpts{env: []string{"HOME=" + home, "XDG_STATE_HOME=", "JAIL_TRACE=1"}}, args...)
		mustCode(t, r, 0)
		m := initStartLine.FindStringSubmatch(r.stderr)
		if m == nil {
			t.Fatalf("%q: no init start line in the trace:\n%s", c.flag, r.stderr)
		}
		if m[1] != c.want {
			t.Errorf("%q: init started by %q, want %q", c.flag, m[1], c.want)
		}
		out[c.flag] = r.stdout
	}
	if out[""] != out["--x-fork-init"] {
		t.Errorf("the sandbox differs between the two starts:\nentry:\n%s\nfork:\n%s", out[""], out["--x-fork-init"])
	}
	uid := os.Getuid()
	want := fmt.Sprintf("%10d %10d %10d", uid, uid, 1)
	if uid == 0 {
		want = fmt.Sprintf("%10d %10d %10d", 0, 65534, 1)
	}
	if !strings.Contains(out[""], want) || !strings.Contains(out[""], "deny") {
		t.Errorf("uid map or setgroups: want %q and deny in:\n%s", want, out[""])
	}
	for _, w := range []string{"CapEff:\t0000000000000000", "CapAmb:\t0000000000000000", "NoNewPrivs:\t1", "PPid:\t0", "NSpid:\t1\n", "1 jail-init"} {
		if !strings.Contains(out[""], w) {
			t.Errorf("the agent's view lacks %q:\n%s", w, out[""])
		}
	}
}

// children lists the pids of pid's children (every thread's).
func children(pid int) []int {
	var out []int
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, tk := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, tk.Name()))
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	sort.Ints(out)
	return out
}

// statusField is a field of /proc/PID/status.
func statusField(pid int, name string) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// startAgent starts jail with args (then -- /bin/sh -c "echo up; exec
// sleep 30") and returns once the agent runs.
func startAgent(t *testing.T, home string, args ...string) *exec.Cmd {
	t.Helper()
	args = append(append([]string{"--quiet"}, args...), "--", "/bin/sh", "-c", "echo up; exec sleep 30")
	cmd := exec.Command(jail(t), args...)
	cmd.Dir = workspace(t)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	up := make(chan bool, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		up <- line == "up\n"
	}()
	select {
	case ok := <-up:
		if !ok {
			t.Fatalf("jail %v: the agent did not start", args)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("jail %v: the agent did not start within 20 s", args)
	}
	return cmd
}

// Init is the supervisor's own child on both paths (the entry clones it
// with CLONE_PARENT: its parent is not the entry, which is gone): the
// supervisor has exactly one child, init, pid 1 of its pid namespace, in
// a session of its own, in the sandbox's cgroup.
func TestInitEntryParentIsSupervisor(t *testing.T) {
	home := entryHome(t)
	for _, flag := range []string{"", "--x-fork-init"} {
		var args []string
		if flag != "" {
			args = append(args, flag)
		}
		cmd := startAgent(t, home, append(args, "--pids", "200")...)
		sup := cmd.Process.Pid
		kids := children(sup)
		if len(kids) != 1 {
			t.Fatalf("%q: the supervisor has children %v, want init alone (no entry process left)", flag, kids)
		}
		init := kids[0]
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", init))
		if got := strings.TrimSpace(string(comm)); got != "jail-init" {
			t.Errorf("%q: the supervisor's child is %q, want jail-init", flag, got)
		}
		if got := statusField(init, "PPid"); got != strconv.Itoa(sup) {
			t.Errorf("%q: init's parent is %s, want the supervisor %d", flag, got, sup)
		}
		if ns := strings.Fields(statusField(init, "NSpid")); len(ns) < 2 || ns[len(ns)-1] != "1" {
			t.Errorf("%q: init's NSpid %v, want pid 1 of a pid namespace of its own", flag, ns)
		}
		// Its timer slack, set on the thread that starts it (ns.InitTimerSlack),
		// inherited through the entry and its clone, and kept by execve.
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/timerslack_ns", init)); strings.TrimSpace(string(b)) != "1000000" {
			t.Errorf("%q: init's timer slack %q, want 1000000", flag, strings.TrimSpace(string(b)))
		}
		if sid, _ := unix.Getsid(init); sid != init {
			t.Errorf("%q: init's session is %d, want its own (%d)", flag, sid, init)
		}
		// New namespaces, every one, seen from the host; readable by the
		// user who started jail (init's memory belongs to its own user
		// namespace, whose owner that user is, though init is no longer
		// dumpable: the memory watch reads /proc/INIT/root so).
		for _, n := range []string{"user", "mnt", "pid", "net", "ipc", "uts", "cgroup"} {
			var host, in unix.Stat_t
			if err := unix.Stat("/proc/self/ns/"+n, &host); err != nil {
				t.Fatal(err)
			}
			if err := unix.Stat(fmt.Sprintf("/proc/%d/ns/%s", init, n), &in); err != nil {
				t.Errorf("%q: init's %s namespace: %v", flag, n, err)
			} else if in.Ino == host.Ino {
				t.Errorf("%q: init shares the host's %s namespace", flag, n)
			}
		}
		if _, err := os.Readlink(fmt.Sprintf("/proc/%d/root", init)); err != nil {
			t.Errorf("%q: init's /proc root unreadable by the user who started it: %v", flag, err)
		}
		// In the sandbox's cgroup (joined before its spec, or born there),
		// with the agent: started by root, that is jail's own cgroup.
		cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", init))
		if agents := children(init); len(agents) != 1 {
			t.Errorf("%q: init's children %v, want the agent alone", flag, agents)
		} else if acg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", agents[0])); string(acg) != string(cg) {
			t.Errorf("%q: init's cgroups differ from the agent's:\n%s\n%s", flag, cg, acg)
		}
		if os.Getuid() == 0 && !strings.Contains(string(cg), "/jail-") {
			t.Errorf("%q: init is not in a jail cgroup:\n%s", flag, cg)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}

// supervisorFaults runs jail -- /bin/true and returns the supervisor's own
// minor page faults (every thread's, not its children's), read from its
// /proc entry while it is a zombie.
func supervisorFaults(t *testing.T, home string, args ...string) int {
	t.Helper()
	args = append(append([]string{"--quiet"}, args...), "--", "/bin/true")
	cmd := exec.Command(jail(t), args...)
	cmd.Dir = workspace(t)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	var si unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &si, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			if err != nil {
				t.Fatalf("waitid: %v", err)
			}
			break
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err := cmd.Wait(); err != nil {
		t.Fatalf("jail %v: %v", args, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command's closing parenthesis: state is the 3rd
	// field of the line, minflt the 10th.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	n, err := strconv.Atoi(f[7])
	if err != nil {
		t.Fatalf("minflt in %q: %v", b, err)
	}
	return n
}

// The supervisor is not forked: a fork copies its page tables and each
// page it writes afterwards takes a copy-on-write fault (~150-230 a run
// here). Its own minor faults, entry against --x-fork-init, in alternation.
func TestInitEntrySupervisorNotForked(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the lean init's entry is amd64 only")
	}
	home := entryHome(t)
	var entry, fork []int
	for i := 0; i < 5; i++ {
		entry = append(entry, supervisorFaults(t, home))
		fork = append(fork, supervisorFaults(t, home, "--x-fork-init"))
	}
	sort.Ints(entry)
	sort.Ints(fork)
	t.Logf("the supervisor's minor faults: entry %v, fork %v", entry, fork)
	if entry[2] > fork[2]-60 {
		t.Errorf("the supervisor's minor faults (median) are %d started by the entry and %d forked: the entry should save the fork's copy-on-write faults (60+)", entry[2], fork[2])
	}
}

// A supervisor killed at any moment of the start, or while the agent runs,
// leaves nothing of the sandbox behind: init dies with it (its
// parent-death signal, set by the entry before init runs any Go code) or,
// killed before init had a spec, finds its socket closed and exits. This
// test process is a child subreaper, so an init that outlived the
// supervisor would become its child and be seen.
func TestInitEntryKilledSupervisor(t *testing.T) {
	home := entryHome(t)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatalf("PR_SET_CHILD_SUBREAPER: %v", err)
	}
	defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	for _, flag := range []string{"", "--x-fork-init"} {
		for _, delay := range []time.Duration{0, 1, 2, 3, 4, 6, 8, 11, 15, 20, 30, 45, 70, 100} {
			args := []string{"--quiet"}
			if flag != "" {
				args = append(args, flag)
			}
			args = append(args, "--", "/bin/sleep", "30")
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			cmd := exec.CommandContext(ctx, jail(t), args...)
			cmd.Dir = workspace(t)
			cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME=")
			if err := cmd.Start(); err != nil {
				cancel()
				t.Fatal(err)
			}
			time.Sleep(delay * time.Millisecond)
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
			cancel()
			if left := orphansAlive(5 * time.Second); len(left) > 0 {
				t.Errorf("%q killed %v after its start: processes outlived it: %v", flag, delay*time.Millisecond, left)
				for _, p := range left {
					_ = unix.Kill(p, unix.SIGKILL)
				}
				orphansAlive(5 * time.Second)
			}
		}
	}
}

// orphansAlive reaps this process's children that exit within d (orphans
// reparented to it, a subreaper) and returns those still alive after it,
// with their command names.
func orphansAlive(d time.Duration) []int {
	deadline := time.Now().Add(d)
	for {
		var alive []int
		for _, c := range children(os.Getpid()) {
			var ws unix.WaitStatus
			if p, _ := unix.Wait4(c, &ws, unix.WNOHANG, nil); p == c {
				continue
			}
			alive = append(alive, c)
		}
		if len(alive) == 0 || time.Now().After(deadline) {
			return alive
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// jail inside jail: the outer sandbox refuses user namespaces (its seccomp
// filter). The inner jail fails as before, 125 and one line naming the
// cause and the fix, and runs with --degraded (which never uses the
// entry). Inside, the inner jail never has a trusted copy of its lean init
// to start by its entry (every directory above a state directory there is
// owned by an unmapped uid, so initbin refuses it): it forks, and the
// trace says why.
func TestInitEntryInsideJail(t *testing.T) {
	jb := jail(t)
	inner := leanHome(t)
	script := `export HOME="$2" XDG_STATE_HOME=
"$1" --quiet -- /bin/true 2>/dev/null; echo "first=$?"
JAIL_TRACE=1 "$1" --quiet -- /bin/true 2>trace; echo "second=$?"
grep 'init start\|init program' trace
grep -v '^jail: \(supervisor\|init\|directory\) ' trace
"$1" --quiet --degraded -- /bin/echo degraded-ran 2>/dev/null; echo "degraded=$?"`
	r := run(t, runOpts{}, "-r", hostsJailDir(t), "-w", inner, "--", "/bin/sh", "-c", script, "sh", jb, inner)
	mustCode(t, r, 0)
	for _, w := range []string{"first=125", "second=125", "init start: a fork of jail", "degraded-ran", "degraded=0", "inside a jail sandbox"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("inner jail: %q missing:\n%s\nstderr:\n%s", w, r.stdout, r.stderr)
		}
	}
}
