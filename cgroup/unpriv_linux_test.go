package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestUnprivileged re-runs this test binary as the unprivileged user
// `jailtest` (root only), where Open must fall back to "none" on a host with
// no delegated cgroup v2, and the rlimit fallbacks must hold.
func TestUnprivileged(t *testing.T) {
	u, err := user.Lookup("jailtest")
	requireOrSkip(t, os.Geteuid() == 0 && err == nil, "needs root and a user named jailtest")
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dir, err := os.MkdirTemp("", "cgroup-unpriv")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "cgroup.test")
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(dst, src)
	src.Close()
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Env = []string{childEnv + "=unpriv", "PATH=/usr/bin:/bin", "HOME=" + dir, "CI=" + os.Getenv("CI")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	t.Logf("as jailtest:\n%s", out)
	if i := bytes.Index(out, []byte(unprivSkipped)); err == nil && i >= 0 {
		requireOrSkip(t, false, string(bytes.TrimSpace(out[i+len(unprivSkipped):])))
	}
	if err != nil || !bytes.Contains(out, []byte(unprivPassed)) {
		t.Fatalf("unprivileged child failed: %v", err)
	}
}

// unprivPassed is the child's last line when every check held.
const (
	unprivPassed  = "UNPRIVILEGED CHECKS PASSED"
	unprivSkipped = "UNPRIVILEGED CHECKS SKIPPED: "
)

// childT is the little of testing.T the unprivileged checks need, for the
// re-executed child (TestMain runs unprivChecks directly, so that no test
// function exists only to skip in every ordinary run).
type childT struct {
	failed  bool
	skipped string
}

func (c *childT) Helper()                   {}
func (c *childT) Logf(f string, a ...any)   { fmt.Printf(f+"\n", a...) }
func (c *childT) Errorf(f string, a ...any) { c.failed = true; fmt.Printf("FAIL: "+f+"\n", a...) }
func (c *childT) Fatalf(f string, a ...any) { c.Errorf(f, a...); runtime.Goexit() }
func (c *childT) Fatal(a ...any)            { c.Fatalf("%s", fmt.Sprint(a...)) }
func (c *childT) Skipf(f string, a ...any) {
	c.skipped = fmt.Sprintf(f, a...)
	runtime.Goexit()
}
func (c *childT) Skip(a ...any) { c.Skipf("%s", fmt.Sprint(a...)) }

// tb is what unprivChecks and its helpers use of a test.
type tb interface {
	Helper()
	Logf(string, ...any)
	Errorf(string, ...any)
	Fatalf(string, ...any)
	Fatal(...any)
	Skip(...any)
}

// unprivMain runs the checks as the re-executed unprivileged child and
// returns its exit code.
func unprivMain() int {
	c := &childT{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		unprivChecks(c)
	}()
	<-done
	if c.failed {
		return 1
	}
	if c.skipped != "" {
		fmt.Println(unprivSkipped + c.skipped)
		return 0
	}
	fmt.Println(unprivPassed)
	return 0
}

// unprivChecks: what an unprivileged user gets without a delegated cgroup.
func unprivChecks(t tb) {
	if os.Geteuid() == 0 {
		t.Fatal("child runs as root")
	}
	lim := Limits{MemoryBytes: 64 << 20, Pids: 64, CPUs: 0.5, FileSize: 1 << 20}
	g, rep, err := Open("", lim, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report: %+v", rep)
	if g.Mode() != "none" {
		t.Fatalf("unprivileged Open picked %s on this host, want none", g.Mode())
	}
	if len(rep.Warnings) < 3 || rep.Reason == "" {
		t.Fatalf("no warnings/reason: %+v", rep)
	}
	if _, _, err := Open("", lim, Options{Require: true}); !errors.Is(err, ErrNoCgroup) {
		t.Fatalf("Require: %v", err)
	}
	rl, err := Rlimits(lim, false, os.Getuid())
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]Rlimit{}
	for _, r := range rl {
		got[r.Resource] = r
	}
	want := map[int]uint64{unix.RLIMIT_AS: 64 << 20, unix.RLIMIT_NPROC: 64, unix.RLIMIT_CORE: 0, unix.RLIMIT_FSIZE: 1 << 20}
	if !nprocPerUserNS() {
		delete(want, unix.RLIMIT_NPROC) // base count varies
	}
	for res, v := range want {
		if r, ok := got[res]; !ok || r.Cur != v || r.Max != v {
			t.Errorf("%s = %+v, want %d", RlimitName(res), got[res], v)
		}
	}
	if _, ok := got[unix.RLIMIT_NOFILE]; !ok {
		t.Errorf("no RLIMIT_NOFILE")
	}

	// Attack 1: a memory hog under the RLIMIT_AS fallback must not get 256M.
	hog := exec.Command(os.Args[0], "-test.run=^$")
	hog.Env = append(os.Environ(), childEnv+"=memhog")
	out, err := runLimited(t, hog, rl)
	if err == nil || strings.Contains(out, "allocated") {
		t.Fatalf("memory hog allocated 256M under RLIMIT_AS 64M: %v %q", err, out)
	}

	// Attack 2: a fork bomb in a fresh user+pid namespace (as the runtime
	// starts init) under RLIMIT_NPROC = Pids stays within the budget,
	// although this uid may have other processes on the host.
	if !nprocPerUserNS() {
		t.Skip("kernel < 5.14: NPROC counts host-wide; fork bomb check skipped")
	}
	marker := fmt.Sprintf("jailnproc%d", time.Now().UnixNano())
	// bash, not dash: bash retries a failed fork, so the bomb keeps pushing
	// against the limit instead of exiting at the first EAGAIN.
	bomb := exec.Command("/bin/bash", "-c", `read x; b() { while :; do b & done; }; b 2>/dev/null`, marker)
	bomb.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
	}
	in, _ := bomb.StdinPipe()
	if err := bomb.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bomb.Process.Kill(); _ = bomb.Wait() }() // pid 1 of its namespace: takes all with it
	if err := prlimitAll(bomb.Process.Pid, rl); err != nil {
		t.Fatal(err)
	}
	io.WriteString(in, "go\n")
	in.Close()
	// Watch the bomb until it has pushed against the limit (48 processes:
	// it is running and was stopped near 64), however long a loaded machine
	// takes to get there, then a while longer for any overshoot.
	max, reached := 0, time.Time{}
	deadline := time.Now().Add(30 * time.Second)
	for reached.IsZero() || time.Since(reached) < time.Second {
		if n := markerAlive(marker); n > max {
			max = n
		}
		if max >= 48 && reached.IsZero() {
			reached = time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("fork bomb under RLIMIT_NPROC 64 reached only %d processes in 30s", max)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("fork bomb under RLIMIT_NPROC 64: at most %d processes", max)
	if max > 64 {
		t.Fatalf("fork bomb reached %d processes with RLIMIT_NPROC 64", max)
	}
}

func prlimitAll(pid int, rl []Rlimit) error {
	for _, r := range rl {
		lim := unix.Rlimit{Cur: r.Cur, Max: r.Max}
		if err := unix.Prlimit(pid, r.Resource, &lim, nil); err != nil {
			return fmt.Errorf("prlimit %s: %w", RlimitName(r.Resource), err)
		}
	}
	return nil
}

// runLimited starts cmd blocked on stdin, applies rl to it, lets it go.
func runLimited(t tb, cmd *exec.Cmd, rl []Rlimit) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	in, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := prlimitAll(cmd.Process.Pid, rl); err != nil {
		_ = cmd.Process.Kill()
		t.Fatal(err)
	}
	io.WriteString(in, "go\n")
	in.Close()
	err := cmd.Wait()
	return out.String(), err
}
