//go:build linux

package tests

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/ptytest"
	"github.com/jail-sandbox/jail/procstat"
	"github.com/jail-sandbox/jail/session"
)

// This file: long-lived sandboxes (jail run -d, exec, stop, kill, ps,
// inspect, logs; issue 13).

// sessJail runs jail with args in dir (a fresh workspace when "").
func sessJail(t *testing.T, dir, stdin string, args ...string) result {
	t.Helper()
	return run(t, runOpts{dir: dir, stdin: stdin, timeout: 90 * time.Second}, args...)
}

// startSession starts a named idle sandbox (or one running command) in ws
// and stops it at the end of the test.
func startSession(t *testing.T, ws, name string, args ...string) {
	t.Helper()
	r := sessJail(t, ws, "", append([]string{"run", "-d", "--name", name}, args...)...)
	if r.code != 0 || strings.TrimSpace(r.stdout) != name {
		t.Fatalf("jail run -d --name %s: exit %d, stdout %q\n%s", name, r.code, r.stdout, r.stderr)
	}
	t.Cleanup(func() { exec.Command(jail(t), "kill", "--now", name).Run() })
}

// killNow is jail kill --now of a test's sandbox, checked: jail kill
// returns 0 only once the supervisor has ended, so anything else is a
// sandbox the test leaves running (TestExecLateStartConsistent's, once, 25
// minutes under load, its kill unchecked).
func killNow(t *testing.T, ws, name string) {
	t.Helper()
	if r := sessJail(t, ws, "", "kill", "--now", name); r.code != 0 {
		t.Errorf("jail kill --now %s: exit %d: the sandbox may run on\n%s%s", name, r.code, r.stdout, r.stderr)
	}
}

func sessInspect(t *testing.T, name string) session.Info {
	t.Helper()
	r := sessJail(t, "", "", "inspect", name)
	var in session.Info
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &in) != nil {
		t.Fatalf("jail inspect %s: exit %d\n%s\n%s", name, r.code, r.stdout, r.stderr)
	}
	return in
}

// startInspected starts a background sandbox in ws named prefix and a
// unique marker, and returns its name and jail inspect's record, both
// pids (init's and the supervisor's) known.
func startInspected(t *testing.T, ws, prefix string) (string, session.Info) {
	t.Helper()
	name := prefix + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name)
	in := sessInspect(t, name)
	if in.InitPid <= 0 || in.Pid <= 0 {
		t.Fatalf("jail inspect gave no pids: %+v", in)
	}
	// Tests that stop the supervisor or init (SIGSTOP) can leave the
	// sandbox running when they fail half way: seen once under heavy load
	// (TestExecLateStartConsistent as jailtest, 25 minutes), and a
	// leftover's socket, gone with its test's directory, then put a line
	// into other tests' starts. Whatever outlives the kill is continued,
	// said and killed.
	// By pidfd: a pid reused meanwhile is never signalled.
	fds := map[int]int{}
	for _, pid := range []int{in.Pid, in.InitPid} {
		if fd, err := unix.PidfdOpen(pid, 0); err == nil {
			fds[pid] = fd
		}
	}
	t.Cleanup(func() {
		defer func() {
			for _, fd := range fds {
				unix.Close(fd)
			}
		}()
		exec.Command(jail(t), "kill", "--now", name).Run()
		sup, ok := fds[in.Pid]
		if !ok {
			return
		}
		// A pidfd is readable once its process has ended.
		if n, _ := unix.Poll([]unix.PollFd{{Fd: int32(sup), Events: unix.POLLIN}}, 5000); n > 0 {
			return
		}
		t.Logf("sandbox %s: supervisor %d still running 5 s after jail kill --now: killed", name, in.Pid)
		for _, fd := range fds {
			unix.PidfdSendSignal(fd, unix.SIGCONT, nil, 0)
			unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		}
	})
	return name, in
}

// Start once, exec many: exit codes, stdout, stdin, -w, --env, 126/127,
// signals; ps and inspect show it; logs has the main command's output.
func TestSessionExecMany(t *testing.T) {
	ws := workspace(t)
	name := "s" + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name)
	for i := 0; i < 100; i++ {
		r := sessJail(t, ws, fmt.Sprintf("in%d\n", i), "exec", "-i", name, "--", "/bin/sh", "-c", fmt.Sprintf("read l; echo out%d $l; exit %d", i, i%7))
		if r.code != i%7 || r.stdout != fmt.Sprintf("out%d in%d\n", i, i) {
			t.Fatalf("exec %d: exit %d (want %d), stdout %q\n%s", i, r.code, i%7, r.stdout, r.stderr)
		}
	}
	// Without -i the command's stdin is empty, not jail's.
	if r := sessJail(t, ws, "secret\n", "exec", name, "--", "cat"); r.code != 0 || r.stdout != "" {
		t.Fatalf("exec without -i read stdin: %q (exit %d)", r.stdout, r.code)
	}
	if r := sessJail(t, ws, "", "exec", "-w", "/tmp", "--env", "X=y z", name, "--", "/bin/sh", "-c", `echo "$PWD $X"`); r.stdout != "/tmp y z\n" {
		t.Fatalf("exec -w /tmp --env: %q %s", r.stdout, r.stderr)
	}
	// A mistake is said with the flag as typed (the supervisor's reply
	// named the option by its key in backquotes: session 49).
	if r := sessJail(t, ws, "", "exec", "--env", "NOVALUE", name, "--", "true"); r.code != 125 || !strings.Contains(r.stderr, `--env "NOVALUE": give NAME=VALUE`) {
		t.Fatalf("exec --env NOVALUE: exit %d, stderr %s", r.code, r.stderr)
	}
	if r := sessJail(t, ws, "", "exec", name, "--", "no-such-command-"+name); r.code != 127 {
		t.Fatalf("missing command: exit %d, want 127\n%s", r.code, r.stderr)
	}
	if r := sessJail(t, ws, "", "exec", name, "--", "/etc/passwd"); r.code != 126 {
		t.Fatalf("non-executable: exit %d, want 126\n%s", r.code, r.stderr)
	}
	if r := sessJail(t, ws, "", "exec", name, "--", "/bin/sh", "-c", "kill -TERM $$"); r.code != 128+15 {
		t.Fatalf("killed by SIGTERM: exit %d, want 143", r.code)
	}
	// The same sandbox: what one command writes to /tmp the next reads.
	sessJail(t, ws, "", "exec", name, "--", "/bin/sh", "-c", "echo kept > /tmp/k")
	if r := sessJail(t, ws, "", "exec", name, "--", "cat", "/tmp/k"); r.stdout != "kept\n" {
		t.Fatalf("a second exec does not see the first's /tmp: %q %s", r.stdout, r.stderr)
	}
	out := sessJail(t, ws, "", "ps").stdout
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, name+" ") {
			line = l
		}
	}
	if line == "" || !strings.Contains(line, "running") || !strings.Contains(line, "(idle)") || !strings.Contains(line, " none ") {
		t.Fatalf("jail ps does not show %s running, idle, net none:\n%s", name, out)
	}
	in := sessInspect(t, name)
	if in.Name != name || in.State != "running" || in.Pids < 1 || in.MemoryBytes <= 0 || in.Audit == "" || len(in.Policy) == 0 {
		t.Fatalf("inspect: %+v", in)
	}
	// The commands are in the trail, one chain.
	b, _ := os.ReadFile(in.Audit)
	if !strings.Contains(string(b), "out99") {
		t.Fatalf("trail %s lacks the exec'd commands", in.Audit)
	}
	if r := sessJail(t, ws, "", "exec", "no-such-sandbox", "--", "true"); r.code != 125 || !strings.Contains(r.stderr, "no running sandbox") {
		t.Fatalf("exec into an unknown name: exit %d %s", r.code, r.stderr)
	}
	if r := sessJail(t, ws, "", "run", "-d", "--name", name); r.code != 125 || !strings.Contains(r.stderr, "running") {
		t.Fatalf("a second sandbox of the same name: exit %d %s", r.code, r.stderr)
	}
	if r := sessJail(t, ws, "", "audit", "--verify", in.Audit); r.code != 0 && !strings.Contains(r.stdout+r.stderr, "ok") {
		t.Logf("audit verify: %s %s", r.stdout, r.stderr)
	}
}

// exec -t: the command's terminal is a pty of the sandbox's own devpts.
func TestSessionExecTty(t *testing.T) {
	ws := workspace(t)
	name := "t" + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name)
	r := sessJail(t, ws, "", "exec", "-t", name, "--", "/bin/sh", "-c", "tty; test -t 0 && test -t 1 && echo isatty")
	if r.code != 0 || !strings.Contains(r.stdout, "/dev/pts/") || !strings.Contains(r.stdout, "isatty") {
		t.Fatalf("exec -t: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	// Through script(1): jail exec's own stdio is a terminal.
	if _, err := exec.LookPath("script"); err == nil {
		cmd := exec.Command("script", "-qec", jail(t)+" exec -it "+name+" -- /bin/sh -c 'stty size; tty'", "/dev/null")
		cmd.Dir = ws
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "/dev/pts/") {
			t.Fatalf("exec -it under script: %v\n%s", err, out)
		}
	}
}

// A terminal fd is never handed to an exec'd command (CVE-2017-5226:
// TIOCSTI into the user's shell), nor a directory (a way out of the mount
// tree): the supervisor refuses them, whatever the client does.
func TestSessionRefusesTerminalAndDirFDs(t *testing.T) {
	ws := workspace(t)
	name := "f" + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name)
	ctl := sessInspect(t, name).Control
	_, slave := ptytest.Open(t)
	dir, _ := os.Open(ws)
	defer dir.Close()
	null, _ := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	defer null.Close()
	for _, tc := range []struct {
		what  string
		stdio []*os.File
		want  string
	}{
		{"a terminal as stdin", []*os.File{slave, null, null}, "terminal"},
		{"a terminal as stderr", []*os.File{null, null, slave}, "terminal"},
		{"a directory as stdin", []*os.File{dir, null, null}, "is a directory"},
	} {
		c, err := session.Dial(ctl)
		if err != nil {
			t.Fatal(err)
		}
		c.Send(session.Request{Op: session.OpExec, Argv: [][]byte{[]byte("/bin/true")}}, tc.stdio...)
		var rep session.Reply
		_, err = c.Recv(&rep)
		c.Close()
		if err != nil || rep.OK || !strings.Contains(rep.Error, tc.want) {
			t.Errorf("%s: reply %+v, %v; want a refusal naming %q", tc.what, rep, err, tc.want)
		}
	}
}

// jail stop is graceful (a trap inside runs), then nothing is left: no
// process, cgroup, mount or network namespace, registry record or socket.
func TestSessionStopGracefulLeavesNothing(t *testing.T) {
	ws := workspace(t)
	m := marker()
	name := "g" + strings.ReplaceAll(m, ".", "")
	startSession(t, ws, name, "--kill-grace", "20s", "--", "/bin/sh", "-c",
		"trap 'echo trapped > "+ws+"/trap; exit 0' TERM; while :; do sleep 0.1; done")
	// An exec'd command that traps TERM too, and one that outlives it.
	bg := exec.Command(jail(t), "exec", name, "--", "/bin/sh", "-c", "trap 'echo execd > "+ws+"/trap2; exit 0' TERM; sleep "+m+" & wait")
	bg.Dir = ws
	if err := bg.Start(); err != nil {
		t.Fatal(err)
	}
	in := sessInspect(t, name)
	deadline := time.Now().Add(10 * time.Second)
	for len(procsWith("sleep\x00"+m)) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	netns, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", in.InitPid))
	mntns, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", in.InitPid))
	cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", in.InitPid))
	start := time.Now()
	if r := sessJail(t, ws, "", "stop", name); r.code != 0 {
		t.Fatalf("jail stop: exit %d %s", r.code, r.stderr)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("stop took %v: the trap did not end it before the 20s grace", d)
	}
	for _, f := range []string{"trap", "trap2"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
			t.Errorf("the TERM trap of %s did not run: %v", f, err)
		}
	}
	bg.Wait()
	waitNoProcs(t, "sleep\x00"+m, 3*time.Second)
	assertGone(t, name, in, netns, mntns, string(cg))
}

// assertGone checks that nothing of a sandbox is left on the host.
func assertGone(t *testing.T, name string, in session.Info, netns, mntns, cgroups string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	// The kernel hands a freed namespace's inode number to the next new
	// namespace at once: a process that started after this point is in
	// another sandbox's (on this shared host, anyone's), not this one's.
	cutoff := uptimeTicks(t)
	for {
		var left []string
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if st, err := procstat.Read("", pid); err != nil || st.StartTime > cutoff {
				continue
			}
			if l, _ := os.Readlink("/proc/" + e.Name() + "/ns/net"); netns != "" && l == netns {
				left = append(left, "a process in the sandbox's netns: "+e.Name())
			}
			if l, _ := os.Readlink("/proc/" + e.Name() + "/ns/mnt"); mntns != "" && l == mntns {
				left = append(left, "a process in the sandbox's mount ns: "+e.Name())
			}
		}
		if unix.Kill(in.Pid, 0) == nil {
			left = append(left, "the supervisor")
		}
		for _, p := range []string{in.Control, strings.TrimSuffix(in.Control, ".sock") + ".json", filepath.Join(filepath.Dir(in.Control), "name."+name)} {
			if _, err := os.Lstat(p); err == nil {
				left = append(left, p)
			}
		}
		for _, l := range strings.Split(cgroups, "\n") {
			f := strings.SplitN(l, ":", 3)
			if len(f) != 3 || !strings.Contains(f[2], "jail") {
				continue
			}
			ctrl := strings.Split(f[1], ",")[0]
			dir := filepath.Join("/sys/fs/cgroup", ctrl, f[2])
			if f[1] == "" {
				dir = filepath.Join("/sys/fs/cgroup", f[2])
			}
			if _, err := os.Stat(dir); err == nil {
				left = append(left, "cgroup "+dir)
			}
		}
		if strings.Contains(sessJail(t, "", "", "ps").stdout, name) {
			left = append(left, "jail ps still lists it")
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("left behind: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// jail kill NAME --reason: everything dies at once, and the reason is in
// the trail.
func TestSessionKillReason(t *testing.T) {
	ws := workspace(t)
	m := marker()
	name := "k" + strings.ReplaceAll(m, ".", "")
	startSession(t, ws, name, "--kill-grace", "30s")
	bg := exec.Command(jail(t), "exec", name, "--", "/bin/sh", "-c", "trap '' TERM; setsid sleep "+m+" & sleep "+m)
	bg.Dir = ws
	bg.Start()
	deadline := time.Now().Add(10 * time.Second)
	for len(procsWith("sleep\x00"+m)) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	in := sessInspect(t, name)
	netns, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", in.InitPid))
	mntns, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", in.InitPid))
	cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", in.InitPid))
	reason := "runaway agent " + m
	if r := sessJail(t, ws, "", "kill", "--now", "--reason", reason, name); r.code != 0 {
		t.Fatalf("jail kill: exit %d %s", r.code, r.stderr)
	}
	if err := bg.Wait(); err == nil || bg.ProcessState.ExitCode() != 137 {
		t.Errorf("the exec'd command of a killed sandbox: %v (exit %d), want 137", err, bg.ProcessState.ExitCode())
	}
	waitNoProcs(t, "sleep\x00"+m, 3*time.Second)
	assertGone(t, name, in, netns, mntns, string(cg))
	b, _ := os.ReadFile(in.Audit)
	if !strings.Contains(string(b), `"type":"kill"`) || !strings.Contains(string(b), reason) {
		t.Fatalf("the trail lacks the kill and its reason %q:\n%s", reason, b)
	}
}

// A SIGKILLed supervisor takes its sandbox down; jail ps shows nothing
// stale and the name is free again.
func TestSessionSupervisorSIGKILL(t *testing.T) {
	ws := workspace(t)
	m := marker()
	name := "z" + strings.ReplaceAll(m, ".", "")
	startSession(t, ws, name)
	bg := exec.Command(jail(t), "exec", name, "--", "/bin/sh", "-c", "setsid sleep "+m+" & sleep "+m)
	bg.Dir = ws
	bg.Start()
	deadline := time.Now().Add(10 * time.Second)
	for len(procsWith("sleep\x00"+m)) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	in := sessInspect(t, name)
	netns, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", in.InitPid))
	mntns, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", in.InitPid))
	if err := unix.Kill(in.Pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	bg.Wait()
	waitNoProcs(t, "sleep\x00"+m, 5*time.Second)
	if out := sessJail(t, "", "", "ps").stdout; strings.Contains(out, name) {
		t.Fatalf("jail ps lists the dead sandbox:\n%s", out)
	}
	// Nothing stale once jail ps has looked: no process, namespace,
	// record, control socket or name claim. Its cgroup (no process left
	// in it) waits for the next start's cleanup or jail gc: a dead
	// supervisor cannot remove it, and on this shared host another
	// root jail's start may already have, so it is not checked here.
	assertGone(t, name, in, netns, mntns, "")
	startSession(t, ws, name) // the stale name claim is cleaned
}

// Limits apply to exec'd commands: the sandbox's --pids caps a burst of
// processes started through exec (bounded at 60, inside a jail whose
// limit is checked first, under timeout: see common.md's Safety).
func TestSessionExecLimits(t *testing.T) {
	ws := workspace(t)
	name := "l" + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name, "--pids", "20")
	var pol struct {
		Pids int `json:"pids"`
	}
	json.Unmarshal(sessInspect(t, name).Policy, &pol)
	if pol.Pids != 20 {
		t.Fatalf("the sandbox's pids limit is %d, want 20: not running the burst", pol.Pids)
	}
	r := sessJail(t, ws, "", "exec", name, "--", "timeout", "20", "/usr/bin/python3", "-c", `
import os, signal, time
kids = []
for i in range(60):
    try:
        pid = os.fork()
    except OSError as e:
        print("refused", e.errno)
        break
    if pid == 0:
        time.sleep(10)
        os._exit(0)
    kids.append(pid)
print(len([p for p in os.listdir("/proc") if p.isdigit()]))
for k in kids:
    os.kill(k, signal.SIGKILL)
`)
	// The limit counts init's own threads too, so the number inside is
	// near it, never the burst's 60.
	lines := strings.Fields(r.stdout)
	procs := 0
	if len(lines) > 0 {
		procs, _ = strconv.Atoi(lines[len(lines)-1])
	}
	if !strings.Contains(r.stdout, "refused 11") || procs == 0 || procs > 40 {
		t.Fatalf("a burst of 60 through exec was not capped by --pids 20: %d processes inside\n%s%s", procs, r.stdout, r.stderr)
	}
}

// Only the sandbox's user reaches its control socket: another user is
// refused (by the 0700 directory, and by the supervisor's own check when
// the modes are loosened), and so is a process inside a sandbox with the
// same uid.
func TestSessionControlSocketOtherUser(t *testing.T) {
	ws := workspace(t)
	name := "u" + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name)
	in := sessInspect(t, name)
	if os.Getuid() != 0 {
		t.Skip("another user's socket: the root pass proves it (needs to switch to jailtest)")
	}
	u, err := user.Lookup("jailtest")
	if err != nil {
		if inCI() {
			t.Fatalf("CI needs the jailtest user: %v", err)
		}
		t.Skip("no jailtest user")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	probe := func() string {
		// python3 speaks the wire: one JSON line, one back.
		cmd := exec.Command("/usr/bin/python3", "-c", `
import socket,sys
s=socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except Exception as e:
    print("connect:", e); sys.exit(0)
try:
    s.sendall(b'{"op":"inspect"}\n')
except Exception:
    pass
print(s.recv(65536).decode())`, in.Control)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := probe(); !strings.Contains(out, "connect:") {
		t.Fatalf("jailtest reached root's control socket: %s", out)
	}
	// Loosen the modes: the supervisor itself must still refuse.
	dir := filepath.Dir(in.Control)
	os.Chmod(dir, 0o755)
	os.Chmod(in.Control, 0o777)
	defer os.Chmod(dir, 0o700)
	defer os.Chmod(in.Control, 0o600)
	for d := filepath.Dir(dir); d == testHome || strings.HasPrefix(d, testHome+"/"); d = filepath.Dir(d) {
		// The test home's own path, never above it (the home may be in
		// /tmp, whose sticky bit a restore of its permission bits alone
		// dropped: every later test then saw a /tmp any user could empty).
		// The runtime directory ($XDG_RUNTIME_DIR) is private again
		// afterwards, or jail would not use it.
		if fi, err := os.Stat(d); err == nil {
			defer os.Chmod(d, fi.Mode()&(fs.ModePerm|fs.ModeSticky|fs.ModeSetgid|fs.ModeSetuid))
		}
		os.Chmod(d, 0o755)
	}
	if out := probe(); !strings.Contains(out, "not the sandbox's user") {
		t.Fatalf("with the modes loosened, jailtest got: %s", out)
	}
}

// A process inside a sandbox runs with its user's uid (unprivileged jail):
// reaching the control socket (here through a hard link in the workspace)
// must still get it nothing.
func TestSessionControlSocketFromInside(t *testing.T) {
	ws := workspace(t)
	name := "i" + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name)
	r, want := controlFromInside(t, ws, name, `{"op":"exec","argv":["L2Jpbi90cnVl"]}`)
	if !strings.Contains(r.stdout, want) {
		t.Fatalf("a process inside reached the control socket: %q %s (want a refusal: %s)", r.stdout, r.stderr, want)
	}
}

// controlFromInside sends request (one JSON line) to sandbox name's control
// socket from a process inside it, the socket reached through a hard link
// (or a symlink: connect follows it too) in the workspace ws, and returns
// what came back and the refusal expected: as root the sandbox's uid (host
// nobody) is refused first; as an ordinary user the uid matches and the
// user namespace check refuses.
func controlFromInside(t *testing.T, ws, name, request string) (r result, want string) {
	t.Helper()
	in := sessInspect(t, name)
	link := filepath.Join(ws, "ctl.sock")
	if err := os.Link(in.Control, link); err != nil {
		if err := os.Symlink(in.Control, link); err != nil {
			t.Fatal(err)
		}
	}
	r = sessJail(t, ws, "", "exec", name, "--", "/usr/bin/python3", "-c", `
import socket,sys
s=socket.socket(socket.AF_UNIX)
try:
    s.connect("`+link+`")
except Exception as e:
    print("connect:", e); sys.exit(0)
try:
    s.sendall(b'`+request+`\n')
except Exception:
    pass
print(s.recv(65536).decode())`)
	want = "inside a sandbox"
	if os.Getuid() == 0 {
		want = "not the sandbox's user"
	}
	return r, want
}

// Twenty sandboxes side by side, each running its own commands.
func TestSessionsTwenty(t *testing.T) {
	ws := workspace(t)
	base := "m" + strings.ReplaceAll(marker(), ".", "")
	var wg sync.WaitGroup
	errs := make(chan string, 40)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			name := fmt.Sprintf("%s-%d", base, i)
			r := sessJail(t, ws, "", "run", "-d", "--name", name)
			if r.code != 0 {
				errs <- fmt.Sprintf("start %s: %d %s", name, r.code, r.stderr)
				return
			}
			r = sessJail(t, ws, "", "exec", name, "--", "/bin/sh", "-c", "echo "+name+"; hostname >/dev/null")
			if r.stdout != name+"\n" {
				errs <- fmt.Sprintf("exec in %s: %q %s", name, r.stdout, r.stderr)
			}
		}(i)
	}
	wg.Wait()
	defer func() {
		for i := 0; i < 20; i++ {
			exec.Command(jail(t), "kill", "--now", fmt.Sprintf("%s-%d", base, i)).Run()
		}
	}()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	out := sessJail(t, "", "", "ps").stdout
	if n := strings.Count(out, base+"-"); n != 20 {
		t.Fatalf("jail ps lists %d of the 20:\n%s", n, out)
	}
}

// jail logs shows a background command's output; -f follows it until the
// sandbox ends. A run in the foreground can be named and exec'd into too.
func TestSessionLogsAndForeground(t *testing.T) {
	ws := workspace(t)
	m := marker()
	name := "o" + strings.ReplaceAll(m, ".", "")
	startSession(t, ws, name, "--", "/bin/sh", "-c", "echo first-"+m+"; sleep 1; echo second-"+m+"; sleep 1")
	if r := sessJail(t, ws, "", "logs", name); !strings.Contains(r.stdout, "first-"+m) {
		time.Sleep(500 * time.Millisecond)
		if r = sessJail(t, ws, "", "logs", name); !strings.Contains(r.stdout, "first-"+m) {
			t.Fatalf("jail logs: %q %s", r.stdout, r.stderr)
		}
	}
	r := sessJail(t, ws, "", "logs", "-f", name)
	if !strings.Contains(r.stdout, "second-"+m) || r.code != 0 {
		t.Fatalf("jail logs -f did not follow to the end: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	// The log outlives the sandbox.
	if r := sessJail(t, ws, "", "logs", name); r.code != 0 || !strings.Contains(r.stdout, "second-"+m) {
		t.Fatalf("jail logs after the end: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	// Foreground: jail run --name NAME -- COMMAND.
	fg := "p" + strings.ReplaceAll(m, ".", "")
	cmd := exec.Command(jail(t), "run", "--name", fg, "--", "sleep", "30")
	cmd.Dir = ws
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if r := sessJail(t, ws, "", "exec", fg, "--", "echo", "in-"+fg); r.stdout == "in-"+fg+"\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("could not exec into a foreground named sandbox")
		}
		time.Sleep(100 * time.Millisecond)
	}
	killNow(t, ws, fg)
	cmd.Wait()
}

// uptimeTicks is the time since boot in clock ticks (/proc/PID/stat's
// start times are in these).
func uptimeTicks(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		t.Fatal(err)
	}
	var up float64
	if _, err := fmt.Sscan(string(b), &up); err != nil {
		t.Fatal(err)
	}
	return uint64(up*100) + 1 // USER_HZ is 100 on Linux
}

// exec -t on a terminal takes the user's keys (-i implied): a shell given
// a terminal and no keys (docker exec -t's way) showed its prompt and
// waited for ever, deaf to Ctrl-C and `exit`, and the lines typed for it
// stayed in the terminal for the user's own shell to run on the host once
// jail exec was ended. Seen failing before -i was implied: the terminal
// stayed canonical (no key passed) and the command never read the line.
func TestSessionExecTtyTakesKeys(t *testing.T) {
	ws := workspace(t)
	name := "k" + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name)
	master, slave := openPty(t)
	defer master.Close()
	cmd := exec.Command(jail(t), "exec", "-t", name, "--", "/bin/sh", "-c", `read line; echo "got:$line"`)
	cmd.Dir = ws
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	scr := watch(master)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer cmd.Process.Kill()
	// The keys are taken once the terminal is raw (not canonical).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		if tio.Lflag&unix.ICANON == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jail exec -t on a terminal never took its keys (the terminal stays canonical); it shows:\n%s", scr.String())
		}
	}
	slave.Close()
	master.Write([]byte("hello\r"))
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("jail exec -t: %v; the terminal shows:\n%s", err, scr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the command never read the typed line; the terminal shows:\n%s", scr.String())
	}
	scr.waitFor(t, "got:hello", 5*time.Second)
}

// jail stop all stops every sandbox of this user, as jail kill all does
// (session 52: `jail stop all` said "no running sandbox \"all\"" where
// jail kill took it), an unnamed one by its ID too, and waits until each
// has ended; with none running it has nothing to say.
func TestSessionStopAll(t *testing.T) {
	ws := workspace(t)
	env, _ := privateRuntime(t)
	o := runOpts{dir: ws, env: env}
	name := "s" + strings.ReplaceAll(marker(), ".", "")
	mustCode(t, run(t, o, "run", "-d", "--name", name, "--", "sleep", "60"), 0)
	t.Cleanup(func() { run(t, o, "kill", "--now", "all") })
	mustCode(t, run(t, o, "run", "-d", "--", "sleep", "60"), 0)
	if r := run(t, o, "ps"); strings.Count(r.stdout, "sleep 60") != 2 {
		t.Fatalf("jail ps does not list the two sandboxes:\n%s%s", r.stdout, r.stderr)
	}
	r := run(t, o, "stop", "all")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("jail stop all: exit %d\nstderr: %s", r.code, r.stderr)
	}
	if r := run(t, o, "ps"); strings.Contains(r.stdout, "sleep 60") {
		t.Fatalf("jail stop all returned with a sandbox running:\n%s", r.stdout)
	}
	if r := run(t, o, "stop", "all"); r.code != 0 || r.stderr != "" {
		t.Errorf("jail stop all with none running: exit %d\nstderr: %s", r.code, r.stderr)
	}
	if r := run(t, o, "stop"); r.code != 125 || !strings.Contains(r.stderr, "NAME, ID, PID or all") {
		t.Errorf("jail stop without a name: exit %d\nstderr: %s", r.code, r.stderr)
	}
}
