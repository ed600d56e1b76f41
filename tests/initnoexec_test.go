//go:build linux

// End-to-end tests of init started without its second execve (session 9):
// started by root with CAP_SYS_PTRACE, the lean init's entry clones init
// and init goes on into the Go runtime as that clone, instead of exec'ing
// the lean init again. Init must be what the exec made it, or stricter:
// the same credentials, capabilities, fds, signal dispositions and
// program, no more reachable from the sandbox, and still reachable by
// the supervisor.
package tests

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// initProbe is run by the agent before it reports "up": every way of
// reaching init (pid 1) from inside that a dumpable init, or one whose
// memory belonged to the sandbox's user namespace, would allow the agent
// (uid 0 inside when root started jail). Each line it prints is a door
// open.
const initProbe = `for f in environ maps mem cmdline; do cat /proc/1/$f >/dev/null 2>&1 && [ $f != cmdline ] && echo "open $f"; done
ls /proc/1/fd >/dev/null 2>&1 && echo "open fd"
readlink /proc/1/fd/0 >/dev/null 2>&1 && echo "open fd/0"
readlink /proc/1/exe >/dev/null 2>&1 && echo "open exe"
readlink /proc/1/root >/dev/null 2>&1 && echo "open root"
readlink /proc/1/cwd >/dev/null 2>&1 && echo "open cwd"
ls /proc/1/map_files >/dev/null 2>&1 && echo "open map_files"
echo up; exec sleep 30`

// initState is init's state as its supervisor's user sees it from the
// host, and the doors the agent found open.
type initState struct {
	status map[string]string // credential, capability and signal fields
	fds    []string          // "N kind" for init's fds 0-3, "kind" for the others
	exe    string
	arg0   string
	owner  uint32 // /proc/INIT/fd's owner
	open   []string
	// threads: for each of init's threads, its capability sets and
	// no_new_privs ("TID CapBnd: ...").
	threads []string
}

var fdKind = regexp.MustCompile(`:\[\d+\]$`)

func startedInit(t *testing.T, home string, flags ...string) initState {
	t.Helper()
	args := append(append([]string{"--quiet"}, flags...), "--", "/bin/sh", "-c", initProbe)
	cmd := exec.Command(jail(t), args...)
	cmd.Dir = workspace(t)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan []string, 1)
	go func() {
		out := []string{}
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "up" {
				lines <- out
				return
			}
			out = append(out, sc.Text())
		}
		lines <- nil
	}()
	var st initState
	select {
	case st.open = <-lines:
		if st.open == nil {
			_ = cmd.Wait()
			t.Fatalf("jail %v: the agent did not start:\n%s", flags, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("jail %v: the agent did not start within 20 s", flags)
	}
	kids := children(cmd.Process.Pid)
	if len(kids) != 1 {
		t.Fatalf("jail %v: the supervisor's children %v, want init alone", flags, kids)
	}
	init := kids[0]
	st.status = map[string]string{}
	for _, f := range []string{"Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp", "SigIgn", "SigCgt"} {
		st.status[f] = statusField(init, f)
	}
	dir := fmt.Sprintf("/proc/%d/", init)
	// Capabilities and no_new_privs are per thread: each of init's (world
	// readable, whoever started jail).
	tasks, err := os.ReadDir(dir + "task")
	if err != nil {
		t.Fatalf("jail %v: init's threads: %v", flags, err)
	}
	for _, tk := range tasks {
		b, err := os.ReadFile(dir + "task/" + tk.Name() + "/status")
		if err != nil {
			t.Fatalf("jail %v: init's thread %s: %v", flags, tk.Name(), err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "Cap") || strings.HasPrefix(l, "NoNewPrivs:") {
				st.threads = append(st.threads, tk.Name()+" "+strings.Join(strings.Fields(l), " "))
			}
		}
	}
	// Root reads init's fds and program; a user reads neither (init is
	// not dumpable and its fd directory belongs to a root the user's
	// namespace does not map), on either path.
	ents, err := os.ReadDir(dir + "fd")
	if err != nil {
		st.fds = []string{"unreadable"}
	}
	for _, e := range ents {
		l, err := os.Readlink(dir + "fd/" + e.Name())
		if err != nil {
			t.Fatalf("jail %v: init's fd %s: %v", flags, e.Name(), err)
		}
		// 0-3 by number (the terminal or pipes, init's socket); the
		// others (the runtime's poller) by kind: their numbers are the
		// lowest free when init first polls, which depends on how far
		// its setup had come.
		kind := fdKind.ReplaceAllString(l, "")
		if n, _ := strconv.Atoi(e.Name()); n <= 3 {
			kind = e.Name() + " " + kind
		}
		st.fds = append(st.fds, kind)
	}
	sort.Strings(st.fds)
	if st.exe, err = os.Readlink(dir + "exe"); err != nil {
		st.exe = "unreadable"
	}
	if os.Getuid() == 0 && (ents == nil || st.exe == "unreadable") {
		t.Fatalf("jail %v: root cannot read init's fds or exe: %v", flags, st.fds)
	}
	// The supervisor's reads of init's /proc entries (the memory watch's
	// root, idmapBinds' user namespace) work as its user.
	for _, f := range []string{"root", "ns/user", "ns/net"} {
		if _, err := os.Readlink(dir + f); err != nil {
			t.Errorf("jail %v: init's %s unreadable by the user who started it: %v", flags, f, err)
		}
	}
	b, err := os.ReadFile(dir + "cmdline")
	if err != nil {
		t.Fatalf("jail %v: init's cmdline: %v", flags, err)
	}
	st.arg0, _, _ = strings.Cut(string(b), "\x00")
	// The fd directory's owner (mode 0500) is the one ptrace's rules
	// give: init's euid if it is dumpable, else the root of the user
	// namespace its memory belongs to (host root if none maps it).
	var fi syscall.Stat_t
	if err := syscall.Stat(dir+"fd", &fi); err != nil {
		t.Fatal(err)
	}
	st.owner = fi.Uid
	return st
}

// Init started by the entry (without its execve when root starts jail)
// is init as the old fork's exec made it, or stricter: the same uid, gid,
// groups, capabilities, no_new_privs, seccomp mode, ignored and caught
// signals, the same fds (no close-on-exec one kept) and program, argv[0]
// InitArg0, readable by the user who started jail; the agent reaches none
// of its /proc entries, nothing the exec'd init let it reach. Started by
// root, init's /proc belongs to the host's root (its memory stays in the
// supervisor's user namespace and it is not dumpable), where the exec'd
// init's belonged to the sandbox's root (host nobody), whose uid the
// agent has: the agent could then list init's fds.
func TestInitNoExecSameOrStricter(t *testing.T) {
	home := entryHome(t)
	entry := startedInit(t, home)
	fork := startedInit(t, home, "--x-fork-init")
	for f, v := range fork.status {
		if f == "CapBnd" && os.Getuid() == 0 && entry.status[f] == "0000000000000000" {
			// Stricter: without its execve, init's bounding set is
			// emptied by the entry for every thread, where the forked
			// init empties only the agent's thread's
			// (TestInitEveryThreadWalled).
			continue
		}
		if entry.status[f] != v {
			t.Errorf("init's %s: %q started by the entry, %q forked", f, entry.status[f], v)
		}
	}
	if strings.Join(entry.fds, ", ") != strings.Join(fork.fds, ", ") {
		t.Errorf("init's fds: %v started by the entry, %v forked", entry.fds, fork.fds)
	}
	if entry.exe != fork.exe {
		t.Errorf("init's program: %s started by the entry, %s forked", entry.exe, fork.exe)
	}
	if entry.arg0 != "jail:init" || fork.arg0 != "jail:init" {
		t.Errorf("init's argv[0]: %q started by the entry, %q forked, want jail:init", entry.arg0, fork.arg0)
	}
	forkOpen := map[string]bool{}
	for _, o := range fork.open {
		forkOpen[o] = true
	}
	for _, o := range entry.open {
		if !forkOpen[o] {
			t.Errorf("the agent reaches init's /proc entry (%s) started by the entry, not forked", o)
		}
	}
	if os.Getuid() == 0 {
		// Root: no door at all, and init's /proc is the host root's.
		if len(entry.open) != 0 {
			t.Errorf("the agent reaches init's /proc entries: %v", entry.open)
		}
		if entry.owner != 0 {
			t.Errorf("init's /proc belongs to uid %d, want 0 (not dumpable, its memory in the supervisor's user namespace: no execve)", entry.owner)
		}
	} else if entry.owner != fork.owner {
		// A user's start keeps the execve: nothing differs.
		t.Errorf("init's /proc belongs to uid %d started by the entry, %d forked", entry.owner, fork.owner)
	}
	t.Logf("entry: owner %d, open %v, fds %v; fork: owner %d, open %v", entry.owner, entry.open, entry.fds, fork.owner, fork.open)
}

// Root without CAP_SYS_PTRACE (a container's default capability set)
// keeps init's execve: an init whose memory stayed in the supervisor's
// user namespace would be out of its reach (its /proc/INIT/ns/user, read
// to idmap the binds, refused: the run would fail). The start works, and
// init's /proc belongs to the sandbox's root, as the exec makes it.
func TestInitNoExecNeedsPtrace(t *testing.T) {
	waitsOnDeadline(t)
	if os.Getuid() != 0 {
		t.Skip("a rootful start only: a user's start always keeps the execve (TestInitNoExecSameOrStricter)")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		skipOrFailLean(t, "no setpriv (util-linux) to drop CAP_SYS_PTRACE: %v", err)
	}
	home := entryHome(t)
	args := []string{"--bounding-set=-sys_ptrace", jail(t), "--quiet", "--", "/bin/sh", "-c",
		`grep -c . /proc/1/cmdline >/dev/null; ls /proc/1/fd >/dev/null 2>&1 && echo listed; /bin/true && echo ran`}
	r := runWith(t, runOpts{env: []string{"HOME=" + home, "XDG_STATE_HOME="}}, setpriv, args...)
	mustCode(t, r, 0)
	// The agent (the sandbox's root) lists the fds of an exec'd init, whose
	// /proc belongs to the sandbox's root: the execve was kept.
	if r.stdout != "listed\nran\n" {
		t.Errorf("jail without CAP_SYS_PTRACE: the agent printed %q, want \"listed\\nran\\n\" (init exec'd again, the command run)", r.stdout)
	}
	// Until its execve init is the entry's clone: host nobody, not
	// dumpable, its memory in the host's user namespace, so its
	// /proc/INIT/ns/user (the binds' id map) is refused to a root without
	// CAP_SYS_PTRACE. The supervisor waits for that execve: a start whose
	// init is slow to get there (throttled at once by the smallest CPU
	// quota: the entry's namespaces use it up) must not fail. Seen failing
	// on main in 2 of 10 such starts ("open /proc/PID/ns/user: permission
	// denied", init's stat flags still PF_FORKNOEXEC), and in 1-2 of 15
	// runs of the start above under load.
	for i := range 12 {
		r := runWith(t, runOpts{env: []string{"HOME=" + home, "XDG_STATE_HOME="}}, setpriv,
			"--bounding-set=-sys_ptrace", jail(t), "--quiet", "--cpus", "0.01", "--", "/bin/true")
		if r.code != 0 {
			t.Fatalf("start %d with --cpus 0.01, without CAP_SYS_PTRACE: exit %d:\n%s", i, r.code, r.stderr)
		}
	}
}

// Every thread of init has lost every capability (effective, permitted,
// inheritable, ambient) and has no_new_privs once the agent runs, on both
// paths: started by the entry and forked. Started by root without init's
// execve, the entry emptied the bounding set and set the securebits and
// no_new_privs before the Go runtime made a thread, and init's own drop
// only empties the capability sets: then every thread's bounding set is
// empty too. Otherwise init empties the bounding set of the thread that
// forks the agent (and jail exec's commands), which must be one of them.
// A thread that kept something (a drop applied to the calling thread
// alone, or the entry's presets taken for granted where the entry did not
// raise them) would fail here.
func TestInitEveryThreadWalled(t *testing.T) {
	home := entryHome(t)
	for _, flags := range [][]string{nil, {"--x-fork-init"}} {
		st := startedInit(t, home, flags...)
		// The entry without the execve: root's default start.
		presets := flags == nil && os.Getuid() == 0 && wantEntry() == startEntry
		tids := map[string]bool{}
		emptyBounds := 0
		for _, l := range st.threads {
			tid, field, _ := strings.Cut(l, " ")
			tids[tid] = true
			name, _, _ := strings.Cut(field, " ")
			want := name + " 0000000000000000"
			if name == "NoNewPrivs:" {
				want = "NoNewPrivs: 1"
			}
			if name == "CapBnd:" {
				if field == want {
					emptyBounds++
				}
				if !presets {
					continue
				}
			}
			if field != want {
				t.Errorf("jail %v: init's thread %s: %q, want %q", flags, tid, field, want)
			}
		}
		if emptyBounds == 0 {
			t.Errorf("jail %v: no thread of init has an empty bounding set: %v", flags, st.threads)
		}
		// Go's runtime gives init several threads (sysmon, the locked
		// agent thread, the signal thread...): one alone would not test
		// that the drop reaches them all.
		if len(tids) < 3 {
			t.Errorf("jail %v: init has %d threads (%v), want several", flags, len(tids), st.threads)
		}
		t.Logf("jail %v: init's %d threads checked, %d with an empty bounding set", flags, len(tids), emptyBounds)
		// The securebits, per thread too, set and locked as the agent
		// (forked by init) reads them: TestSecurebitsLocked's HOME has
		// no lean init's copy, where init is jail's own binary.
		seccompNeed(t, "perl")
		args := append(append([]string{"--quiet"}, flags...), "--", "perl", "-e", `print "bits=", syscall(157, 27, 0, 0, 0, 0), "\n";`)
		r := runWith(t, runOpts{env: []string{"HOME=" + home, "XDG_STATE_HOME="}}, jail(t), args...)
		mustCode(t, r, 0)
		if want := fmt.Sprintf("bits=%d\n", 1<<0|1<<1|1<<2|1<<3|1<<5|1<<6|1<<7); r.stdout != want {
			t.Errorf("jail %v: the agent's securebits: %q, want %q", flags, r.stdout, want)
		}
	}
}
