package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func haveV1(t *testing.T) {
	t.Helper()
	_, err := os.Stat("/sys/fs/cgroup/freezer/cgroup.procs")
	requireOrSkip(t, os.Geteuid() == 0 && err == nil, "needs root and a cgroup v1 freezer (legacy/hybrid host)")
}

func openV1Real(t *testing.T, lim Limits) *v1Group {
	t.Helper()
	g, rep, err := Open("test", lim, Options{DisableV2: true, Require: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Mode != "v1" {
		t.Fatalf("mode %s", rep.Mode)
	}
	v1 := g.(*v1Group)
	t.Cleanup(func() {
		_ = v1.Kill()
		if err := v1.Delete(); err != nil {
			t.Error(err)
		}
		for c, d := range v1.dirs {
			if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Delete left %s directory %s", c, d)
			}
		}
	})
	return v1
}

// startIn starts cmd blocked on stdin, puts it into g (Add, or for v2
// CLONE_INTO_CGROUP via FD), then lets it go.
func startIn(t *testing.T, g Group, cmd *exec.Cmd) {
	t.Helper()
	add := g.Add
	if fd, ok := g.FD(); ok {
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
		add = nil
	}
	startHeld(t, cmd, add)
}

// startHeld starts cmd (which waits for a line on stdin first), moves it
// with add(pid) unless add is nil, then sends the line; the test's end
// kills and reaps it.
func startHeld(t *testing.T, cmd *exec.Cmd, add func(pid int) error) {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if add != nil {
		if err := add(cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := io.WriteString(in, "go\n"); err != nil {
		t.Fatal(err)
	}
	in.Close()
}

// markerAlive counts live processes whose argv contains marker.
// describePids says what each process is: pid, parent, state and command
// line, one a line.
func describePids(pids []int) string {
	var b strings.Builder
	for _, pid := range pids {
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		state, ppid := "?", "?"
		if i := bytes.LastIndexByte(st, ')'); i > 0 {
			if f := strings.Fields(string(st[i+1:])); len(f) > 1 {
				state, ppid = f[0], f[1]
			}
		}
		fmt.Fprintf(&b, "  pid %d ppid %s state %s: %q\n", pid, ppid, state, bytes.ReplaceAll(bytes.TrimRight(cmd, "\x00"), []byte{0}, []byte{' '}))
	}
	return b.String()
}

func markerAlive(marker string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(marker)) {
			continue
		}
		st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(st, ')'); i > 0 && len(st) > i+2 && st[i+2] == 'Z' {
			continue // zombie: already dead, waiting for its reaper
		}
		n++
	}
	return n
}

func TestV1ForkBombContainedAndKilled(t *testing.T) {
	haveV1(t)
	g := openV1Real(t, Limits{Pids: 64})
	marker := fmt.Sprintf("jailbomb%d", time.Now().UnixNano())
	// Every shell forks forever; setsid'd and backgrounded children included.
	bomb := exec.Command("/bin/sh", "-c", `read x; b() { while :; do b & done; }; setsid sh -c 'sleep 1000' & b`, marker)
	startIn(t, g, bomb)
	deadline := time.Now().Add(10 * time.Second)
	var ev Events
	for time.Now().Before(deadline) {
		ev, _ = g.Events()
		if ev.PidsMaxHits > 100 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	st, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if ev.PidsMaxHits == 0 {
		t.Fatalf("fork bomb never hit pids.max: %+v", ev)
	}
	if st.PidsCurrent > 64 {
		t.Fatalf("pids.current %d > 64: not contained", st.PidsCurrent)
	}
	if n := markerAlive(marker); n > 64 {
		t.Fatalf("%d bomb processes alive, limit 64", n)
	}
	start := time.Now()
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	t.Logf("fork bomb: %d pids.max hits, %d processes; Kill emptied it in %v", ev.PidsMaxHits, st.PidsCurrent, time.Since(start))
	if pids, _ := readPids(g.dirs["freezer"]); len(pids) != 0 {
		t.Fatalf("group not empty after Kill: %v", pids)
	}
	_ = bomb.Wait()
	time.Sleep(50 * time.Millisecond)
	if n := markerAlive(marker); n != 0 {
		t.Fatalf("%d bomb processes survived Kill", n)
	}
}

func TestV1MemoryHogOOMKilled(t *testing.T) {
	haveV1(t)
	g := openV1Real(t, Limits{MemoryBytes: 64 << 20})
	hog := exec.Command(os.Args[0], "-test.run=^$")
	hog.Env = append(os.Environ(), childEnv+"=memhog")
	var out bytes.Buffer
	hog.Stdout = &out
	startIn(t, g, hog)
	err := hog.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("memory hog was not OOM-killed: err=%v out=%q", err, out.String())
	}
	ev, err := g.Events()
	if err != nil {
		t.Fatal(err)
	}
	if ev.OOMKills == 0 {
		t.Fatalf("no oom_kill event: %+v", ev)
	}
	st, _ := g.Stats()
	// The kernel may force-charge the allocations of a task it is already
	// killing past the limit (a page or so was seen: 64M + 4096): allow
	// 1M of that, far below what an unlimited hog takes (256M).
	if st.MemoryPeak > 65<<20 || st.MemoryPeak < 32<<20 {
		t.Errorf("peak memory %d outside (32M, 64M + 1M]", st.MemoryPeak)
	}
	t.Logf("events %+v, peak %s", ev, FormatSize(int64(st.MemoryPeak)))
}

func TestV1CPUHalf(t *testing.T) {
	haveV1(t)
	g := openV1Real(t, Limits{CPUs: 0.5})
	spin := exec.Command(os.Args[0], "-test.run=^$")
	spin.Env = append(os.Environ(), childEnv+"=spin", "SPIN_FOR=2s")
	start := time.Now()
	startIn(t, g, spin)
	if err := spin.Wait(); err != nil {
		t.Fatal(err)
	}
	wall := time.Since(start)
	st, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	ratio := st.CPU.Seconds() / wall.Seconds()
	t.Logf("cpu %v over wall %v: %.2f CPUs (limit 0.5, spinner wants %d)", st.CPU, wall, ratio, 2)
	// The claim is the cap: never much above 0.5. Below it only means the
	// 2-CPU host was busy with other work; then the quota had nothing to do.
	if ratio > 0.65 {
		t.Fatalf("used %.2f CPUs under a 0.5 quota", ratio)
	}
	if ratio < 0.05 {
		t.Fatalf("spinner used %.2f CPUs: did not run", ratio)
	}
	cs, err := readKV(filepath.Join(g.dirs["cpu"], "cpu.stat"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cpu.stat %v", cs)
	if ratio > 0.4 && cs["nr_throttled"] == 0 {
		t.Fatalf("quota never throttled the spinner (%v)", cs)
	}
}

func TestCleanupStaleReal(t *testing.T) {
	haveV1(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("jail-%d-staletest", dead.Process.Pid)
	liveName := fmt.Sprintf("jail-%d-livetest", os.Getpid())
	var dirs, liveDirs []string
	for _, c := range []string{"freezer", "memory", "pids"} {
		for _, n := range []string{name, liveName} {
			d := filepath.Join("/sys/fs/cgroup", c, n)
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
			if n == name {
				dirs = append(dirs, d)
			} else {
				liveDirs = append(liveDirs, d)
			}
		}
	}
	defer func() {
		for _, d := range append(dirs, liveDirs...) {
			_ = os.Remove(d)
		}
	}()
	// A process left inside the stale group (e.g. a setsid daemon).
	orphan := exec.Command("sleep", "1000")
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	defer orphan.Process.Kill()
	for _, d := range dirs {
		if err := writeFile(filepath.Join(d, "cgroup.procs"), itoa(orphan.Process.Pid)); err != nil {
			t.Fatal(err)
		}
	}
	for _, err := range CleanupStale() {
		t.Error(err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale %s still there", d)
		}
	}
	for _, d := range liveDirs {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("live group %s removed: %v", d, err)
		}
	}
	err := orphan.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("process in stale group survived cleanup: %v", err)
	}
}

// The v2 code path for real: the hybrid host's cgroup2 hierarchy has no
// controllers, but a group there still gives CLONE_INTO_CGROUP and
// cgroup.kill, so Open with no limit that needs a controller uses it.
func TestV2RealCloneIntoAndKill(t *testing.T) {
	_, have2 := v2Mount(defaultRoot)
	requireOrSkip(t, os.Geteuid() == 0 && have2 && kernelAtLeast(5, 14), "needs root and a cgroup2 hierarchy with cgroup.kill (5.14+)")
	g, rep, err := Open("v2test", Limits{Pids: -1}, Options{DisableV1: true, Require: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Delete(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(g.Path()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Delete left %s", g.Path())
		}
	})
	t.Logf("report %+v", rep)
	marker := fmt.Sprintf("jailv2%d", time.Now().UnixNano())
	// setsid + double fork: the classic ways to leave a process group.
	cmd := exec.Command("/bin/sh", "-c", `read x; setsid sh -c '(sleep 1000 &) ; sleep 1000' & sleep 1000`, marker)
	startIn(t, g, cmd)
	cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", cmd.Process.Pid))
	if !strings.Contains(string(cg), "/"+filepath.Base(g.Path())) {
		t.Fatalf("child not started in the group (CLONE_INTO_CGROUP): %s", cg)
	}
	// 15 s: once in CI (every package's tests at once on two cores) the
	// group held 4 of the 5 after 5 s, and which one was missing was not
	// said; describe says it now.
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if p, _ := readPids(g.Path()); len(p) >= 5 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if p, _ := readPids(g.Path()); len(p) < 5 {
		desc := describePids(p)
		_ = g.Kill() // for the cleanup's Delete
		t.Fatalf("expected 5 processes in the group, got %d:\n%s", len(p), desc)
	}
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	time.Sleep(50 * time.Millisecond)
	if n := markerAlive(marker); n != 0 {
		t.Fatalf("%d processes survived cgroup.kill", n)
	}
	if p, _ := readPids(g.Path()); len(p) != 0 {
		t.Fatalf("group not empty: %v", p)
	}
	if _, err := g.Stats(); err != nil {
		t.Fatal(err)
	}
}

// The v2 controllers for real: memory.max with no swap, pids.max and
// cpu.max, their events, and the kill. It needs a cgroup2 hierarchy whose
// root offers the memory, pids and cpu controllers, i.e. a unified host
// (every current distribution, GitHub's runners), as root. On a hybrid host
// like this project's test machine those controllers are bound to the v1
// hierarchies, which hold other groups: a controller moves to cgroup2 only
// when its v1 hierarchy is unmounted and empty, a machine-wide change
// (cgroup namespaces do not make new hierarchies), so here the test skips
// (CI's allowlist says why) and TestV2Real* covers what works without
// controllers (CLONE_INTO_CGROUP, cgroup.kill); the fake-tree tests
// (fake_linux_test.go) cover the v2 files jail writes and reads.
func TestV2RealLimits(t *testing.T) {
	v2root, have2 := v2Mount(defaultRoot)
	var ctrls []string
	if have2 {
		ctrls, _ = readList(filepath.Join(v2root, "cgroup.controllers"))
	}
	// A plain skip, also in CI: whether the host is unified is the kind of
	// machine, not a fault; .ci/skips.allow names this skip for hybrid hosts.
	if os.Geteuid() != 0 || len(missing(ctrls, []string{"memory", "pids", "cpu"})) > 0 {
		t.Skipf("no cgroup2 controllers: needs root and cgroup2 with memory, pids and cpu (%s offers %v; on a hybrid host they are bound to v1)", v2root, ctrls)
	}
	open := func(t *testing.T, lim Limits) Group {
		g, rep, err := Open("v2limits", lim, Options{DisableV1: true, Require: true})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Mode != "v2" {
			t.Fatalf("mode %s", rep.Mode)
		}
		t.Cleanup(func() {
			_ = g.Kill()
			if err := g.Delete(); err != nil {
				t.Error(err)
			}
		})
		return g
	}
	t.Run("memory", func(t *testing.T) {
		g := open(t, Limits{MemoryBytes: 64 << 20, Pids: -1})
		if v, _ := readTrim(filepath.Join(g.Path(), "memory.swap.max")); v != "0" && !g.(*v2Group).noSwapFile {
			t.Errorf("memory.swap.max = %q, want 0 (no swap beyond the limit)", v)
		}
		hog := exec.Command(os.Args[0], "-test.run=^$")
		hog.Env = append(os.Environ(), childEnv+"=memhog")
		startIn(t, g, hog)
		err := hog.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("memory hog was not OOM-killed: %v", err)
		}
		if ev, err := g.Events(); err != nil || ev.OOMKills == 0 {
			t.Fatalf("no oom_kill event: %+v %v", ev, err)
		}
	})
	t.Run("pids", func(t *testing.T) {
		g := open(t, Limits{Pids: 64})
		marker := fmt.Sprintf("jailv2bomb%d", time.Now().UnixNano())
		bomb := exec.Command("/bin/sh", "-c", `read x; b() { while :; do b & done; }; b`, marker)
		startIn(t, g, bomb)
		deadline := time.Now().Add(10 * time.Second)
		var ev Events
		for ev.PidsMaxHits < 100 && time.Now().Before(deadline) {
			ev, _ = g.Events()
			time.Sleep(20 * time.Millisecond)
		}
		if ev.PidsMaxHits == 0 {
			t.Fatalf("fork bomb never hit pids.max: %+v", ev)
		}
		if n := markerAlive(marker); n > 64 {
			t.Fatalf("%d bomb processes alive, limit 64", n)
		}
		if err := g.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = bomb.Wait()
		if p, _ := readPids(g.Path()); len(p) != 0 {
			t.Fatalf("group not empty after Kill: %v", p)
		}
	})
	t.Run("cpu", func(t *testing.T) {
		g := open(t, Limits{CPUs: 0.5, Pids: -1})
		if v, _ := readTrim(filepath.Join(g.Path(), "cpu.max")); v != "50000 100000" {
			t.Fatalf("cpu.max = %q, want 50000 100000", v)
		}
		spin := exec.Command(os.Args[0], "-test.run=^$")
		spin.Env = append(os.Environ(), childEnv+"=spin", "SPIN_FOR=2s")
		start := time.Now()
		startIn(t, g, spin)
		if err := spin.Wait(); err != nil {
			t.Fatal(err)
		}
		st, err := g.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if ratio := st.CPU.Seconds() / time.Since(start).Seconds(); ratio > 0.65 || ratio < 0.05 {
			t.Fatalf("spinner used %.2f CPUs under a 0.5 quota", ratio)
		}
	})
}
