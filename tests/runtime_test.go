//go:build linux

package tests

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func marker() string { return fmt.Sprintf("%d.%04d", 7000+rand.Intn(2000), rand.Intn(10000)) }

func TestExitCodes(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		want   int
		stderr string
	}{
		{"true", []string{"--", "/bin/true"}, 0, ""},
		{"own code", []string{"--", "/bin/sh", "-c", "exit 7"}, 7, ""},
		{"sigterm", []string{"--", "/bin/sh", "-c", "kill -TERM $$"}, 128 + 15, ""},
		{"sigkill", []string{"--", "/bin/sh", "-c", "kill -KILL $$"}, 128 + 9, ""},
		{"not found", []string{"--", "no-such-command-xyz"}, 127, "not found"},
		{"not executable", []string{"--", "/etc/passwd"}, 126, "not executable"},
		{"directory", []string{"--", "/usr"}, 126, "not executable"},
		{"unknown flag", []string{"--no-such-flag", "--", "/bin/true"}, 125, "no-such-flag"},
		{"no command", []string{}, 125, "no command"},
		{"missing --write", []string{"-w", "/nonexistent/dir", "--", "/bin/true"}, 125, "/nonexistent/dir"},
		{"missing --read", []string{"-r", "/nonexistent/file", "--", "/bin/true"}, 125, "/nonexistent/file"},
		{"path lookup", []string{"--", "sh", "-c", "exit 3"}, 3, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, runOpts{}, c.args...)
			mustCode(t, r, c.want)
			if c.stderr != "" && !strings.Contains(r.stderr, c.stderr) {
				t.Fatalf("stderr %q does not mention %q", r.stderr, c.stderr)
			}
			if c.want == 125 && strings.Count(strings.TrimSpace(r.stderr), "\n") > 3 {
				t.Fatalf("a setup error should be a line or two, got:\n%s", r.stderr)
			}
		})
	}
}

func TestVersionAndHelp(t *testing.T) {
	r := run(t, runOpts{}, "version")
	mustCode(t, r, 0)
	if !strings.HasPrefix(r.stdout, "jail ") {
		t.Fatalf("version: %q", r.stdout)
	}
	r = run(t, runOpts{}, "--help")
	mustCode(t, r, 0)
	for _, w := range []string{"Usage:", "Examples:", "--write", "--read-only"} {
		if !strings.Contains(r.stdout+r.stderr, w) {
			t.Fatalf("--help lacks %q", w)
		}
	}
}

// Nothing started inside outlives the jail: a setsid daemon, a double fork and
// a nohup'd process are all gone when the command exits. The test first sees
// each of them running (a daemon that never started would prove nothing),
// then lets the command exit.
func TestNoSurvivors(t *testing.T) {
	m1, m2, m3 := marker(), marker(), marker()
	script := fmt.Sprintf(`setsid sleep %s >/dev/null 2>&1 < /dev/null &
( ( sleep %s >/dev/null 2>&1 & ) & )
nohup sleep %s >/dev/null 2>&1 &
until [ -e go ]; do sleep 0.02; done; exit 0`, m1, m2, m3)
	p := limitsSh(t, nil, script)
	ms := []string{"sleep\x00" + m1, "sleep\x00" + m2, "sleep\x00" + m3}
	limitsWaitProcs(t, p, 10*time.Second, ms...)
	if err := os.WriteFile(filepath.Join(p.ws, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.wait(10 * time.Second)
	mustCode(t, result{code: p.code, stdout: p.stdout.String(), stderr: p.stderr.String()}, 0)
	for _, m := range ms {
		waitNoProcs(t, m, 2*time.Second)
	}
}

// SIGKILL of the supervisor takes the whole sandbox down. The killed run
// leaves its record for the next start's check (sentry): in a state
// directory of its own, so that no later test's start reports it (it put
// "jail: earlier run ... ended without its exit check" on
// TestNoticeScreenIsTheProgramsOwn's screen).
func TestSupervisorKilled(t *testing.T) {
	m := marker()
	cmd := exec.Command(jail(t), "--", "/bin/sh", "-c", fmt.Sprintf("setsid sleep %s & sleep %s", m, m))
	cmd.Dir = workspace(t)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(procsWith("sleep\x00"+m)) < 2 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("sandbox did not start its processes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	waitNoProcs(t, "sleep\x00"+m, 3*time.Second)
}

// Signals sent to jail reach the command.
func TestSignalForwarding(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGQUIT} {
		t.Run(sig.String(), func(t *testing.T) {
			ws := workspace(t)
			script := fmt.Sprintf(`trap 'echo got; exit 42' %d; echo ready > ready; while :; do sleep 0.05; done`, int(sig))
			cmd := exec.Command(jail(t), "--", "/bin/sh", "-c", script)
			cmd.Dir = ws
			out := &strings.Builder{}
			cmd.Stdout = out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// A wait for readiness, not a speed test: under load 15-20 a start
			// took more than 5 s and the test failed with "not ready".
			deadline := time.Now().Add(30 * time.Second)
			for {
				if _, err := os.Stat(filepath.Join(ws, "ready")); err == nil {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatal("not ready")
				}
				time.Sleep(10 * time.Millisecond)
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != 42 || !strings.Contains(out.String(), "got") {
				t.Fatalf("signal %v: exit %d, output %q", sig, code, out.String())
			}
		})
	}
}

// The host's private places are invisible or private and empty inside.
//
// $HOME is the test process's own (main_test.go), in a place the host's
// read-only view would show: the secret planted there is world-readable, so
// only jail's home rule can hide it. The control shows the very same file
// readable when $HOME names another directory.
func TestHiddenPlaces(t *testing.T) {
	needVisibleHome(t)
	home := testHome
	secret := filepath.Join(home, ".jail-e2e-secret")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(secret, 0o644)
	defer os.Remove(secret)
	ctl := sh(t, runOpts{env: []string{"HOME=/nonexistent-jail-home", "XDG_STATE_HOME=" + t.TempDir()}}, "cat "+secret+" 2>&1; exit 0")
	mustCode(t, ctl, 0)
	if !strings.Contains(ctl.stdout, "s3cret") {
		t.Fatalf("control: with $HOME elsewhere the planted %s is not readable inside (%q): the test home is hidden by something other than the home rule", secret, ctl.stdout)
	}
	for _, p := range []string{"/var/tmp/jail-e2e-marker", "/dev/shm/jail-e2e-marker", "/tmp/jail-e2e-marker"} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err == nil {
			defer os.Remove(p)
		}
	}
	r := sh(t, runOpts{}, `
for d in /root /run /run/jail /var/tmp /dev/shm; do echo "$d: $(ls -A $d | tr '\n' ' ')"; done
echo "home: $(ls -A "$HOME" | tr '\n' ' ')"
echo "homes: $(ls -A /home | tr '\n' ' ')"
cat "$HOME/.jail-e2e-secret" 2>&1
ls /tmp/jail-e2e-marker 2>&1
cat /etc/shadow 2>&1 | head -1
ls /etc/ssl/private 2>&1
exit 0
`)
	mustCode(t, r, 0)
	out := r.stdout
	for _, bad := range []string{"s3cret", "jail-e2e-marker\n", "\nroot:"} {
		if strings.Contains("\n"+out, bad) {
			t.Fatalf("found %q inside:\n%s", bad, out)
		}
	}
	// /run is the sandbox's own: it holds only jail's read-only record of
	// refusals ($JAIL_DENIALS, issue 12), nothing of the host's /run.
	for _, want := range []string{"/root: \n", "/run: jail \n", "/run/jail: denials.jsonl \n", "/var/tmp: \n", "/dev/shm: \n", "home: \n"} {
		if !strings.Contains(out, want) {
			t.Fatalf("want %q (empty) inside:\n%s", want, out)
		}
	}
	// Other users' homes: /home is empty (the test home is not under it).
	if !strings.Contains(out, "homes: \n") {
		t.Fatalf("other homes visible:\n%s", out)
	}
	if !strings.Contains(out, "Permission denied") {
		t.Fatalf("/etc/shadow readable?\n%s", out)
	}
}

// Writes outside the workspace fail or land in private tmpfs; nothing is left
// on the host afterwards; symlinks in the workspace pointing out do not help.
func TestWritesContained(t *testing.T) {
	ws := workspace(t)
	home, _ := os.UserHomeDir()
	os.Symlink("/etc", filepath.Join(ws, "etc-link"))
	os.Symlink(home, filepath.Join(ws, "home-link"))
	name := "jail-e2e-" + marker()
	targets := []string{"/usr/" + name, "/etc/" + name, "/var/" + name, home + "/" + name, "/tmp/" + name, "/var/tmp/" + name, "/dev/shm/" + name}
	script := ""
	for _, p := range targets {
		script += fmt.Sprintf("echo x > %s 2>/dev/null; ", p)
	}
	script += fmt.Sprintf("echo x > etc-link/%s 2>/dev/null && echo ESCAPED-ETC; ", name)
	script += fmt.Sprintf("echo x > home-link/%s 2>/dev/null; ", name+"-2")
	script += "echo inside > ok.txt; touch /etc/passwd 2>/dev/null && echo ESCAPED-TOUCH; exit 0"
	r := sh(t, runOpts{dir: ws}, script)
	mustCode(t, r, 0)
	if strings.Contains(r.stdout, "ESCAPED") {
		t.Fatalf("escaped: %s", r.stdout)
	}
	for _, p := range append(targets, home+"/"+name+"-2") {
		if _, err := os.Lstat(p); err == nil {
			os.Remove(p)
			t.Errorf("%s was created on the host", p)
		}
	}
	if b, err := os.ReadFile(filepath.Join(ws, "ok.txt")); err != nil || string(b) != "inside\n" {
		t.Fatalf("workspace write did not land: %v %q", err, b)
	}
}

func TestReadOnlyAndWriteFlags(t *testing.T) {
	ws := workspace(t)
	extra := workspace(t)
	ro := workspace(t)
	os.WriteFile(filepath.Join(ro, "f"), []byte("readable"), 0o644)
	r := sh(t, runOpts{dir: ws}, fmt.Sprintf(`echo x > a 2>/dev/null && echo WROTE-WS; echo y > %s/b && echo wrote-extra; cat %s/f; echo z > %s/g 2>/dev/null && echo WROTE-RO; exit 0`, extra, ro, ro),
		"--read-only", "-w", extra, "-r", ro)
	mustCode(t, r, 0)
	if strings.Contains(r.stdout, "WROTE") || !strings.Contains(r.stdout, "wrote-extra") || !strings.Contains(r.stdout, "readable") {
		t.Fatalf("unexpected:\n%s\n%s", r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(extra, "b")); err != nil {
		t.Fatalf("--write path write did not land: %v", err)
	}
}

// /proc shows only the sandbox's processes; /proc/*/root leads to the
// sandbox's root, never the host's; host processes cannot be signalled.
func TestProcIsolation(t *testing.T) {
	hostPid := os.Getpid()
	r := sh(t, runOpts{}, fmt.Sprintf(`
ls /proc | grep -c '^[0-9]'
readlink /proc/self/root
ls -A /proc/self/root/root | wc -l
ls /proc/1/root/ >/dev/null 2>&1 && echo INIT-ROOT-READABLE
kill -0 %d 2>/dev/null && echo HOST-PID-VISIBLE
kill -0 1 && echo can-signal-own-init
grep -c . /proc/self/mountinfo
cat /proc/self/mountinfo
`, hostPid))
	mustCode(t, r, 0)
	lines := strings.Split(r.stdout, "\n")
	if n, _ := strconv.Atoi(lines[0]); n > 5 {
		t.Fatalf("too many processes visible: %s", r.stdout)
	}
	if lines[1] != "/" {
		t.Fatalf("/proc/self/root: %q", lines[1])
	}
	if lines[2] != "0" {
		t.Fatalf("/proc/self/root/root not empty: %s", lines[2])
	}
	// init is not dumpable: its root, fds and exe are out of reach.
	if strings.Contains(r.stdout, "INIT-ROOT-READABLE") {
		t.Fatal("/proc/1/root is readable from inside")
	}
	if strings.Contains(r.stdout, "HOST-PID-VISIBLE") {
		t.Fatal("a host process is visible/signalable from inside")
	}
	if strings.Contains(r.stdout, "jail-stage") {
		t.Fatalf("the staging mount is still in the mount table:\n%s", r.stdout)
	}
	// The record of denials (/run/jail) is one read-only mount: the
	// writable mount init opened its file through is detached with the
	// old root before the agent runs, never in the agent's mount table.
	var records []string
	for _, l := range lines {
		if strings.Contains(l, " - tmpfs jail-record ") {
			records = append(records, l)
		}
	}
	if len(records) != 1 || strings.Fields(records[0])[4] != "/run/jail" || !strings.HasPrefix(strings.Fields(records[0])[5], "ro,") {
		t.Fatalf("the record's mounts in the agent's mount table: want one, read-only, at /run/jail:\n%s", strings.Join(records, "\n"))
	}
}

func TestEnvironment(t *testing.T) {
	r := sh(t, runOpts{env: []string{"JAIL_E2E_SECRET=hunter2", "AWS_SECRET_ACCESS_KEY=abc", "PASSME=yes", "LC_ALL=C"}},
		`env; hostname`, "--env", "PASSME", "--setenv", "SET1=v=1")
	mustCode(t, r, 0)
	for _, bad := range []string{"hunter2", "AWS_SECRET_ACCESS_KEY"} {
		if strings.Contains(r.stdout, bad) {
			t.Fatalf("secret %q passed:\n%s", bad, r.stdout)
		}
	}
	for _, want := range []string{"PASSME=yes", "SET1=v=1", "LC_ALL=C", "PATH=", "\njail\n"} {
		if !strings.Contains("\n"+r.stdout, want) {
			t.Fatalf("want %q in:\n%s", want, r.stdout)
		}
	}
}

// Only 0, 1 and 2 reach the command, whatever jail inherited.
func TestNoLeakedFDs(t *testing.T) {
	leak, err := os.CreateTemp("", "jail-e2e-leak")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(leak.Name())
	r := sh(t, runOpts{extra: []*os.File{leak, leak}}, `exec ls -l /proc/self/fd/`)
	mustCode(t, r, 0)
	n := 0
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, " -> ") {
			n++
			f := strings.Fields(l)
			fd := f[len(f)-3]
			if fd != "0" && fd != "1" && fd != "2" && !strings.HasSuffix(l, "/fd") {
				t.Errorf("unexpected fd: %s", l)
			}
		}
	}
	if strings.Contains(r.stdout, "jail-e2e-leak") || n > 4 {
		t.Fatalf("fds leaked:\n%s", r.stdout)
	}
}

// No capability in any set, no_new_privs, and (when started by root) no host
// root identity: the agent cannot read a root-only file.
func TestNoCapabilities(t *testing.T) {
	r := sh(t, runOpts{}, `grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs)' /proc/self/status`)
	mustCode(t, r, 0)
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		f := strings.Fields(l)
		if f[0] == "NoNewPrivs:" {
			if f[1] != "1" {
				t.Fatalf("NoNewPrivs: %s", f[1])
			}
			continue
		}
		if f[1] != "0000000000000000" {
			t.Fatalf("capability set not empty: %s", l)
		}
	}
	if !strings.Contains(r.stdout, "NoNewPrivs") {
		t.Fatalf("no status: %s", r.stdout)
	}
	// Started by root, the agent is host nobody: a root-only file the host's
	// read-only view shows (not under /tmp, which is an empty tmpfs inside,
	// nor under $HOME) must fail with EACCES, while a world-readable file
	// beside it reads (the control: the place is visible).
	if os.Getuid() == 0 {
		dir := hostDir(t)
		secret := filepath.Join(dir, "root-only")
		open := filepath.Join(dir, "world-readable")
		fsWrite(t, dir, "root-only", "topsecret\n", 0o600)
		fsWrite(t, dir, "world-readable", "visible\n", 0o644)
		r := sh(t, runOpts{}, fmt.Sprintf("cat %s 2>&1; echo rc=$?; cat %s", secret, open))
		mustCode(t, r, 0)
		if strings.Contains(r.stdout, "topsecret") {
			t.Fatalf("agent started by root read a root-only file: %s", r.stdout)
		}
		if !strings.Contains(r.stdout, "visible") {
			t.Fatalf("control: a world-readable file beside it is not visible inside, so the root-only file proves nothing:\n%s", r.stdout)
		}
		if !strings.Contains(r.stdout, "Permission denied") || !strings.Contains(r.stdout, "rc=1") {
			t.Fatalf("reading the root-only file did not fail with EACCES:\n%s", r.stdout)
		}
	}
}

func TestMinimalDevAndTmp(t *testing.T) {
	r := sh(t, runOpts{}, `ls -A /dev | tr '\n' ' '; echo; df -k /tmp | tail -1; echo x > /dev/newfile 2>&1; exit 0`, "--tmp-size", "64M")
	mustCode(t, r, 0)
	for _, d := range []string{"null", "zero", "full", "random", "urandom", "pts", "ptmx", "shm"} {
		if !strings.Contains(" "+r.stdout, " "+d+" ") {
			t.Fatalf("/dev lacks %s: %s", d, r.stdout)
		}
	}
	for _, d := range []string{"sda", "vda", "mem", "kmsg", "jail-mask", ".jail"} {
		if strings.Contains(r.stdout, d) {
			t.Fatalf("/dev has %s: %s", d, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, " 65536 ") {
		t.Fatalf("/tmp is not a 64M tmpfs: %s", r.stdout)
	}
}

// Nothing is created on the host: no mounts, no placeholder files. The test
// runs in a mount namespace of its own with an empty /tmp (inPrivateMounts),
// where no other process changes the mount table or /tmp meanwhile.
func TestNothingLeftOnHost(t *testing.T) {
	if !inPrivateMounts(t) {
		return
	}
	before, _ := os.ReadFile("/proc/self/mountinfo")
	ws := workspace(t)
	entries := func(d string) string {
		es, _ := os.ReadDir(d)
		var n []string
		for _, e := range es {
			n = append(n, e.Name())
		}
		return strings.Join(n, ",")
	}
	home, _ := os.UserHomeDir()
	snap := map[string]string{ws: entries(ws), home: entries(home), "/tmp": entries("/tmp")}
	r := sh(t, runOpts{dir: ws}, "true", "-r", "/etc/hostname", "--write", ws)
	mustCode(t, r, 0)
	for d, s := range snap {
		if after := entries(d); after != s {
			t.Errorf("%s changed: %q -> %q", d, s, after)
		}
	}
	after, _ := os.ReadFile("/proc/self/mountinfo")
	if string(before) != string(after) {
		t.Errorf("host mount table changed")
	}
}

func TestDryRun(t *testing.T) {
	r := run(t, runOpts{}, "--dry-run", "--", "/bin/true")
	mustCode(t, r, 0)
	for _, w := range []string{"workspace", "tmpfs", "/tmp", "bind", "mask", "/etc/shadow"} {
		if !strings.Contains(r.stdout, w) {
			t.Fatalf("dry-run lacks %q:\n%s", w, r.stdout)
		}
	}
}

// Under --net none the sandbox has an up loopback and nothing else; TCP on
// it works (test servers), and --no-local-tcp refuses it with Landlock
// (ABI 4). Nothing routes out either way.
func TestLoopbackAndLocalTCP(t *testing.T) {
	probe := `import socket
s=socket.socket()
try:
    s.bind(("127.0.0.1",0)); s.listen(1); p=s.getsockname()[1]
    c=socket.create_connection(("127.0.0.1",p)); a,_=s.accept(); c.send(b"hi"); print("TCP", a.recv(2).decode())
except OSError as e:
    print("REFUSED", e.errno)
try:
    socket.create_connection(("10.255.255.1",9), timeout=1); print("EGRESS")
except OSError as e:
    print("NOROUTE", e.errno)
`
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	r := run(t, runOpts{}, "--no-local-tcp", "--", "python3", "-c", probe)
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "REFUSED 13") || strings.Contains(r.stdout, "EGRESS") {
		t.Fatalf("--no-local-tcp: %q", r.stdout)
	}
	r = run(t, runOpts{}, "--", "python3", "-c", probe)
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "TCP hi") || strings.Contains(r.stdout, "EGRESS") {
		t.Fatalf("--net none: %q", r.stdout)
	}
	// MPTCP (IPPROTO_MPTCP, 262) is TCP that Landlock's TCP rules do not
	// check: it bound, listened and connected under --no-local-tcp
	// (review14a). seccomp refuses the protocol: EPERM at socket(2).
	mptcp := strings.ReplaceAll(probe, "s=socket.socket()\ntry:\n", "try:\n    s=socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)\n")
	mptcp = strings.ReplaceAll(mptcp, `c=socket.create_connection(("127.0.0.1",p))`,
		`c=socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262); c.connect(("127.0.0.1",p))`)
	r = run(t, runOpts{}, "--no-local-tcp", "--", "python3", "-c", mptcp)
	mustCode(t, r, 0)
	if strings.Contains(r.stdout, "TCP hi") || !strings.Contains(r.stdout, "REFUSED") {
		t.Fatalf("--no-local-tcp, MPTCP: %q", r.stdout)
	}
	r = sh(t, runOpts{}, "cat /sys/class/net/lo/operstate; ls /sys/class/net")
	if strings.Contains(r.stdout, "down") || strings.TrimSpace(strings.Split(r.stdout, "\n")[1]) != "lo" {
		t.Fatalf("interfaces: %q", r.stdout)
	}
}

// The sandbox's cgroup namespace is rooted at its own group: nothing of the
// host's cgroup tree (or the jail group's name) shows in /proc/self/cgroup.
func TestCgroupNamespace(t *testing.T) {
	r := sh(t, runOpts{}, `cat /proc/self/cgroup`, "--pids", "64")
	mustCode(t, r, 0)
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 || f[2] != "/" {
			t.Fatalf("cgroup path visible inside: %q\n%s", l, r.stdout)
		}
	}
}

// Securebits are set and locked (README "Identity"): uid 0 inside gains no
// capability on exec (NOROOT), setuid transitions keep none
// (NO_SETUID_FIXUP), ambient raising is refused, all locked so the agent
// cannot clear them. The value is the one ns/caps_linux.go sets; a cleared
// bit or a missing lock changes it, and the unlock attempt must fail.
func TestSecurebitsLocked(t *testing.T) {
	seccompNeed(t, "perl")
	// prctl(PR_GET_SECUREBITS=27) and prctl(PR_SET_SECUREBITS=28, 0).
	probe := `$! = 0; my $b = syscall(157, 27, 0, 0, 0, 0); print "bits=$b\n";
$! = 0; my $r = syscall(157, 28, 0, 0, 0, 0); print "clear=", ($r == -1 ? $! + 0 : "ok"), "\n";
$b = syscall(157, 27, 0, 0, 0, 0); print "after=$b\n";`
	r := run(t, runOpts{}, "--", "perl", "-e", probe)
	mustCode(t, r, 0)
	// NOROOT|NOROOT_LOCKED|NO_SETUID_FIXUP|NO_SETUID_FIXUP_LOCKED|
	// KEEP_CAPS_LOCKED|NO_CAP_AMBIENT_RAISE|NO_CAP_AMBIENT_RAISE_LOCKED.
	const want = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<5 | 1<<6 | 1<<7
	for _, w := range []string{fmt.Sprintf("bits=%d\n", want), "clear=1\n", fmt.Sprintf("after=%d\n", want)} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("want %q (securebits %#x, locked):\n%s%s", strings.TrimSpace(w), want, r.stdout, r.stderr)
		}
	}
	// Control: outside, the same probe reads other bits (0 on a stock host).
	out, err := exec.Command("perl", "-e", probe).Output()
	if err != nil || strings.Contains(string(out), fmt.Sprintf("bits=%d\n", want)) {
		t.Errorf("control: the probe outside jail reads the same bits (%v): %s", err, out)
	}
}

// The sandbox has its own IPC namespace (README: new ... ipc ...
// namespaces): a System V shared memory segment the host makes, world
// accessible, does not exist inside; the namespace itself differs. Control:
// the same lookup outside finds the segment.
func TestIPCNamespace(t *testing.T) {
	seccompNeed(t, "perl")
	key := 0x4a410000 + rand.Intn(0xffff)
	id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o666)
	if err != nil {
		t.Fatalf("shmget on the host: %v", err)
	}
	defer unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	// shmget(2) = 29 on x86-64; perl's shmget builtin would do the same.
	probe := fmt.Sprintf(`$! = 0; my $r = syscall(29, %d, 0, 0666); print "shmget=", ($r == -1 ? "errno" . ($! + 0) : "found"), "\n"; print "ns=", readlink("/proc/self/ns/ipc"), "\n";`, key)
	r := run(t, runOpts{}, "--", "perl", "-e", probe)
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "shmget=errno2\n") { // ENOENT
		t.Errorf("a host SysV segment is reachable inside (want ENOENT):\n%s%s", r.stdout, r.stderr)
	}
	host, _ := os.Readlink("/proc/self/ns/ipc")
	if !strings.Contains(r.stdout, "ns=ipc:[") || strings.Contains(r.stdout, "ns="+host+"\n") {
		t.Errorf("the sandbox's IPC namespace is the host's %s:\n%s", host, r.stdout)
	}
	out, err := exec.Command("perl", "-e", probe).Output()
	if err != nil || !strings.Contains(string(out), "shmget=found\n") {
		t.Errorf("control: the probe outside jail does not find the segment (%v): %s", err, out)
	}
}

// Identity of written files (README "Identity"): files the agent writes in
// the workspace land owned by the invoking user (root, through the idmapped
// workspace, when root started jail). As root, a file in the workspace owned
// by another user is read-only to the agent, while the invoking user's own
// file beside it is writable (the control).
func TestWorkspaceOwnership(t *testing.T) {
	ws := workspace(t)
	fsWrite(t, ws, "mine", "mine\n", 0o644)
	script := `echo new > new.txt; echo x >> mine && echo wrote-mine; mkdir d && echo x > d/f`
	other := 12345
	if os.Getuid() == 0 {
		fsWrite(t, ws, "theirs", "theirs\n", 0o644)
		os.MkdirAll(filepath.Join(ws, "theirdir"), 0o755)
		for _, p := range []string{"theirs", "theirdir"} {
			if err := os.Chown(filepath.Join(ws, p), other, other); err != nil {
				t.Fatal(err)
			}
		}
		script += `; echo x >> theirs 2>/dev/null && echo WROTE-THEIRS; touch theirdir/f 2>/dev/null && echo WROTE-THEIRDIR`
	}
	r := sh(t, runOpts{dir: ws}, script+"; exit 0")
	mustCode(t, r, 0)
	for _, p := range []string{"new.txt", "d", "d/f"} {
		fi, err := os.Lstat(filepath.Join(ws, p))
		if err != nil {
			t.Fatalf("%s: %v\n%s", p, err, r.stderr)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if int(st.Uid) != os.Getuid() || int(st.Gid) != os.Getgid() {
			t.Errorf("%s written inside is owned by %d:%d on the host, want the invoking user %d:%d", p, st.Uid, st.Gid, os.Getuid(), os.Getgid())
		}
	}
	if !strings.Contains(r.stdout, "wrote-mine") {
		t.Errorf("control: the invoking user's own file is not writable inside:\n%s%s", r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "WROTE") {
		t.Errorf("another user's file or directory in the workspace is writable inside:\n%s", r.stdout)
	}
	if got := fsReadFile(t, filepath.Join(ws, "theirs")); os.Getuid() == 0 && got != "theirs\n" {
		t.Errorf("another user's file changed: %q", got)
	}
}
