package cgroup

import (
	"errors"
	"fmt"
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

// fakeTree emulates the cgroup2 kernel interface on a plain directory:
// a new group gets the interface files, its cgroup.controllers is what the
// parent's subtree_control enables, and rmdir fails with EBUSY while the
// group has processes or children.
type fakeTree struct {
	root, self string
	t          *testing.T
}

var fakeFiles = []string{"cgroup.procs", "cgroup.subtree_control", "cgroup.kill", "cgroup.freeze",
	"cgroup.events", "memory.max", "memory.swap.max", "memory.events", "memory.peak",
	"pids.max", "pids.events", "pids.current", "cpu.max", "cpu.stat"}

func newFakeTree(t *testing.T, current string) *fakeTree {
	t.Helper()
	ft := &fakeTree{root: t.TempDir(), t: t}
	ft.file("", "cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc")
	ft.file("", "cgroup.subtree_control", "cpu memory pids")
	ft.file("", "cgroup.procs", "1\n")
	ft.self = filepath.Join(ft.root, "self-cgroup")
	if err := os.WriteFile(ft.self, []byte("0::"+current+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	oldMk, oldRm, oldW, oldE, oldK := mkdirGroup, rmdirGroup, canWrite, geteuid, killTimeout
	t.Cleanup(func() { mkdirGroup, rmdirGroup, canWrite, geteuid, killTimeout = oldMk, oldRm, oldW, oldE, oldK })
	mkdirGroup = ft.mkdir
	rmdirGroup = ft.rmdir
	geteuid = func() int { return 1000 }
	canWrite = func(p string) bool { return !strings.Contains(strings.TrimPrefix(p, ft.root), "/ro") } // "ro*" groups are not delegated
	killTimeout = 300 * time.Millisecond
	// Build the chain of groups down to the current one.
	p := ""
	for _, c := range strings.Split(strings.Trim(current, "/"), "/") {
		if c == "" {
			continue
		}
		p = filepath.Join(p, c)
		if err := ft.mkdir(filepath.Join(ft.root, p)); err != nil {
			t.Fatal(err)
		}
		ft.file(p, "cgroup.subtree_control", "cpu memory pids")
	}
	ft.file(p, "cgroup.subtree_control", "")
	ft.file(p, "cgroup.procs", strconv.Itoa(os.Getpid())+"\n")
	return ft
}

func (ft *fakeTree) opts() Options {
	return Options{Root: ft.root, SelfCgroup: ft.self, DisableV1: true}
}

func (ft *fakeTree) file(rel, name, content string) {
	ft.t.Helper()
	if err := os.WriteFile(filepath.Join(ft.root, rel, name), []byte(content), 0o644); err != nil {
		ft.t.Fatal(err)
	}
}

func (ft *fakeTree) read(abs string) string {
	ft.t.Helper()
	b, err := os.ReadFile(abs)
	if err != nil {
		ft.t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func (ft *fakeTree) mkdir(path string) error {
	if err := os.Mkdir(path, 0o755); err != nil {
		return err
	}
	sub, _ := os.ReadFile(filepath.Join(filepath.Dir(path), "cgroup.subtree_control"))
	ctrls := strings.ReplaceAll(string(sub), "+", "")
	for _, f := range fakeFiles {
		if err := os.WriteFile(filepath.Join(path, f), nil, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(path, "cgroup.controllers"), []byte(ctrls), 0o644)
}

func (ft *fakeTree) rmdir(path string) error {
	ents, err := os.ReadDir(path)
	if err != nil {
		return unix.ENOENT
	}
	for _, e := range ents {
		if e.IsDir() {
			return unix.EBUSY
		}
	}
	if b, _ := os.ReadFile(filepath.Join(path, "cgroup.procs")); len(strings.TrimSpace(string(b))) > 0 {
		return unix.EBUSY
	}
	return os.RemoveAll(path)
}

const scope = "/user.slice/user-1000.slice/user@1000.service/app.slice/term.scope"

func TestV2LeafWhenAloneInDelegatedCgroup(t *testing.T) {
	ft := newFakeTree(t, scope)
	lim := Limits{MemoryBytes: 64 << 20, CPUs: 0.5, Pids: 64}
	g, rep, err := Open("agent", lim, ft.opts())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Mode != "v2" || rep.Strategy != "leaf" || g.Mode() != "v2" {
		t.Fatalf("got %+v", rep)
	}
	cur := filepath.Join(ft.root, scope)
	sup := filepath.Join(cur, fmt.Sprintf("jail-%d-supervisor", os.Getpid()))
	if got := ft.read(filepath.Join(sup, "cgroup.procs")); got != strconv.Itoa(os.Getpid()) {
		t.Errorf("supervisor leaf procs = %q, want our pid", got)
	}
	if got := ft.read(filepath.Join(cur, "cgroup.subtree_control")); got != "+cpu +memory +pids" {
		t.Errorf("subtree_control = %q", got)
	}
	if filepath.Dir(g.Path()) != cur || !strings.HasPrefix(filepath.Base(g.Path()), fmt.Sprintf("jail-%d-", os.Getpid())) || !strings.HasSuffix(g.Path(), "-agent") {
		t.Errorf("group path %s", g.Path())
	}
	for f, want := range map[string]string{"memory.max": "67108864", "memory.swap.max": "0", "pids.max": "64", "cpu.max": "50000 100000"} {
		if got := ft.read(filepath.Join(g.Path(), f)); got != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
	}
	if fd, ok := g.FD(); !ok || fd < 0 {
		t.Errorf("FD() = %d, %v", fd, ok)
	}
	// A second Open from the same (now moved) process reuses the leaf layout.
	ft.file("", "self-cgroup", "0::"+scope+fmt.Sprintf("/jail-%d-supervisor\n", os.Getpid()))
	g2, rep2, err := Open("", Limits{}, ft.opts())
	if err != nil || rep2.Strategy != "leaf" || filepath.Dir(g2.Path()) != cur {
		t.Fatalf("second open: %v %+v", err, rep2)
	}
	for _, gg := range []Group{g, g2} {
		if err := gg.Delete(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(gg.Path()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Delete left %s", gg.Path())
		}
	}
}

func TestV2SiblingWhenCurrentHasOtherProcesses(t *testing.T) {
	ft := newFakeTree(t, scope)
	ft.file(scope, "cgroup.procs", fmt.Sprintf("%d\n4242\n", os.Getpid()))
	g, rep, err := Open("", Limits{Pids: 64}, ft.opts())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Strategy != "sibling" || filepath.Dir(g.Path()) != filepath.Dir(filepath.Join(ft.root, scope)) {
		t.Fatalf("got %+v", rep)
	}
	// We did not move: the supervisor leaf must not exist.
	if _, err := os.Stat(filepath.Join(ft.root, scope, fmt.Sprintf("jail-%d-supervisor", os.Getpid()))); err == nil {
		t.Error("supervisor moved although the sibling strategy was used")
	}
	_ = g.Delete()
}

func TestV2NotDelegatedFallsBackToNone(t *testing.T) {
	ft := newFakeTree(t, "/ro.slice/ro-user.scope")
	lim := Limits{MemoryBytes: 64 << 20, Pids: 64, CPUs: 1}
	g, rep, err := Open("", lim, ft.opts())
	if err != nil {
		t.Fatal(err)
	}
	if g.Mode() != "none" || rep.Mode != "none" {
		t.Fatalf("got %+v", rep)
	}
	if !strings.Contains(rep.Reason, "not delegated") || !strings.Contains(rep.Reason, "not root") {
		t.Errorf("reason does not explain: %q", rep.Reason)
	}
	joined := strings.Join(rep.Warnings, "\n")
	for _, w := range []string{"memory", "cpus", "pids"} {
		if !strings.Contains(joined, w+":") {
			t.Errorf("no warning about %s: %s", w, joined)
		}
	}
	// Nothing was created anywhere.
	ents, _ := os.ReadDir(filepath.Join(ft.root, "ro.slice"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "jail-") {
			t.Errorf("left %s", e.Name())
		}
	}
	opts := ft.opts()
	opts.Require = true
	if _, _, err := Open("", lim, opts); !errors.Is(err, ErrNoCgroup) {
		t.Fatalf("Require: err = %v, want ErrNoCgroup", err)
	} else if !strings.Contains(err.Error(), "Delegate=yes") {
		t.Errorf("error does not say what to do: %v", err)
	}
}

func TestV2RootStrategy(t *testing.T) {
	ft := newFakeTree(t, "/ro.slice/ro-session.scope")
	geteuid = func() int { return 0 }
	g, rep, err := Open("", Limits{MemoryBytes: 32 << 20}, ft.opts())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Strategy != "root" || filepath.Dir(g.Path()) != ft.root {
		t.Fatalf("got %+v", rep)
	}
	_ = g.Delete()
}

func TestV2MissingControllers(t *testing.T) {
	ft := newFakeTree(t, scope)
	// The parent hands only pids down (as on a hybrid host).
	ft.file(filepath.Dir(scope), "cgroup.subtree_control", "pids")
	ft.file(scope, "cgroup.controllers", "pids")
	_, rep, err := Open("", Limits{MemoryBytes: 64 << 20}, ft.opts())
	if err != nil || rep.Mode != "none" || !strings.Contains(rep.Reason, "lacks controllers [memory]") {
		t.Fatalf("memory without the memory controller: %v %+v", err, rep)
	}
	g, rep, err := Open("", Limits{Pids: 10}, ft.opts())
	if err != nil || rep.Mode != "v2" {
		t.Fatalf("pids only: %v %+v", err, rep)
	}
	_ = g.Delete()
}

func TestV2NameCannotEscape(t *testing.T) {
	ft := newFakeTree(t, scope)
	g, _, err := Open("../../../../escape/x", Limits{}, ft.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Delete()
	if filepath.Dir(g.Path()) != filepath.Join(ft.root, scope) || strings.Contains(filepath.Base(g.Path()), "/") {
		t.Fatalf("name escaped: %s", g.Path())
	}
	if _, err := os.Stat(filepath.Join(ft.root, "escape")); err == nil {
		t.Fatal("created a directory outside the parent")
	}
}

func TestV2KillWritesCgroupKill(t *testing.T) {
	ft := newFakeTree(t, scope)
	g, _, err := Open("", Limits{}, ft.opts())
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	if got := ft.read(filepath.Join(g.Path(), "cgroup.kill")); got != "1" {
		t.Errorf("cgroup.kill = %q", got)
	}
	// A group that never empties: Kill must report it, not claim success.
	os.WriteFile(filepath.Join(g.Path(), "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o644)
	if err := g.Kill(); !errors.Is(err, ErrBusy) {
		t.Errorf("Kill on a group that stays populated = %v, want ErrBusy", err)
	}
	if err := g.Delete(); !errors.Is(err, ErrBusy) {
		t.Errorf("Delete of a populated group = %v, want ErrBusy", err)
	}
	os.WriteFile(filepath.Join(g.Path(), "cgroup.procs"), nil, 0o644)
	if err := g.Delete(); err != nil {
		t.Fatal(err)
	}
}

func TestV2KillFallbackFreezesAndSignals(t *testing.T) {
	ft := newFakeTree(t, scope)
	g, _, err := Open("", Limits{}, ft.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { os.WriteFile(filepath.Join(g.Path(), "cgroup.procs"), nil, 0o644); g.Delete() }()
	os.Remove(filepath.Join(g.Path(), "cgroup.kill")) // kernel < 5.14
	victim := exec.Command("sleep", "100")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(g.Path(), "cgroup.procs"), []byte(strconv.Itoa(victim.Process.Pid)), 0o644)
	err = g.Kill() // the fake never empties cgroup.procs
	if !errors.Is(err, ErrBusy) {
		t.Errorf("Kill = %v, want ErrBusy from the fake that never empties", err)
	}
	werr := victim.Wait()
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("victim not SIGKILLed: %v", werr)
	}
	if got := ft.read(filepath.Join(g.Path(), "cgroup.freeze")); got != "0" {
		t.Errorf("left frozen: cgroup.freeze = %q", got)
	}
}

func TestV2EventsAndStats(t *testing.T) {
	ft := newFakeTree(t, scope)
	g, _, err := Open("", Limits{MemoryBytes: 64 << 20}, ft.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Delete()
	os.WriteFile(filepath.Join(g.Path(), "memory.events"), []byte("low 0\nhigh 0\nmax 7\noom 2\noom_kill 1\noom_group_kill 0\n"), 0o644)
	os.WriteFile(filepath.Join(g.Path(), "pids.events"), []byte("max 3\n"), 0o644)
	os.WriteFile(filepath.Join(g.Path(), "cpu.stat"), []byte("usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n"), 0o644)
	os.WriteFile(filepath.Join(g.Path(), "memory.peak"), []byte("12345\n"), 0o644)
	os.WriteFile(filepath.Join(g.Path(), "pids.current"), []byte("4\n"), 0o644)
	os.Remove(filepath.Join(g.Path(), "pids.peak")) // kernel < 6.1
	ev, err := g.Events()
	if err != nil || ev != (Events{OOMKills: 1, MemoryMaxHits: 7, PidsMaxHits: 3}) {
		t.Errorf("Events = %+v, %v", ev, err)
	}
	st, err := g.Stats()
	if err != nil || st != (Stats{CPU: 1500 * time.Millisecond, MemoryPeak: 12345, PidsCurrent: 4}) {
		t.Errorf("Stats = %+v, %v", st, err)
	}
	os.WriteFile(filepath.Join(g.Path(), "memory.peak"), []byte("garbage\n"), 0o644)
	if _, err := g.Stats(); err == nil || !strings.Contains(err.Error(), "memory.peak") {
		t.Errorf("corrupt memory.peak: err = %v, want one naming the file", err)
	}
}

func TestCleanupStaleFake(t *testing.T) {
	ft := newFakeTree(t, scope)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	parent := filepath.Join(ft.root, filepath.Dir(scope))
	stale := filepath.Join(parent, fmt.Sprintf("jail-%d-deadbeef", dead.Process.Pid))
	staleLeaf := filepath.Join(ft.root, scope, fmt.Sprintf("jail-%d-supervisor", dead.Process.Pid))
	live := filepath.Join(parent, fmt.Sprintf("jail-%d-cafe", os.Getpid()))
	other := filepath.Join(parent, "jail-notapid-1")
	for _, d := range []string{stale, staleLeaf, live, other} {
		if err := ft.mkdir(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := ft.mkdir(filepath.Join(stale, "child")); err != nil {
		t.Fatal(err)
	}
	errs := cleanupStale(ft.opts())
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	for d, want := range map[string]bool{stale: false, staleLeaf: false, live: true, other: true} {
		_, err := os.Stat(d)
		if (err == nil) != want {
			t.Errorf("%s exists=%v, want %v", d, err == nil, want)
		}
	}
}

func TestParseKV(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]uint64
	}{
		{"max 3\n", map[string]uint64{"max": 3}},
		{"oom_kill 2\nbogus\nx y\n  low 1 \n", map[string]uint64{"oom_kill": 2, "low": 1}},
		{"", map[string]uint64{}},
		{"max 18446744073709551616\n", map[string]uint64{}},
	} {
		got := parseKV([]byte(tc.in))
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("parseKV(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParseGroupName(t *testing.T) {
	for _, tc := range []struct {
		in  string
		pid int
		ok  bool
	}{
		{"jail-123-abcd", 123, true},
		{"jail-123-supervisor", 123, true},
		{"jail-123", 123, true},
		{"jail-0-x", 0, false},
		{"jail--1-x", 0, false},
		{"jail-0123-x", 0, false},
		{"jail-abc-1", 0, false},
		{"other-1-2", 0, false},
		{"jail-99999999999999999999-x", 0, false},
	} {
		pid, ok := parseGroupName(tc.in)
		if pid != tc.pid || ok != tc.ok {
			t.Errorf("parseGroupName(%q) = %d, %v", tc.in, pid, ok)
		}
	}
}

func FuzzParseKV(f *testing.F) {
	f.Add([]byte("low 0\nhigh 0\nmax 7\noom 2\noom_kill 1\n"))
	f.Add([]byte("max 3"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for k := range parseKV(b) {
			if strings.ContainsAny(k, " \n") {
				t.Fatalf("key %q has separators", k)
			}
		}
		for _, p := range parsePids(b) {
			if p <= 0 {
				t.Fatalf("pid %d", p)
			}
		}
	})
}

func FuzzParseGroupName(f *testing.F) {
	f.Add("jail-123-abcd")
	f.Add("jail--1")
	f.Fuzz(func(t *testing.T, s string) {
		pid, ok := parseGroupName(s)
		if ok && (pid <= 0 || !strings.HasPrefix(s, "jail-"+strconv.Itoa(pid))) {
			t.Fatalf("parseGroupName(%q) = %d", s, pid)
		}
	})
}

func FuzzGroupName(f *testing.F) {
	f.Add("agent")
	f.Add("../../x")
	f.Fuzz(func(t *testing.T, name string) {
		g, err := groupName(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(g, "/\x00") || g == "." || g == ".." || filepath.Base(g) != g {
			t.Fatalf("groupName(%q) = %q", name, g)
		}
		if pid, ok := parseGroupName(g); !ok || pid != os.Getpid() {
			t.Fatalf("groupName(%q) = %q does not encode our pid", name, g)
		}
	})
}
