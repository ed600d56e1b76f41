package ns

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestMain makes this test binary a stand-in init when Begin re-executes
// it (argv[0] InitArg0): it receives its spec and reports what it saw at
// that moment (fakeInit).
func TestMain(m *testing.M) {
	if IsInit() {
		os.Exit(fakeInit())
	}
	if os.Getenv(closeInheritedEnv) != "" {
		os.Exit(closeInheritedChild())
	}
	if os.Getenv(maskHintEnv) != "" {
		os.Exit(maskHintChild(os.Getenv(maskHintEnv)))
	}
	if len(os.Args) > 0 && os.Args[0] == EntryArg0 {
		// Started for an entry this binary lacks (Config.Entry): what
		// the lean init does then (cmd/jail-init), exit at once.
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// fakeInit receives the spec and answers with whether the file named by
// the spec's Hostname existed when the spec arrived. On a closed socket it
// says so on stderr, as the real init does.
func fakeInit() int {
	conn := NewConn(os.NewFile(initFD, "jail-init"))
	m, _, err := conn.Recv()
	if err != nil || m.Spec == nil {
		fmt.Fprintf(os.Stderr, "jail: init: no spec from the supervisor: %v\n", err)
		return 125
	}
	_, serr := os.Lstat(m.Spec.Hostname)
	_ = conn.Send(Message{Type: MsgLog, Text: fmt.Sprint(serr == nil)})
	// Second: which program this init is (Config.Exe's tests).
	exe, _ := os.Readlink("/proc/self/exe")
	_ = conn.Send(Message{Type: MsgLog, Text: exe})
	return 0
}

// inCI: security tests must fail, not skip, when CI=true.
func inCI() bool { return os.Getenv("CI") == "true" }

func skipOrFail(t *testing.T, format string, a ...any) {
	t.Helper()
	if inCI() {
		t.Fatalf("CI=true, cannot skip: "+format, a...)
	}
	t.Skipf(format, a...)
}

func begin(t *testing.T, cfg Config) *Starting {
	t.Helper()
	cfg.CgroupFD = -1
	if cfg.Stdin == nil {
		cfg.Stdin = os.Stdin
	}
	if cfg.Stdout == nil {
		cfg.Stdout = os.Stdout
	}
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	cfg.Rootful = os.Getuid() == 0
	st, err := Begin(cfg)
	if err != nil {
		skipOrFail(t, "cannot start an init in new namespaces here: %v", err)
	}
	return st
}

// The supervisor clones init before it has planned (init's start overlaps
// the plan), so what must be true of init before it has its spec (a v1
// cgroup joined: BeforeSpec) must be done before the spec is sent, however
// long it takes. The stand-in init checks, the moment its spec arrives,
// for a file BeforeSpec creates only after a delay: sent first, the spec
// would find it missing.
func TestFinishRunsBeforeSpecFirst(t *testing.T) {
	marker := filepath.Join(openDir(t), "joined")
	st := begin(t, Config{BeforeSpec: func(pid int) error {
		if pid <= 0 {
			return fmt.Errorf("no pid: %d", pid)
		}
		time.Sleep(300 * time.Millisecond) // a slow cgroup join
		return os.WriteFile(marker, nil, 0o644)
	}})
	defer st.Abort()
	sb, err := st.Finish(&Spec{Hostname: marker})
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := sb.Conn.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if m.Text != "true" {
		t.Fatalf("init had its spec before BeforeSpec was done (saw the marker: %s)", m.Text)
	}
	if ws, _ := sb.Wait(); ws.ExitStatus() != 0 {
		t.Fatalf("init exited %v", ws)
	}
}

// An init that never gets its spec (the plan failed, the setup was
// interrupted) is killed and reaped, and says nothing on the user's
// terminal: nothing of the sandbox ran.
func TestAbortBeforeSpec(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	st := begin(t, Config{Stderr: w})
	w.Close()
	pid := st.Pid()
	time.Sleep(200 * time.Millisecond) // init is up and waiting
	st.Abort()
	if err := unix.Kill(pid, 0); err != unix.ESRCH {
		t.Errorf("init %d still exists after Abort (kill 0: %v)", pid, err)
	}
	out, _ := io.ReadAll(r)
	if len(out) > 0 {
		t.Errorf("an aborted init wrote to stderr: %q", out)
	}
	if _, err := st.Finish(&Spec{}); err == nil {
		t.Error("Finish after Abort sent a spec")
	}
	st.Abort() // twice: nothing
}

// Start (Begin and Finish at once) still hands over the spec.
func TestStartSendsSpec(t *testing.T) {
	marker := filepath.Join(openDir(t), "x")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sb, err := Start(Config{Spec: &Spec{Hostname: marker}, CgroupFD: -1, Rootful: os.Getuid() == 0,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	if err != nil {
		skipOrFail(t, "cannot start an init in new namespaces here: %v", err)
	}
	m, _, err := sb.Conn.Recv()
	if err != nil || m.Text != "true" {
		t.Fatalf("init's answer: %q, %v", m.Text, err)
	}
	sb.Wait()
}

// openDir is a temp directory init can search: started by root, init runs
// as host nobody.
func openDir(t *testing.T) string {
	d, err := os.MkdirTemp("", "ns-start-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// exeOf starts an init with cfg.Exe = the file at path (opened O_PATH, as
// initbin.Open hands it) and returns the Starting and the program init
// says it is.
func exeOf(t *testing.T, path string) (*Starting, string) {
	t.Helper()
	return exeOfCfg(t, path, Config{})
}

func exeOfCfg(t *testing.T, path string, cfg Config) (*Starting, string) {
	t.Helper()
	fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	exe := os.NewFile(uintptr(fd), path)
	defer exe.Close()
	cfg.Exe, cfg.CgroupFD, cfg.Rootful = exe, -1, os.Getuid() == 0
	cfg.Stdin, cfg.Stdout, cfg.Stderr = os.Stdin, os.Stdout, os.Stderr
	st, err := Begin(cfg)
	if err != nil && strings.Contains(err.Error(), "/proc/self/fd/") {
		t.Fatalf("the exec of Exe failed the start: %v", err)
	}
	if err != nil {
		skipOrFail(t, "cannot start an init in new namespaces here: %v", err)
	}
	defer st.Abort()
	sb, err := st.Finish(&Spec{Hostname: path})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := 0; i < 2; i++ {
		m, _, err := sb.Conn.Recv()
		if err != nil {
			t.Fatalf("init's answer %d: %v", i, err)
		}
		got = append(got, m.Text)
	}
	if ws, _ := sb.Wait(); ws.ExitStatus() != 0 {
		t.Fatalf("init exited %v", ws)
	}
	return st, got[1]
}

// copyOfSelf is a copy of this test binary (a stand-in init program) that
// init can exec: 0755, in a directory init can search, as the lean init's
// copy is for host nobody when root runs jail.
func copyOfSelf(t *testing.T, mode os.FileMode) string {
	t.Helper()
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(openDir(t), "init-copy")
	if err := os.WriteFile(p, self, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// Config.Exe is what init execs (the lean init), by its descriptor: init
// reports that program as its /proc/self/exe, also when root starts it
// and it runs as host nobody.
func TestBeginExecsExe(t *testing.T) {
	p := copyOfSelf(t, 0o755)
	st, exe := exeOf(t, p)
	if exe != p {
		self, _ := os.Readlink("/proc/self/exe")
		t.Fatalf("init is %q, want the given program %q (this binary: %q)", exe, p, self)
	}
	if st.ExeErr != nil {
		t.Fatalf("ExeErr = %v", st.ExeErr)
	}
}

// An Exe that cannot be exec'd (here: no execute permission) does not fail
// the start: init is this binary, and ExeErr says why.
func TestBeginFallsBackFromExe(t *testing.T) {
	p := copyOfSelf(t, 0o644)
	st, exe := exeOf(t, p)
	self, _ := os.Readlink("/proc/self/exe")
	if exe != self {
		t.Fatalf("init is %q, want this binary %q", exe, self)
	}
	if st.ExeErr == nil {
		t.Fatal("ExeErr is nil: the failed exec of Exe is not reported")
	}
}

// An Exe started for its entry (Config.Entry) that exits without a word (a
// build without the entry: its main refuses EntryArg0) does not fail the
// start: init is started the old way, by a fork, from the same Exe, and
// EntryErr says why. Nothing of the first attempt is left.
func TestBeginFallsBackFromEntry(t *testing.T) {
	p := copyOfSelf(t, 0o755)
	st, exe := exeOfCfg(t, p, Config{Entry: true})
	if exe != p {
		t.Fatalf("init is %q, want the given program %q", exe, p)
	}
	if st.Entry || st.EntryErr == nil {
		t.Fatalf("Entry = %v, EntryErr = %v: want the failed entry reported", st.Entry, st.EntryErr)
	}
	if !strings.Contains(st.EntryErr.Error(), "exited before it cloned init") || !strings.Contains(st.EntryErr.Error(), "exit status 2") {
		t.Errorf("EntryErr = %v", st.EntryErr)
	}
	if kids := childrenOf(os.Getpid()); len(kids) != 0 {
		t.Errorf("children left: %v", kids)
	}
}

// Degraded mode never uses the entry (no namespace to make): Begin does
// not even try it.
func TestBeginDegradedSkipsEntry(t *testing.T) {
	p := copyOfSelf(t, 0o755)
	st, exe := exeOfCfg(t, p, Config{Entry: true, Degraded: true})
	if exe != p || st.Entry || st.EntryErr != nil {
		t.Fatalf("degraded: init %q (want %q), Entry %v, EntryErr %v", exe, p, st.Entry, st.EntryErr)
	}
}

// childrenOf lists pid's children (every thread's).
func childrenOf(pid int) []string {
	var out []string
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, tk := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, tk.Name()))
		out = append(out, strings.Fields(string(b))...)
	}
	return out
}
