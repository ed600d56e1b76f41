package seccomp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// notifyChild: Install with ExecNotify, send the listener to the parent
// over fd 3 (SCM_RIGHTS), then run the script named by envProbe and print
// one "STEP name result" line per step.
func notifyChild() int {
	cfg, err := childConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	cfg.ExecNotify = os.Getenv(envFilter) != "0"
	if os.Getenv(envUserns) == "1" {
		// As jail's init: non-dumpable, so only a tracer with
		// CAP_SYS_PTRACE over our user namespace may read our memory.
		if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
	}
	var l *os.File
	if os.Getenv(envFilter) != "none" {
		var rep Report
		l, rep, err = Install(cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "install:", err)
			return 3
		}
		if cfg.ExecNotify && l == nil {
			fmt.Fprintln(os.Stderr, "no listener:", rep.Reason)
			return 4
		}
	}
	if l != nil {
		if err := unix.Sendmsg(3, []byte("L"), unix.UnixRights(int(l.Fd())), nil, 0); err != nil {
			fmt.Fprintln(os.Stderr, "sendmsg:", err)
			return 3
		}
		l.Close() // init must not keep (or pass on) the listener
	}
	unix.Close(3)
	step := func(name string, err error) { fmt.Printf("STEP %s %s\n", name, resultOf(err)) }
	switch os.Getenv(envProbe) {
	case "pipeline":
		step("pipeline", exec.Command("/bin/sh", "-c", "/bin/true | /bin/cat /dev/null; /bin/echo one two >/dev/null").Run())
		step("env", exec.Command("/usr/bin/env", "A=1", "/bin/true").Run())
	case "guard":
		ws := os.Getenv(envWork)
		step("echo", exec.Command("/bin/echo", "allowed").Run())
		step("rm", exec.Command("/bin/rm", "-rf", ws).Run())
		step("user-pattern", exec.Command("/bin/echo", "forbidden", "word").Run())
		step("sh-rm", exec.Command("/bin/sh", "-c", "cd "+ws+" && /bin/rm -r -f .").Run())
		_, err := os.Stat(ws)
		step("workspace-exists", err)
	case "victim":
		step("victim", exec.Command("/bin/echo", "victim").Run())
		step("after", exec.Command("/bin/true").Run())
	case "tstp":
		// SIGTSTP ignored: the kills below must not stop this child.
		signal.Ignore(syscall.SIGTSTP, syscall.SIGUSR2)
		// A group of its own: the kernel sends what the server continues,
		// and the test binary, in the group it came in, would stop.
		if err := unix.Setpgid(0, 0); err != nil {
			fmt.Fprintln(os.Stderr, "setpgid:", err)
			return 3
		}
		start := time.Now()
		step("kill-group", unix.Kill(0, unix.SIGTSTP))
		fmt.Printf("HELD %d\n", time.Since(start).Milliseconds())
		step("kill-self", unix.Kill(os.Getpid(), unix.SIGTSTP))
		step("tgkill-self", unix.Tgkill(os.Getpid(), unix.Gettid(), unix.SIGTSTP))
		step("kill-usr2", unix.Kill(0, unix.SIGUSR2))
		step("true", exec.Command("/bin/true").Run())
	case "listen":
		// A fixed port (envN), an ephemeral one, a Unix socket and a TCP
		// socket listen was never called on; each listen succeeds.
		port, _ := strconv.Atoi(os.Getenv(envN))
		fixed, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
		step("listen-fixed", err)
		eph, err := net.Listen("tcp4", "127.0.0.1:0")
		step("listen-ephemeral", err)
		if err == nil {
			fmt.Printf("EPHEMERAL %d\n", eph.Addr().(*net.TCPAddr).Port)
		}
		// A thread other than the process's first: the notification
		// names the thread (seen: a Go server's listen on another thread
		// went unreported, its pidfd_open refused for not naming a
		// process).
		var other net.Listener
		done, over := make(chan error, 1), make(chan struct{})
		onOther := func() {
			defer close(over)
			runtime.LockOSThread() // never unlocked: a thread of its own, discarded after
			if unix.Gettid() == unix.Getpid() {
				done <- errors.New("on the first thread")
				return
			}
			l, err := net.Listen("tcp4", "127.0.0.1:0")
			if err == nil {
				other = l
				fmt.Printf("THREAD %d\n", l.Addr().(*net.TCPAddr).Port)
			}
			done <- err
		}
		go func() {
			// Whichever thread this goroutine has is held while the
			// listen runs: when it is the first, the listen gets another.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if unix.Gettid() != unix.Getpid() {
				onOther()
				return
			}
			go onOther()
			<-over
		}()
		err = <-done
		step("listen-thread", err)
		sock := filepath.Join(os.Getenv(envWork), "s")
		ul, err := net.Listen("unix", sock)
		step("listen-unix", err)
		for _, l := range []net.Listener{fixed, eph, other, ul} {
			if l != nil {
				l.Close()
			}
		}
		step("true", exec.Command("/bin/true").Run())
	case "many":
		n, _ := strconv.Atoi(os.Getenv(envN))
		var failed int
		for i := 0; i < n; i++ {
			if err := forkExecWait("/bin/true", []string{"true", strconv.Itoa(i)}); err != nil {
				failed++
			}
		}
		step("many", nil)
		fmt.Printf("FAILED %d\n", failed)
	}
	return 0
}

func forkExecWait(path string, argv []string) error {
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Files: []uintptr{0, 1, 2}})
	if err != nil {
		return err
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		return err
	}
	if ws.ExitStatus() != 0 {
		return fmt.Errorf("exit %d", ws.ExitStatus())
	}
	return nil
}

// notifyRun starts a notify child running script, receives its listener,
// serves it with guard and returns the events and the child's stdout.
func notifyRun(t testing.TB, script, filter string, guard *Guard, env ...string) ([]ExecEvent, string) {
	return notifyRunHook(t, script, filter, guard, nil, env...)
}

func notifyRunHook(t testing.TB, script, filter string, guard *Guard, hook func(*ExecEvent), env ...string) ([]ExecEvent, string) {
	t.Helper()
	return notifyRunFirst(t, script, filter, guard, nil, hook, env...)
}

// notifyRunFirst is notifyRunHook served by ServeFirst with first.
func notifyRunFirst(t testing.TB, script, filter string, guard *Guard, first func() *ExecEvent, hook func(*ExecEvent), env ...string) ([]ExecEvent, string) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	parent, child := os.NewFile(uintptr(fds[0]), "parent"), os.NewFile(uintptr(fds[1]), "child")
	defer parent.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"=notify", envProbe+"="+script, envFilter+"="+filter)
	cmd.Env = append(cmd.Env, env...)
	cmd.ExtraFiles = []*os.File{child}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	for _, e := range env {
		if e == envUserns+"=1" { // jail's init: own user and pid namespaces
			cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS
			cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
			cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
		}
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child.Close()
	var (
		mu       sync.Mutex
		events   []ExecEvent
		serveErr = make(chan error, 1)
	)
	// A lost notification shows as a stall: the exec waiting for it never
	// returns, and no further event comes. So the guard is on progress, not
	// on the whole run: under load 15-20 on the 2-core CI machine 2,000
	// execs took more than a fixed 60 s while never stalling.
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var lastEvent atomic.Int64
	lastEvent.Store(time.Now().UnixNano())
	go func() {
		for ctx.Err() == nil {
			time.Sleep(time.Second)
			if time.Since(time.Unix(0, lastEvent.Load())) > notifyStall {
				cancel(fmt.Errorf("no exec event for %v: a notification was lost or never answered", notifyStall))
			}
		}
	}()
	if filter != "0" && filter != "none" {
		buf, oob := make([]byte, 8), make([]byte, unix.CmsgSpace(4))
		_, oobn, _, _, err := unix.Recvmsg(int(parent.Fd()), buf, oob, 0)
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("recvmsg: %v; child stderr: %s", err, errb.String())
		}
		msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
		if len(msgs) != 1 {
			t.Fatalf("no listener received; child stderr: %s", errb.String())
		}
		lfds, err := unix.ParseUnixRights(&msgs[0])
		if err != nil || len(lfds) != 1 {
			t.Fatalf("no listener received: %v", err)
		}
		listener := os.NewFile(uintptr(lfds[0]), "listener")
		go func() {
			serveErr <- ServeWith(ctx, listener, Handlers{Guard: guard, First: first, OnSignal: testOnSignal, OnListen: testOnListen, OnExec: func(evp *ExecEvent) {
				if hook != nil {
					hook(evp)
				}
				ev := *evp
				lastEvent.Store(time.Now().UnixNano())
				mu.Lock()
				events = append(events, ev)
				mu.Unlock()
			}})
		}()
	} else {
		serveErr <- nil
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v; stderr: %s", err, errb.String())
	}
	if err := <-serveErr; err != nil {
		t.Fatalf("Serve: %v (%v)", err, context.Cause(ctx))
	}
	mu.Lock()
	defer mu.Unlock()
	return events, out.String()
}

// testOnSignal and testOnListen are the OnSignal and OnListen of
// notifyRun's server (nil: none).
var (
	testOnSignal func(SignalEvent, *Held)
	testOnListen func(ListenEvent)
)

// TestExecNotifyListen: the exec audit's filter reports each listen on a
// TCP socket with the address it is bound to, after letting it go on; a
// Unix socket's listen goes on unreported. Execs are reported as before.
func TestExecNotifyListen(t *testing.T) {
	requireNotify(t)
	var mu sync.Mutex
	var got []ListenEvent
	testOnListen = func(ev ListenEvent) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, ev)
	}
	defer func() { testOnListen = nil }()
	// A port free now, below the ephemeral range (the child binds it).
	probe, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := 20000 + probe.Addr().(*net.TCPAddr).Port%10000
	probe.Close()
	events, out := notifyRun(t, "listen", "1", nil, envN+"="+strconv.Itoa(port), envWork+"="+t.TempDir())
	st := steps(out)
	for _, k := range []string{"listen-fixed", "listen-ephemeral", "listen-thread", "listen-unix", "true"} {
		if st[k] != "ok" {
			t.Errorf("step %s: %q", k, st[k])
		}
	}
	var eph, thread int
	if i := strings.Index(out, "EPHEMERAL "); i >= 0 {
		fmt.Sscanf(out[i:], "EPHEMERAL %d", &eph)
	}
	if i := strings.Index(out, "THREAD "); i >= 0 {
		fmt.Sscanf(out[i:], "THREAD %d", &thread)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf("127.0.0.1:%d", eph), fmt.Sprintf("127.0.0.1:%d", thread)}
	var own unix.Stat_t
	if err := unix.Stat("/proc/self/ns/net", &own); err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, ev := range got {
		// Unprivileged, the test may not ask the host's namespace
		// (SIOCGSKNS needs CAP_NET_ADMIN over it): 0.
		if ev.Pid <= 0 || ev.NetNS != own.Ino && (ev.NetNS != 0 || os.Getuid() == 0) {
			t.Errorf("event %+v: no pid, or not this network namespace's (%d)", ev, own.Ino)
		}
		addrs = append(addrs, ev.Addr.String())
	}
	if !slices.Equal(addrs, want) {
		t.Errorf("listen events %q, want %q (no Unix socket's)", addrs, want)
	}
	if len(events) != 1 || events[0].Path != "/bin/true" {
		t.Errorf("exec events %+v, want /bin/true's", events)
	}
}

// TestExecNotifySignalHeld: the exec audit's filter holds a SIGTSTP sent
// by kill or tgkill (to the caller's group, to itself) until the server
// continues it, and no other signal; execs are reported as before.
func TestExecNotifySignalHeld(t *testing.T) {
	requireNotify(t)
	var mu sync.Mutex
	var got []SignalEvent
	var held *Held
	var release *time.Timer
	released := false
	testOnSignal = func(ev SignalEvent, h *Held) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, ev)
		if ev.Call != "kill" || ev.Target != 0 || released {
			// After the release, a kill(0) that comes again (its wait
			// ended by a signal just before the release reached it)
			// is continued at once.
			if err := h.Continue(); err != nil {
				t.Errorf("Continue: %v", err)
			}
			return
		}
		// Kept, and answered later from another goroutine: the caller
		// waits meanwhile. A signal to the caller (the Go runtime's own)
		// ends its wait and the call comes again: the latest is kept.
		if held != nil {
			_ = held.Continue() // ENOENT: no longer waited for
		}
		held = h
		if release == nil {
			release = time.AfterFunc(300*time.Millisecond, func() {
				mu.Lock()
				defer mu.Unlock()
				released = true
				// ENOENT: a signal to the caller ended this wait an
				// instant ago and the call is on its way again (CI saw
				// it: the test then never continued the new one).
				err := held.Continue()
				if err != nil && !errors.Is(err, unix.ENOENT) {
					t.Errorf("Continue: %v", err)
				}
				if again := held.Continue(); again != err {
					t.Errorf("second Continue: %v, the first %v", again, err) // once: the first's result
				}
				if held.Waiting() {
					t.Error("a continued call still waits")
				}
			})
		}
	}
	defer func() { testOnSignal = nil }()
	events, out := notifyRun(t, "tstp", "1", nil)
	st := steps(out)
	for _, k := range []string{"kill-group", "kill-self", "tgkill-self", "kill-usr2", "true"} {
		if st[k] != "ok" {
			t.Errorf("step %s: %q", k, st[k])
		}
	}
	var ms int
	if i := strings.Index(out, "HELD "); i < 0 {
		t.Errorf("no HELD line in %q", out)
	} else if _, err := fmt.Sscanf(out[i:], "HELD %d", &ms); err != nil || ms < 250 {
		t.Errorf("kill(0, SIGTSTP) returned after %d ms, before its held notification was continued (%v)", ms, err)
	}
	mu.Lock()
	defer mu.Unlock()
	var calls []string
	seen := map[string]bool{}
	for _, ev := range got {
		if ev.Signal != int(unix.SIGTSTP) || ev.Pid <= 0 {
			t.Errorf("event %+v", ev)
		}
		c := fmt.Sprintf("%s %d", ev.Call, ev.Target)
		if !seen[c] {
			seen[c] = true
			calls = append(calls, c)
		}
	}
	if len(calls) != 3 || calls[0] != "kill 0" || !strings.HasPrefix(calls[1], "kill ") || calls[1] == "kill 0" || !strings.HasPrefix(calls[2], "tgkill ") {
		t.Errorf("held signals %q, want kill 0, kill PID, tgkill PID (and no SIGUSR2)", calls)
	}
	if len(events) != 1 || events[0].Path != "/bin/true" {
		t.Errorf("exec events %+v, want /bin/true's", events)
	}
}

// notifyStall is how long notifyRun waits for the next exec event before
// it calls the run stalled.
var notifyStall = 30 * time.Second

func steps(out string) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 3 && f[0] == "STEP" {
			m[f[1]] = strings.Join(f[2:], " ")
		}
	}
	return m
}

func requireNotify(t *testing.T) {
	t.Helper()
	var sz notifSizes
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_NOTIF_SIZES, 0, uintptrOf(&sz)); e != 0 {
		skipOrFail(t, "seccomp user notification unavailable: %v", e)
	}
}

// TestExecNotifyPipeline: every exec of a small shell pipeline is reported
// in order, with argv, path and cwd.
func TestExecNotifyPipeline(t *testing.T) {
	requireNotify(t)
	events, out := notifyRun(t, "pipeline", "1", nil)
	if s := steps(out); s["pipeline"] != "ok" || s["env"] != "ok" {
		t.Fatalf("steps: %v", s)
	}
	var got []string
	for _, ev := range events {
		if !ev.Allowed || ev.Err != "" {
			t.Errorf("event %+v not allowed or has error", ev)
		}
		got = append(got, ev.Path+" "+strings.Join(ev.Argv, " "))
	}
	wd, _ := os.Getwd()
	if len(events) > 0 && events[0].Cwd != wd {
		t.Errorf("cwd %q, want %q", events[0].Cwd, wd)
	}
	want := []string{
		"/bin/sh /bin/sh -c /bin/true | /bin/cat /dev/null; /bin/echo one two >/dev/null",
		"/bin/true /bin/true OR /bin/cat /bin/cat /dev/null", // either order: a pipeline runs concurrently
		"/bin/true /bin/true OR /bin/cat /bin/cat /dev/null",
		"/bin/echo /bin/echo one two",
		"/usr/bin/env /usr/bin/env A=1 /bin/true",
		"/bin/true /bin/true",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	seen := map[string]bool{}
	for i, w := range want {
		if strings.Contains(w, " OR ") {
			alts := strings.Split(w, " OR ")
			if (got[i] != alts[0] && got[i] != alts[1]) || seen[got[i]] {
				t.Errorf("event %d: %q, want one of %q", i, got[i], alts)
			}
			seen[got[i]] = true
			continue
		}
		if got[i] != w {
			t.Errorf("event %d: %q, want %q", i, got[i], w)
		}
	}
}

// TestExecNotifyFirstKnown: ServeFirst records the first notification as
// the exec it was told (its pid the notification's), and reads every later
// one as Serve does; the guard judges the first one too.
func TestExecNotifyFirstKnown(t *testing.T) {
	requireNotify(t)
	first := &ExecEvent{Path: "/known/sh", Argv: []string{"known-sh", "-c", "x"}, Cwd: "/known"}
	var asked atomic.Int32
	events, out := notifyRunFirst(t, "pipeline", "1", nil, func() *ExecEvent { asked.Add(1); return first }, nil)
	if s := steps(out); s["pipeline"] != "ok" || s["env"] != "ok" {
		t.Fatalf("steps: %v", s)
	}
	if len(events) != 6 {
		t.Fatalf("got %d events, want 6: %+v", len(events), events)
	}
	e := events[0]
	if e.Path != first.Path || strings.Join(e.Argv, " ") != "known-sh -c x" || e.Cwd != first.Cwd ||
		e.Pid <= 0 || !e.Allowed || e.Err != "" {
		t.Errorf("first event %+v, want the known exec with the notification's pid", e)
	}
	wd, _ := os.Getwd()
	for _, ev := range events[1:] {
		if ev.Path == first.Path || ev.Cwd != wd || !ev.Allowed || ev.Err != "" {
			t.Errorf("later event %+v not read from the process", ev)
		}
	}
	if last := events[5]; last.Path != "/bin/true" || strings.Join(last.Argv, " ") != "/bin/true" {
		t.Errorf("last event %+v, want /bin/true read back", last)
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("first asked %d times, want once", n)
	}
	// first saying nil (it cannot vouch: jail's agent has started): read.
	events, _ = notifyRunFirst(t, "pipeline", "1", nil, func() *ExecEvent { return nil }, nil)
	if len(events) != 6 || events[0].Path != "/bin/sh" || events[0].Cwd != wd || events[0].Err != "" {
		t.Errorf("with first nil: %+v, want every exec read back", events)
	}
	// The guard judges the known argv: a refused first exec fails.
	g, err := NewGuard([]string{`^known-sh`}, false, "", "")
	if err != nil {
		t.Fatal(err)
	}
	events, out = notifyRunFirst(t, "pipeline", "1", g, func() *ExecEvent { return first }, nil)
	if s := steps(out); s["pipeline"] == "ok" {
		t.Errorf("the guard let the refused first exec run: %v", s)
	}
	if len(events) == 0 || events[0].Rule == "" || events[0].Allowed {
		t.Errorf("first event %+v, want refused by the guard", events)
	}
}

// TestExecNotifyInUserns: the same from a non-dumpable child in its own
// user and pid namespaces (jail's init): pids are translated to ours and
// /proc/PID/mem is readable by the namespace's owner.
func TestExecNotifyInUserns(t *testing.T) {
	requireNotify(t)
	requireUserns(t)
	events, out := notifyRun(t, "pipeline", "1", nil, envUserns+"=1")
	if s := steps(out); s["pipeline"] != "ok" {
		t.Fatalf("steps: %v", s)
	}
	if len(events) != 6 {
		t.Fatalf("got %d events, want 6: %+v", len(events), events)
	}
	for _, ev := range events {
		if !ev.Allowed || ev.Err != "" || len(ev.Argv) == 0 || ev.Pid <= 1 {
			t.Errorf("bad event %+v", ev)
		}
	}
	if events[0].Path != "/bin/sh" || events[0].Argv[2] != "/bin/true | /bin/cat /dev/null; /bin/echo one two >/dev/null" {
		t.Errorf("first event %+v", events[0])
	}
}

// TestExecNotifyGuard: refused commands fail with EPERM and are recorded;
// the workspace survives `rm -rf WORKSPACE` and `cd WS && rm -r -f .`.
func TestExecNotifyGuard(t *testing.T) {
	requireNotify(t)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "keep"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	g, err := NewGuard([]string{`^/bin/echo forbidden`}, true, ws, "/nonexistent-home")
	if err != nil {
		t.Fatal(err)
	}
	events, out := notifyRun(t, "guard", "1", g, envWork+"="+ws)
	s := steps(out)
	want := map[string]string{"echo": "ok", "rm": "EPERM", "user-pattern": "EPERM", "workspace-exists": "ok"}
	for k, v := range want {
		if s[k] != v {
			t.Errorf("step %s: %q, want %q (all: %v)", k, s[k], v, s)
		}
	}
	if s["sh-rm"] == "ok" {
		t.Errorf("sh -c 'cd WS && rm -r -f .' succeeded")
	}
	if _, err := os.Stat(filepath.Join(ws, "keep")); err != nil {
		t.Fatalf("workspace damaged: %v", err)
	}
	rules := map[string]bool{}
	for _, ev := range events {
		if !ev.Allowed {
			rules[ev.Rule] = true
		}
	}
	for _, r := range []string{"default:rm-recursive-root", "block-command:^/bin/echo forbidden"} {
		if !rules[r] {
			t.Errorf("no refused event with rule %q in %+v", r, events)
		}
	}
}

// TestExecNotifyNoLoss: 10,000 short execs, 10,000 records.
func TestExecNotifyNoLoss(t *testing.T) {
	requireNotify(t)
	// Each exec waits for its answer, so a lost notification shows as a
	// hung or failed exec at any count; 2,000 keeps the test within its
	// deadline on a loaded 2-core machine (10,000 took over 60s there).
	// The end-to-end TestAuditExecFlood runs 3,000 through jail.
	n := 2000
	if testing.Short() {
		n = 500
	}
	start := time.Now()
	events, out := notifyRun(t, "many", "1", nil, envN+"="+strconv.Itoa(n))
	if !strings.Contains(out, "FAILED 0\n") {
		t.Fatalf("some execs failed: %s", out)
	}
	seen := make([]bool, n)
	count := 0
	for _, ev := range events {
		if ev.Path != "/bin/true" || len(ev.Argv) != 2 {
			continue
		}
		i, err := strconv.Atoi(ev.Argv[1])
		if err != nil || i < 0 || i >= n || seen[i] {
			t.Fatalf("bad or duplicate event %+v", ev)
		}
		seen[i] = true
		count++
	}
	if count != n {
		t.Fatalf("%d of %d execs reported", count, n)
	}
	t.Logf("%d execs reported in %v", n, time.Since(start))
}

// TestServeDeadTarget: a process killed while its exec waits for the
// answer (ENOENT on SEND) neither stops Serve nor loses later records.
func TestServeDeadTarget(t *testing.T) {
	requireNotify(t)
	events, out := notifyRunHook(t, "victim", "1", nil, func(ev *ExecEvent) {
		if len(ev.Argv) == 2 && ev.Argv[1] == "victim" {
			syscall.Kill(ev.Pid, syscall.SIGKILL)
			time.Sleep(50 * time.Millisecond)
		}
	})
	s := steps(out)
	if s["victim"] == "ok" || s["after"] != "ok" {
		t.Fatalf("steps: %v", s)
	}
	if len(events) != 2 || events[1].Path != "/bin/true" {
		t.Fatalf("events: %+v", events)
	}
}

// TestServeCancel: Serve returns ctx.Err() when cancelled, without events.
func TestServeCancel(t *testing.T) {
	r, w, err := os.Pipe() // any pollable fd that never becomes readable
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, r, nil, nil) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
}

func uintptrOf(p *notifSizes) uintptr { return uintptr(unsafe.Pointer(p)) }

// TestServeRefuse: an exec onExec sets Refuse on is answered EPERM though
// the guard allows it (the sandbox refuses a jail exec command started
// after its request was given up); the others run. Before Refuse existed
// onExec could not change an answer.
func TestServeRefuse(t *testing.T) {
	requireNotify(t)
	events, out := notifyRunHook(t, "pipeline", "1", nil, func(ev *ExecEvent) {
		if ev.Path == "/usr/bin/env" {
			ev.Refuse = true
		}
	})
	s := steps(out)
	if s["pipeline"] != "ok" || s["env"] != "EPERM" {
		t.Fatalf("steps: %v (want pipeline ok, env refused with EPERM)", s)
	}
	for _, ev := range events {
		if ev.Path == "/usr/bin/env" && !ev.Refuse {
			t.Errorf("the refused exec's event does not say so: %+v", ev)
		}
	}
}
