//go:build linux

package tests

import (
	"encoding/binary"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// entryConnOpts starts the lean init's copy at p as the entry (argv[0]
// jail:init-entry, ns.EntryArg0), its socket on fd 3 and the copy on fd 4
// as the supervisor gives them, sends it the start message {flags, opts}
// and returns the supervisor's end of the socket and the entry.
func entryConnOpts(t *testing.T, p string, flags, opts uint64) (int, *exec.Cmd) {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skip("the lean init's entry is amd64 only")
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	child := os.NewFile(uintptr(fds[1]), "entry-socket")
	defer child.Close()
	t.Cleanup(func() { unix.Close(fds[0]) })
	exe, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	cmd := &exec.Cmd{Path: p, Args: []string{"jail:init-entry"}, Env: []string{"GOMAXPROCS=1"}, ExtraFiles: []*os.File{child, exe}}
	entrySendT(t, fds[0], flags, opts)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return fds[0], cmd
}

func entrySendT(t *testing.T, fd int, kind, val uint64) {
	t.Helper()
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], kind)
	binary.LittleEndian.PutUint64(b[8:], val)
	if _, err := unix.Write(fd, b[:]); err != nil {
		t.Fatalf("write to the entry: %v", err)
	}
}

// entryRecvT reads the entry's next message, or reports none within d.
func entryRecvT(t *testing.T, fd int, d time.Duration) (kind, val uint64, ok bool) {
	t.Helper()
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for deadline := time.Now().Add(d); ; {
		// EINTR (Go's preemption signals) is no answer: poll again
		// for what is left of d.
		n, err := unix.Poll(pfd, int(time.Until(deadline).Milliseconds()))
		if err == unix.EINTR && time.Now().Before(deadline) {
			continue
		}
		if err != nil || n == 0 {
			return 0, 0, false
		}
		break
	}
	var b [16]byte
	n, err := unix.Read(fd, b[:])
	if err != nil || n != 16 {
		t.Fatalf("read from the entry: %d bytes, %v", n, err)
	}
	return binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:]), true
}

// The entry maps every namespace it makes: a start message without
// exactly one of its map options (8, ns.entrySelfMap, a user's; 16 with
// 1, ns.entryParentMap, root's) is refused before anything is made, and
// no init is cloned. The supervisor's old way (the entry said 'U', the
// supervisor wrote the maps and answered 'M') is gone: an entry that
// still waited for maps nobody writes would hang the start, and its
// unmapped namespaces are nothing a start uses. Rootful without its map
// option, or with the user's, is refused as before (step 6, EPERM: a
// self-map of 0 would be host root's). Seen failing on main's entry,
// which still said 'U' for options 0, 1 and 2 ("'U' 0x0 (true), want
// 'E'").
func TestInitEntryRefusesStartWithoutMapOption(t *testing.T) {
	p := leanCopy(t, leanHome(t))
	for _, c := range []struct {
		opts  uint64
		step  uint64
		errno unix.Errno
	}{
		{0, 9, unix.EINVAL},
		{1, 9, unix.EINVAL},     // rootful, no map option
		{2, 9, unix.EINVAL},     // ambient capabilities alone
		{1 | 4, 9, unix.EINVAL}, // rootful, no execve, no map option
		{1 | 8, 6, unix.EPERM},  // rootful with the user's self-map
	} {
		t.Run(strconv.FormatUint(c.opts, 10), func(t *testing.T) {
			fd, cmd := entryConnOpts(t, p, unix.CLONE_NEWUSER|unix.CLONE_NEWNET, c.opts)
			kind, val, ok := entryRecvT(t, fd, 10*time.Second)
			if !ok || kind != 'E' || val>>32 != c.step || unix.Errno(val&0xffffffff) != c.errno {
				t.Fatalf("the entry's first message: %q %#x (%v), want 'E', step %d, %v", rune(kind), val, ok, c.step, c.errno)
			}
			if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "exit status 1") {
				t.Errorf("the entry after a refused start: %v, want exit status 1", err)
			}
			if kids := children(os.Getpid()); len(kids) != 0 {
				t.Errorf("children left: %v", kids)
			}
		})
	}
}

// A user's start (the start message's option 8, ns.entrySelfMap): the
// entry maps the user to itself on its own and asks the supervisor
// nothing: its first message is the outcome, here the refused flag of the
// other namespaces (step 4), made right after the maps. Started by root
// the option is refused before anything (step 6, EPERM): a map of 0 to 0
// would be host root's. Seen failing on a build whose entry ignored the
// option ("'U' ..., want 'E'") and on one that let root map itself ("step
// 4, want step 6").
func TestInitEntrySelfMap(t *testing.T) {
	p := leanCopy(t, leanHome(t))
	fd, cmd := entryConnOpts(t, p, unix.CLONE_NEWUSER|unix.CLONE_NEWNET|unix.CLONE_PARENT, 2|8)
	kind, val, ok := entryRecvT(t, fd, 10*time.Second)
	if !ok || kind != 'E' {
		t.Fatalf("the entry's first message: %q %#x (%v), want 'E'", rune(kind), val, ok)
	}
	step, errno := val>>32, unix.Errno(val&0xffffffff)
	if os.Getuid() == 0 {
		if step != 6 || errno != unix.EPERM {
			t.Errorf("root's self-map: step %d, %v, want step 6, EPERM", step, errno)
		}
	} else if step != 4 || errno != unix.EINVAL {
		t.Errorf("a user's self-map: step %d, %v, want step 4 (the refused flag), EINVAL", step, errno)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "exit status 1") {
		t.Errorf("the entry after a failed step: %v, want exit status 1", err)
	}
	if kids := children(os.Getpid()); len(kids) != 0 {
		t.Errorf("children left: %v", kids)
	}
}

// parentMapOpts is a rootful start by the entry's parent maps (the start
// message's options 1|16, ns.entryParentMap) mapping 0 to id.
func parentMapOpts(id uint32) uint64 { return 1 | 16 | uint64(id)<<32 }

// entryCloned reads the entry's first message, which for a start by its
// parent maps is 'C' and init's pid, and returns the pid.
func entryCloned(t *testing.T, fd int) int {
	t.Helper()
	kind, val, ok := entryRecvT(t, fd, 10*time.Second)
	if !ok || kind != 'C' || val == 0 {
		t.Fatalf("the entry's first message: %q %#x (%v), want 'C' and init's pid", rune(kind), val, ok)
	}
	return int(val)
}

// waitKilled reaps pid, this process's child, and wants it killed by
// SIGKILL.
func waitKilled(t *testing.T, pid int) {
	t.Helper()
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
		t.Fatalf("init %d is not this process's child: %v", pid, err)
	}
	if !ws.Signaled() || ws.Signal() != unix.SIGKILL {
		t.Errorf("init %d: wait status %#x (exit status %d), want killed by SIGKILL", pid, uint32(ws), ws.ExitStatus())
	}
}

// entryReleaseKillEnv ("NR:PATH") names the lean init's copy that
// TestMain execs as the entry (argv[0] jail:init-entry, its fds 3 and 4
// kept) under a seccomp filter that kills it at its first system call NR
// (entryReleaseKillShim).
const entryReleaseKillEnv = "JAIL_TEST_ENTRY_RELEASE_KILL"

func entryReleaseKillShim() {
	runtime.LockOSThread() // the filter is this thread's; exec from it
	nr, p, _ := strings.Cut(os.Getenv(entryReleaseKillEnv), ":")
	sys, err := strconv.Atoi(nr)
	if err != nil {
		os.Exit(97)
	}
	const (
		ldAbsW     = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq        = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret        = unix.BPF_RET | unix.BPF_K
		archX86_64 = 0xc000003e
	)
	filter := []unix.SockFilter{
		{Code: ldAbsW, K: 4}, // seccomp_data.arch
		{Code: jeq, Jt: 0, Jf: 3, K: archX86_64},
		{Code: ldAbsW, K: 0}, // .nr
		{Code: jeq, Jt: 0, Jf: 1, K: uint32(sys)},
		{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		os.Exit(97)
	}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); e != 0 {
		os.Exit(97)
	}
	_ = unix.Exec(p, []string{"jail:init-entry"}, []string{"GOMAXPROCS=1"})
	os.Exit(97)
}

// A rootful start whose entry maps init from outside (ns.entryParentMap)
// says init's pid ('C') as soon as init is cloned, before its maps: the
// supervisor, init's parent, can then reap it whatever happens to the
// entry. An entry gone before it released init (here killed by seccomp
// at the release's sendto, after the maps; a user's, whose map of 0 is
// refused, at the open of the first map) leaves an init that exits by
// itself (125) at EOF, having run nothing but its wait. Seen failing on
// the entry before option 16, which ignored it ("'U' 0x0, want 'C'"),
// and on a build whose init did not wait for the release (it ran on:
// "init ... still runs").
func TestInitEntryParentMapEntryGoneBeforeRelease(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the lean init's entry is amd64 only")
	}
	p := leanCopy(t, leanHome(t))
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	fd := fds[0]
	defer unix.Close(fd)
	child := os.NewFile(uintptr(fds[1]), "entry-socket")
	exe, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	kill := unix.SYS_SENDTO
	if os.Getuid() != 0 {
		kill = unix.SYS_OPEN
	}
	cmd := &exec.Cmd{Path: self, Args: []string{self}, Env: []string{entryReleaseKillEnv + "=" + strconv.Itoa(kill) + ":" + p}, ExtraFiles: []*os.File{child, exe}}
	entrySendT(t, fd, unix.CLONE_NEWUSER|unix.CLONE_NEWPID, parentMapOpts(65534))
	err = cmd.Start()
	child.Close()
	exe.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := entryCloned(t, fd)
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "bad system call") {
		t.Fatalf("the entry: %v, want killed at its release (bad system call)", err)
	}
	var b [16]byte
	if n, _, err := unix.Recvfrom(fd, b[:], unix.MSG_DONTWAIT); n > 0 {
		t.Errorf("a message after 'C' from an entry killed before its release: % x (%v)", b[:n], err)
	}
	done := make(chan unix.WaitStatus, 1)
	go func() {
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, 0, nil)
		done <- ws
	}()
	select {
	case ws := <-done:
		if !ws.Exited() || ws.ExitStatus() != 125 {
			t.Errorf("init %d never released: wait status %#x, want exit status 125 (its EOF)", pid, uint32(ws))
		}
	case <-time.After(10 * time.Second):
		_ = unix.Kill(pid, unix.SIGKILL)
		<-done
		t.Fatalf("init %d still runs, never released", pid)
	}
	if kids := children(os.Getpid()); len(kids) != 0 {
		t.Errorf("children left: %v", kids)
	}
}

// A failure after init's clone (here the map itself: 0 to 4294967295
// is no map, EINVAL) kills init, which never ran as anything but its wait
// for the release, before the report; its parent (through CLONE_PARENT,
// here this test; ns.reapCloned) reaps it. Seen failing on the entry
// before option 16 ("'U', want 'C'") and on a build whose FAILINIT did
// not kill ("exit status 125, want killed by SIGKILL").
func TestInitEntryParentMapFailureKillsInit(t *testing.T) {
	p := leanCopy(t, leanHome(t))
	fd, cmd := entryConnOpts(t, p, unix.CLONE_NEWUSER|unix.CLONE_NEWPID, parentMapOpts(0xffffffff))
	pid := entryCloned(t, fd)
	kind, val, ok := entryRecvT(t, fd, 10*time.Second)
	if !ok || kind != 'E' || val>>32 != 7 || unix.Errno(val&0xffffffff) != unix.EINVAL {
		t.Errorf("the entry's message: %q %#x (%v), want 'E', step 7 (init's maps), EINVAL", rune(kind), val, ok)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "exit status 1") {
		t.Errorf("the entry after a failed step: %v, want exit status 1", err)
	}
	waitKilled(t, pid)
	if kids := children(os.Getpid()); len(kids) != 0 {
		t.Errorf("children left: %v", kids)
	}
}

// Root's entry maps init from outside exactly as Go's fork does on the
// fork path (ns.idMaps: uid_map and gid_map "0 65534 1", setgroups
// "deny") and
// releases it, which becomes the namespace's root, host nobody, on its
// own; a user may map no other id (EPERM), and its init, cloned, is
// killed. (The agent's view of the maps against the fork path's:
// TestInitEntryStartsInit.) Seen failing on the entry before option 16
// ("'U', want 'C'").
func TestInitEntryParentMapStartsInit(t *testing.T) {
	p := leanCopy(t, leanHome(t))
	fd, cmd := entryConnOpts(t, p, unix.CLONE_NEWUSER|unix.CLONE_NEWNS|unix.CLONE_NEWPID|unix.CLONE_NEWIPC|unix.CLONE_NEWUTS|unix.CLONE_NEWCGROUP|unix.CLONE_NEWNET, parentMapOpts(65534))
	pid := entryCloned(t, fd)
	kind, val, ok := entryRecvT(t, fd, 10*time.Second)
	if os.Getuid() != 0 {
		if !ok || kind != 'E' || val>>32 != 7 || unix.Errno(val&0xffffffff) != unix.EPERM {
			t.Errorf("a user's entry mapping host nobody: %q %#x (%v), want 'E', step 7, EPERM", rune(kind), val, ok)
		}
		waitKilled(t, pid)
		return
	}
	if !ok || kind != 'P' || val != uint64(pid) {
		t.Fatalf("the entry's message: %q %#x (%v), want 'P' and init's pid %d", rune(kind), val, ok, pid)
	}
	defer func() {
		unix.Close(fd) // init reads EOF before its spec and exits
		var ws unix.WaitStatus
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
			t.Errorf("init %d is not this process's child: %v", pid, err)
		}
	}()
	if err := cmd.Wait(); err != nil {
		t.Errorf("the entry after init's clone: %v, want exit status 0", err)
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	for f, want := range map[string]string{"uid_map": "0 65534 1", "gid_map": "0 65534 1", "setgroups": "deny"} {
		b, err := os.ReadFile(dir + f)
		if got := strings.Join(strings.Fields(string(b)), " "); err != nil || got != want {
			t.Errorf("init's %s: %q (%v), want %q", f, got, err, want)
		}
	}
	// Released, init becomes host nobody before it execs the lean init.
	deadline := time.Now().Add(10 * time.Second)
	for statusField(pid, "Uid") != "65534\t65534\t65534\t65534" || statusField(pid, "Gid") != "65534\t65534\t65534\t65534" {
		if time.Now().After(deadline) {
			t.Fatalf("init's ids: Uid %q Gid %q, want host nobody's", statusField(pid, "Uid"), statusField(pid, "Gid"))
		}
		time.Sleep(time.Millisecond)
	}
	host, _ := os.Readlink("/proc/self/ns/user")
	if in, err := os.Readlink(dir + "ns/user"); err != nil || in == host {
		t.Errorf("init's user namespace: %s (%v), the host's %s", in, err, host)
	}
}
