package ns

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/procstat"
	"github.com/jail-sandbox/jail/proctree"
)

// gcRelease ends init's HoldGC.
var gcRelease = func() {}

// initEntered, specRead and networkDone are when init's main began, when
// it had its spec, and when the network hook was done (MonotonicNS), for
// the trace.
var initEntered, specRead, networkDone int64

// runtimeStarted is when the lean init's Go runtime had started, its first
// package initialized (cmd/jail-init's InitRuntimeStarted; 0: not known,
// jail's own binary as init), for the trace: the part of init's start
// before it is the exec or the entry's clone, the prefault and the Go
// runtime's own start; after it, the program's package inits.
var runtimeStarted int64

// InitRuntimeStarted gives init the time (MonotonicNS's clock) at which the
// Go runtime had started, for JAIL_TRACE's "init runtime" line. The lean
// init calls it before InitMain; nothing else depends on it.
func InitRuntimeStarted(mono int64) { runtimeStarted = mono }

// MonotonicNS is CLOCK_MONOTONIC in nanoseconds: the same clock in every
// process of the host, for a trace that spans the supervisor and init.
func MonotonicNS() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return 0
	}
	return ts.Nano()
}

// setupError carries the exit code jail should report.
type setupError struct {
	code int
	err  error
}

func (e *setupError) Error() string { return e.err.Error() }
func (e *setupError) Unwrap() error { return e.err }

// InitComm is init's command name on the host (ps, top, /proc/PID/comm).
const InitComm = "jail-init"

// InitMain is the whole life of the sandbox's init. It never returns.
func InitMain(h Hooks) {
	initEntered = MonotonicNS() // exec, the Go runtime and package init are done
	// Go runs goroutines on several threads; the setup below relies on every
	// thread sharing the mount namespace and fs (cwd/root), which they do, and
	// on privilege drops being applied to all threads (AllThreadsSyscall).
	// One P (the supervisor starts init with GOMAXPROCS=1 too): init's work
	// is one step after another, and a second P cost init a thread and a
	// second set of allocation spans (15-35 page faults a start, each 18-30
	// µs on a paravirtualized VM) while the supervisor has the other core.
	// Blocking syscalls still hand the P to another thread.
	runtime.GOMAXPROCS(1)
	gcRelease = HoldGC()     // until the agent is forked
	unix.CloseOnExec(initFD) // the socket must never reach the agent
	// Go does not close inherited descriptors that lack O_CLOEXEC: close every
	// fd above the socket, so nothing the supervisor's parent leaked reaches
	// the agent (the CVE-2024-21626 class: a host fd or cwd in the sandbox);
	// the Go runtime's own poller is kept (fds_linux.go).
	closeInherited(initFD + 1)
	// Name init for the host's ps and top: its exec path names it "4" (the
	// lean init, exec'd as /proc/self/fd/4) or "exe" (jail itself).
	// /proc/self/comm is the thread group leader's name, whichever thread
	// writes it. A failure only leaves the name as it was.
	// Refused to an init that was not exec'd again (rootful: its /proc
	// belongs to host root): its entry named it already.
	// A bare descriptor: os.WriteFile would start Go's poller (its epoll
	// instance and eventfd) for nothing, and init's setup uses none.
	if fd, err := unix.Open("/proc/self/comm", unix.O_WRONLY|unix.O_CLOEXEC, 0); err == nil {
		_, _ = unix.Write(fd, []byte(InitComm))
		unix.Close(fd)
	}
	// Catch SIGTERM from the first instant: Go's default is to exit, which
	// would take the sandbox down instead of passing the signal on, and it
	// is the one signal the supervisor sends init before the agent exists
	// (its timeout; it holds every relayed signal until the agent started).
	// It queues until the agent exists. The other forwarded signals are
	// caught once the agent is forked, before init says so
	// (catchForwarded): each signal a signal.Notify enables is a round trip
	// between two of init's threads (the runtime's signal-mask thread, a
	// scheduling wait for each under load), and the seven of them here were
	// most of init's time from its main to its spec, with the spec waiting.
	initSignals = make(chan os.Signal, 32)
	signal.Notify(initSignals, syscall.SIGTERM)
	conn := NewConn(os.NewFile(initFD, "jail-init"))
	code := run(conn, h)
	os.Exit(code)
}

func run(conn *Conn, h Hooks) int {
	// The supervisor plans for tens of milliseconds after init's start
	// before it sends the spec: what needs no spec is done meanwhile, off
	// the path from the spec to the agent.
	prepare(h)
	m, passed, err := conn.Recv()
	var early *earlyNetwork
	if err == nil && m.Type == MsgNetwork && m.Spec != nil && len(passed) == 0 {
		// The network first, while the supervisor still plans (see
		// MsgNetwork); then the spec, which may have come meanwhile.
		early = setupNetworkEarly(h, m.Spec.Hooks[HookNetwork])
		m, passed, err = conn.Recv()
	}
	if err != nil || m.Type != MsgSpec || m.Spec == nil {
		// The one line init writes itself: without a spec there is no
		// supervisor to tell (and no terminal relayed yet).
		fmt.Fprintf(os.Stderr, "jail: init: no spec from the supervisor: %v\n", err)
		return 125
	}
	spec := m.Spec
	specRead = MonotonicNS()
	agentTimerSlack = spec.AgentTimerSlack
	st, err := setup(conn, spec, passed, h, early)
	for _, f := range passed {
		f.Close()
	}
	if err != nil {
		code := 125
		var se *setupError
		if errors.As(err, &se) {
			code = se.code
		}
		_ = conn.Send(Message{Type: MsgError, Error: err.Error(), ExitCode: code})
		return code
	}
	if spec.Trace {
		st.traceEnd = endTracer(conn, spec)
	}
	return st.reap(conn)
}

// endTracer sends init's trace lines of the run's end (JAIL_TRACE=1), as
// setupRest sends those of the setup.
func endTracer(conn *Conn, spec *Spec) func(step string) {
	return func(step string) { sendTrace(conn, spec, step, MonotonicNS()) }
}

// sendTrace sends one of init's trace lines (JAIL_TRACE=1): when step
// ended (mono), in ms since init's main began, then on the supervisor's
// clock (one timeline for make bench, which reads both).
func sendTrace(conn *Conn, spec *Spec, step string, mono int64) {
	text := fmt.Sprintf("init %-10s %6.2f ms", step, float64(mono-initEntered)/1e6)
	if spec.TraceOrigin != 0 && mono != 0 {
		text += fmt.Sprintf(" (at %.2f ms)", float64(mono-spec.TraceOrigin)/1e6)
	}
	_ = conn.Send(Message{Type: MsgLog, Level: LogTrace, Text: text})
}

// prepare does what init's start needs and the spec does not decide, before
// the spec arrives: the hooks' own Prepare. It reads and changes nothing of
// the sandbox: every wall is still set up after the spec, in the same order.
// (The protocol's own messages need no warming: they are read and written
// by hand, see wire.go.)
func prepare(h Hooks) {
	if h.Prepare != nil {
		h.Prepare()
	}
}

type initState struct {
	agent int
	dial  func(port int) (*os.File, error)
	// onAgentThread runs f on the OS thread that forked the agent. Landlock
	// domains are per thread (restrict_self on each thread makes sibling
	// domains until ABI 8's TSYNC), and signal scoping (ABI 6) only lets a
	// thread signal processes of its own domain: the agent inherited the
	// forking thread's, so forwarding and the final kill must come from there.
	onAgentThread func(f func())
	// degraded: no pid namespace; see Spec.Degraded.
	degraded bool
	// idle: no agent (Spec.Argv empty); init lives until stopped.
	idle bool
	// agentRlimits are set on every exec'd command too (Spec.AgentRlimits).
	agentRlimits []Rlimit
	// startLimits are init's own process and open-file soft limits before
	// the agent existed: a start that fails on a lower one says so
	// (initLimitSaid).
	startLimits startLimits
	// netEnv is what the network hook added to the agent's environment
	// (the *_PROXY variables): an exec'd command gets it too, unless its
	// request names the variable itself.
	netEnv []string

	// mu guards the exec'd commands: pid (also its process group) -> ID.
	// A command is entered under mu in the same critical section as its
	// fork, so the reaper, which looks it up under mu, can never see its
	// exit first and lose it.
	mu       sync.Mutex
	execs    map[int]int
	stopping bool
	// wake tells an idle reaper with no child that a command started or a
	// stop was asked (wait4 has nothing to wait for then).
	wake chan struct{}
	// traceEnd, with JAIL_TRACE=1, says when a step of the end was done.
	traceEnd func(step string)
	// held is what the last MsgHold stopped (serveRequests' goroutine
	// only), for MsgRelease.
	held []proctree.Held
}

// lockedThread runs functions, one at a time, on one dedicated OS thread.
func lockedThread() func(func()) {
	reqs := make(chan func())
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with init
		for f := range reqs {
			f()
		}
	}()
	return func(f func()) {
		done := make(chan struct{})
		reqs <- func() { f(); close(done) }
		<-done
	}
}

// errNoNetwork: a network configuration came to an init built without the
// network hook.
var errNoNetwork = errors.New("network configuration given but no network support built in")

// earlyNetwork is the network init set up on MsgNetwork, before its spec.
type earlyNetwork struct {
	cfg []byte
	res NetResult
	err error
}

// setupNetworkEarly runs the network hook on cfg before the spec came
// (MsgNetwork). Its result waits for the spec, which must name the same
// configuration (setup).
func setupNetworkEarly(h Hooks, cfg []byte) *earlyNetwork {
	e := &earlyNetwork{cfg: cfg}
	if h.Network == nil {
		e.err = errNoNetwork
	} else {
		e.res, e.err = h.Network(cfg)
	}
	networkDone = MonotonicNS()
	return e
}

// checkEarlyNetwork: what init set up before its spec must be what the spec
// asks for. A spec without a network, or with another one, is refused
// rather than run with the early one.
func checkEarlyNetwork(spec *Spec, early *earlyNetwork) error {
	if early == nil {
		return nil
	}
	if cfg, ok := spec.Hooks[HookNetwork]; !ok || !bytes.Equal(cfg, early.cfg) {
		return errors.New("network: the spec's network configuration is not the one init set up before it")
	}
	return nil
}

func setup(conn *Conn, spec *Spec, passed []*os.File, h Hooks, early *earlyNetwork) (*initState, error) {
	var names []string
	var files []*os.File
	info := map[string]string{}
	closeFiles := func() {
		for _, f := range files {
			f.Close()
		}
	}
	if err := checkEarlyNetwork(spec, early); err != nil {
		for _, f := range early.res.Files {
			f.Close()
		}
		return nil, err
	}
	var netEnv []string // the network's variables (*_PROXY), exec'd commands' too
	if cfg, ok := spec.Hooks[HookNetwork]; ok {
		var res NetResult
		var err error
		switch {
		case early != nil:
			res, err = early.res, early.err
		case h.Network == nil:
			return nil, errNoNetwork
		default:
			res, err = h.Network(cfg)
		}
		if err != nil {
			return nil, fmt.Errorf("network: %w", err)
		}
		names, files = append(names, res.Names...), append(files, res.Files...)
		for k, v := range res.Info {
			info["net."+k] = v
		}
		if res.Resolv != nil {
			spec.Mounts = append(spec.Mounts, Mount{Kind: KindFile, Path: "/etc/resolv.conf", Data: res.Resolv, FD: -1, Why: "the sandbox's DNS"})
		}
		spec.Env = append(spec.Env, res.Env...)
		netEnv = res.Env
	}
	if early == nil {
		networkDone = MonotonicNS()
	}
	st, err := setupRest(conn, spec, passed, h, names, files, info)
	if err != nil {
		closeFiles()
		return nil, err
	}
	st.netEnv = netEnv
	return st, nil
}

func setupRest(conn *Conn, spec *Spec, passed []*os.File, h Hooks, names []string, files []*os.File, info map[string]string) (*initState, error) {
	traceAt := func(step string, mono int64) {
		if spec.Trace {
			sendTrace(conn, spec, step, mono)
		}
	}
	trace := func(step string) { traceAt(step, MonotonicNS()) }
	// The steps before this function: init's process start (exec, Go
	// runtime, package init), the spec, the network hook.
	traceAt("main", initEntered)
	if runtimeStarted > 0 {
		// After "main", which stays init's first line; its time is
		// before main's (a negative offset).
		traceAt("runtime", runtimeStarted)
	}
	traceAt("spec", specRead)
	traceAt("network", networkDone)
	defer trace("started")
	if spec.Degraded {
		// Orphans of the agent are re-parented to init, not to the host's
		// init, so that they are found and killed at the end.
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return nil, fmt.Errorf("become the child subreaper: %w", err)
		}
	} else {
		recNames, recFiles, err := buildRoot(spec, passed)
		if err != nil {
			return nil, fmt.Errorf("build the sandbox's file system: %w", err)
		}
		names, files = append(names, recNames...), append(files, recFiles...)
		trace("mounts")
		if spec.LoopbackUp {
			if err := LoopbackUp(); err != nil {
				return nil, fmt.Errorf("bring up the sandbox's loopback: %w", err)
			}
		}
		if err := unix.Sethostname([]byte(spec.Hostname)); err != nil {
			return nil, fmt.Errorf("sethostname: %w", err)
		}
	}
	var slave *os.File
	if spec.Pty {
		master, s, err := openPty()
		if err != nil {
			return nil, err
		}
		slave = s
		names, files = append(names, "pty"), append(files, master)
		if ptyIsCtty(spec) {
			// init (a session leader since the clone) takes the pty as its
			// controlling terminal, and the agent runs in a process group of
			// its own in init's session, in the foreground: as a shell runs
			// a job. Were the agent a session leader itself, its process
			// group would be orphaned (its parent, init, in another
			// session) and the kernel would discard every SIGTSTP: Ctrl-Z
			// and an agent's own suspend would do nothing.
			if err := unix.IoctlSetInt(int(slave.Fd()), unix.TIOCSCTTY, 0); err != nil {
				return nil, fmt.Errorf("make the sandbox's pty init's terminal: %w", err)
			}
		}
	}
	for _, rl := range spec.Rlimits {
		lim := unix.Rlimit{Cur: rl.Cur, Max: rl.Max}
		if err := unix.Setrlimit(rl.Resource, &lim); err != nil {
			return nil, fmt.Errorf("setrlimit %d: %w", rl.Resource, err)
		}
	}
	// Before the agent exists, which can lower them (see initLimitSaid).
	limits := readStartLimits()
	if spec.IgnoreSIGXFSZ {
		// SIG_IGN survives execve: a write past RLIMIT_FSIZE then fails with
		// EFBIG instead of killing the agent.
		signal.Ignore(syscall.SIGXFSZ)
	}
	if err := os.Chdir(spec.Cwd); err != nil {
		return nil, fmt.Errorf("enter the workspace: %w", err)
	}
	// Resolve the command before the last walls go up (path lookup and errors
	// need no privilege, but a clear 126/127 beats a seccomp-shaped failure).
	idle := len(spec.Argv) == 0
	var path string
	var err error
	if !idle {
		if path, err = lookPath(spec.Argv[0], spec.Env); err != nil {
			return nil, err
		}
	}
	trace("rlimits")
	onThread := lockedThread()
	onThread(func() {
		if spec.Degraded {
			err = dropPrivilegesDegraded()
			return
		}
		// A cgroup namespace rooted where the supervisor has now put us
		// (init is born in its v2 or v1 groups, whose namespace the clone
		// made already; a group joined after the clone, Config.BeforeSpec,
		// is not its root): the agent, forked from this thread, sees its
		// own group as "/" and nothing of the host's tree.
		if uerr := unix.Unshare(unix.CLONE_NEWCGROUP); uerr != nil {
			err = fmt.Errorf("new cgroup namespace: %w", uerr)
			return
		}
		// After the last namespace init makes (the bounds are for what
		// runs inside, not for our own setup), before CAP_SYS_RESOURCE
		// goes.
		if err = setUserNSLimits(spec.UserNSLimits); err != nil {
			return
		}
		err = dropPrivileges()
	})
	trace("caps")
	if err != nil {
		return nil, fmt.Errorf("drop privileges: %w", err)
	}
	if cfg, ok := spec.Hooks[HookLandlock]; ok {
		if h.Landlock == nil {
			return nil, errors.New("landlock configuration given but no landlock support built in")
		}
		li, err := h.Landlock(cfg)
		if err != nil {
			return nil, fmt.Errorf("landlock: %w", err)
		}
		for k, v := range li {
			info["landlock."+k] = v
		}
	}
	trace("landlock")
	var agentFilter func() error
	if cfg, ok := spec.Hooks[HookSeccomp]; ok {
		if h.Seccomp == nil {
			return nil, errors.New("seccomp configuration given but no seccomp support built in")
		}
		l, si, err := h.Seccomp(cfg)
		if err != nil {
			return nil, fmt.Errorf("seccomp: %w", err)
		}
		for k, v := range si {
			info["seccomp."+k] = v
		}
		if l != nil {
			names, files = append(names, "seccomp"), append(files, l)
		}
		// The agent's own filter goes on the agent's thread below.
		if h.SeccompAgent == nil {
			return nil, errors.New("seccomp configuration given but no agent filter built in")
		}
		agentFilter = h.SeccompAgent
	}
	trace("seccomp")
	// Hand over the fds and wait for the supervisor's go: it must be serving
	// exec notifications before the agent's first execve blocks on them.
	// With the program the agent's execve will run (path, "" for an idle
	// init): the supervisor records that exec as given, not read back.
	err = conn.Send(Message{Type: MsgFiles, Names: names, Info: info, Path: path}, files...)
	for _, f := range files {
		f.Close() // the supervisor has its own copies now
	}
	if err != nil {
		return nil, err
	}
	// The go is read on the thread that forks the agent, which forks as
	// soon as it has it: read on init's main goroutine, the go woke that
	// goroutine's thread, which then handed the processor to the locked
	// thread (one or two thread wake-ups, each a wait for a CPU under
	// load, between the go and the fork).
	var pid int
	onThread(func() {
		// The agent's own filter, on the agent's thread only (the agent
		// and every exec'd command are forked from it): without it the
		// agent (init's uid) could set init's limits by pid 1 and starve
		// every later jail exec (seccomp.buildAgent says why; init's
		// thread ids so far, this one among them, are refused too, the
		// ones it makes later stay open). Fail closed: no agent without
		// it. Here, while the supervisor reads the files: off the path
		// from the go to the fork, and no thread hop of its own.
		if agentFilter != nil {
			if ferr := agentFilter(); ferr != nil {
				err = fmt.Errorf("seccomp: %w", ferr)
				return
			}
		}
		m, _, rerr := conn.Recv()
		if rerr != nil || m.Type != MsgGo {
			err = fmt.Errorf("supervisor did not confirm start: %v", rerr)
			return
		}
		trace("go")
		if !idle {
			pid, err = startAgent(spec, path, slave)
		}
	})
	if err == nil && !idle {
		for _, rl := range spec.AgentRlimits {
			lim := unix.Rlimit{Cur: rl.Cur, Max: rl.Max}
			if perr := unix.Prlimit(pid, rl.Resource, &lim, nil); perr != nil {
				_ = unix.Kill(pid, unix.SIGKILL) // fail closed: no unlimited agent
				err = &setupError{125, fmt.Errorf("set limit %d on the agent: %w", rl.Resource, perr)}
			}
		}
	}
	if slave != nil {
		slave.Close()
	}
	if err != nil {
		return nil, err
	}
	// Before the report: the supervisor relays the signals it held once
	// it has it. After the fork: the round trips overlap the agent's exec.
	catchForwarded()
	err = conn.Send(Message{Type: MsgStarted, Pid: pid})
	// init now lives as long as the agent: collect as usual. After the
	// report: its timer is the first init makes, and starts Go's poller
	// (an epoll instance, an eventfd).
	gcRelease()
	if err != nil {
		return nil, err
	}
	return &initState{agent: pid, onAgentThread: onThread, dial: h.Dial, degraded: spec.Degraded,
		idle: idle, agentRlimits: spec.AgentRlimits, startLimits: limits, execs: map[int]int{}, wake: make(chan struct{}, 1)}, nil
}

// LoopbackUp sets IFF_UP on lo of the calling thread's network namespace (a new
// one starts with it down); for init and its network hook.
func LoopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// lookPath finds the command like execvp would, with the agent's PATH, and
// maps failures to the shell's exit codes: 127 not found, 126 not executable.
func lookPath(file string, env []string) (string, error) {
	check := func(p string) error {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if fi.IsDir() || fi.Mode()&0o111 == 0 {
			return os.ErrPermission
		}
		return unix.Access(p, unix.X_OK)
	}
	fail := func(p string, err error) error {
		if errors.Is(err, os.ErrNotExist) {
			// The supervisor says what the host has (sandbox's notFoundLine,
			// which looks for NotFoundInside): init sees the sandbox only.
			return &setupError{127, fmt.Errorf("%s%s", p, NotFoundInside)}
		}
		return &setupError{126, fmt.Errorf("%s: not executable: %v", p, err)}
	}
	if strings.Contains(file, "/") {
		if err := check(file); err != nil {
			return "", fail(file, err)
		}
		return file, nil
	}
	pathEnv := ""
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			pathEnv = kv[5:]
		}
	}
	var firstErr error
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, file)
		err := check(p)
		if err == nil {
			return p, nil
		}
		if firstErr == nil && !errors.Is(err, os.ErrNotExist) {
			firstErr = err
		}
	}
	if firstErr != nil {
		return "", fail(file, firstErr)
	}
	return "", fail(file, os.ErrNotExist)
}

func openPty() (master, slave *os.File, err error) {
	mfd, err := unix.Open("/dev/pts/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		// Degraded mode (no devpts of the sandbox's own): the host's
		// devpts may keep its ptmx node at mode 0 (ptmxmode=000, the
		// kernel's default) and hand out ptys through /dev/ptmx only; as
		// a user, /dev/pts/ptmx is then EACCES. Same multiplexer, same
		// instance. Under namespaces /dev/ptmx is a link to pts/ptmx.
		fd, ferr := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if ferr != nil {
			return nil, nil, mountErr("open", "/dev/pts/ptmx", err)
		}
		mfd = fd
	}
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(mfd)
		return nil, nil, fmt.Errorf("unlock pty: %w", err)
	}
	// TIOCGPTPEER (4.13) opens the slave from the master without a path
	// lookup, so it is the peer of this master and no other.
	sfd, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(mfd), unix.TIOCGPTPEER, uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC))
	if e != 0 {
		unix.Close(mfd)
		return nil, nil, fmt.Errorf("open pty peer: %w", e)
	}
	return os.NewFile(uintptr(mfd), "pty-master"), os.NewFile(sfd, "pty-slave"), nil
}

// startAgent forks and execs the agent. Its stdio is init's (the host's
// 0, 1, 2) or the sandbox's own pty; every other fd is close-on-exec.
func startAgent(spec *Spec, path string, slave *os.File) (int, error) {
	attr := &syscall.ProcAttr{
		Dir:   spec.Cwd,
		Env:   spec.Env,
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{},
	}
	if slave != nil {
		for _, n := range ptyFDs(spec) {
			attr.Files[n] = slave.Fd()
		}
	}
	if slave != nil && ptyIsCtty(spec) {
		// A process group of its own, the pty's foreground one (init's
		// session has the pty as its terminal): Ctrl-C and Ctrl-Z reach it
		// as outside, inside the sandbox's devpts, and it can be stopped.
		attr.Sys.Setpgid = true
		attr.Sys.Foreground = true
		attr.Sys.Ctty = int(slave.Fd()) // init's fd: Foreground's TIOCSPGRP runs before the fds move
	} else {
		// Without a pty (or with an output-only one) the agent stays in
		// init's session, which has no controlling terminal, and is not a
		// session leader: it can never acquire the host's terminal, so
		// TIOCSTI/TIOCSCTTY on an inherited tty fd fail (TIOCSTI needs the
		// tty to be the caller's controlling terminal or CAP_SYS_ADMIN in
		// the initial user ns).
		attr.Sys.Setpgid = true
	}
	return forkExec(path, spec.Argv, attr)
}

// KillDescendants is killDescendants for the supervisor of a degraded
// run, the child subreaper above init there: once init is gone (the agent
// can SIGKILL it where there is no pid namespace), the sandbox's orphans
// are the supervisor's.
func KillDescendants() { killDescendants() }

// killDescendants SIGKILLs every descendant of this process, reaping as it
// goes, until none is left. As the child subreaper, init inherits every
// orphan below it, so a descendant that forks while its parent dies is
// found on the next round; a SIGKILLed process forks no more, so the rounds
// end.
func killDescendants() {
	self := os.Getpid()
	for round := 0; round < 1000; round++ {
		kids := descendants(self)
		if len(kids) == 0 {
			return
		}
		for _, p := range kids {
			_ = unix.Kill(p, unix.SIGKILL)
		}
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if err == unix.EINTR {
				continue
			}
			if err != nil || pid <= 0 {
				break // none left, or none exited yet (the next round sees them)
			}
		}
		time.Sleep(time.Millisecond)
	}
}

// descendants lists the pids below root in the process tree (from /proc).
func descendants(root int) []int {
	// procstat ends comm at the last ')': an agent's process named
	// ") S 1" cannot pose as another parent's child and escape the kill.
	all, _ := procstat.All("")
	return procstat.Descendants(all, root)
}

// ptyFDs lists which of the agent's fds 0, 1, 2 are the sandbox's pty.
func ptyFDs(spec *Spec) []int {
	if len(spec.PtyFDs) == 0 {
		return []int{0, 1, 2}
	}
	var out []int
	for _, n := range spec.PtyFDs {
		if n >= 0 && n <= 2 {
			out = append(out, n)
		}
	}
	return out
}

// ptyIsCtty tells whether the pty is the agent's controlling terminal:
// only when it is its stdin (otherwise it is an output-only terminal).
func ptyIsCtty(spec *Spec) bool {
	for _, n := range ptyFDs(spec) {
		if n == 0 {
			return true
		}
	}
	return false
}

var initSignals chan os.Signal

// Signals init forwards to the agent.
var forwarded = []os.Signal{
	syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH,
}

// catchForwarded catches the forwarded signals InitMain did not (it
// catches SIGTERM) into initSignals. The supervisor relays none of them
// before the agent started (it holds them until then), so none comes
// before this; one sent by another host process before it would end
// init, as one sent before init's main always could.
func catchForwarded() {
	signal.Notify(initSignals, forwarded...)
	// The agent can signal init: pid 1 of the namespace ignores what the
	// agent sends it only for signals without a handler, and Go's runtime
	// handles these, and ends the program on them when sent by kill, with
	// a stack dump of init on the user's terminal (the thread the agent is
	// forked from shares the agent's Landlock domain, whose signal scope
	// lets them through). Caught here and dropped: init stays. Only
	// SIGABRT costs a round trip to the runtime's signal-mask thread; the
	// others' handlers are Go's from the start, so enabling them only
	// marks them wanted. A real fault in init is not from kill and still
	// crashes it, as it must.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGABRT, syscall.SIGSEGV, syscall.SIGBUS,
		syscall.SIGFPE, syscall.SIGILL, syscall.SIGTRAP, syscall.SIGSTKFLT, syscall.SIGSYS)
}

// serveRequests answers the supervisor's requests while the agent runs:
// connections to servers inside the sandbox, for --publish. Only what init
// can do with no privilege (socket, connect) is offered.
func (st *initState) serveRequests(conn *Conn) {
	for {
		m, files, err := conn.Recv()
		if errors.Is(err, ErrFDsLost) && m.Type == MsgExec && m.Exec != nil {
			// The request is whole, its stdio is not: the agent (init's
			// uid) lowered init's open-file limit (prlimit64 on one of
			// init's thread ids). Answer at once with why, so jail exec
			// says it in one line instead of waiting for its deadline.
			_ = conn.Send(Message{Type: MsgExecStarted, ID: m.Exec.ID, ExitCode: 125,
				Error: "the sandbox's init could not receive the command's stdio (its open-file limit is too low: lowered from inside the sandbox?); not started"})
			continue
		}
		if errors.Is(err, ErrBadMessage) || errors.Is(err, ErrFDsLost) {
			// One message lost, not the connection: go on serving (the
			// request loop ended here, and every later jail exec of the
			// sandbox waited for its deadline). The supervisor's deadline
			// answers the request this was, if any.
			continue
		}
		if err != nil {
			return
		}
		if m.Type == MsgExec && m.Exec != nil {
			st.exec(conn, m.Exec, files)
		}
		for _, f := range files {
			f.Close() // init's copies: the command has its own
		}
		switch m.Type {
		case MsgSignal:
			st.signal(m)
			continue
		case MsgStop:
			st.stop()
			continue
		case MsgHold:
			_ = conn.Send(Message{Type: MsgHeld, Code: st.hold()})
			continue
		case MsgRelease:
			st.release()
			continue
		}
		if m.Type != MsgDial {
			continue
		}
		reply := Message{Type: MsgDialed, Port: m.Port}
		if st.dial == nil || m.Port <= 0 || m.Port > 65535 {
			reply.Error = "publishing is not available in this sandbox"
			_ = conn.Send(reply)
			continue
		}
		f, err := st.dial(m.Port)
		if err != nil {
			reply.Error = err.Error()
			_ = conn.Send(reply)
			continue
		}
		_ = conn.Send(reply, f)
		f.Close()
	}
}

// signal sends the supervisor's job-control signal to the agent or its
// process group (the agent leads its group), from the agent's thread.
func (st *initState) signal(m Message) {
	sig := syscall.Signal(m.Signal)
	if m.ID != 0 {
		st.mu.Lock()
		pgid := 0
		for pid, id := range st.execs {
			if id == m.ID {
				pgid = pid
			}
		}
		st.mu.Unlock()
		if pgid > 0 && m.Group && sig == syscall.SIGKILL {
			// The kill of a start given up at its deadline: the client was
			// told the command did not start, so nothing of it may stay --
			// not what it moved out of its process group with setsid,
			// which kill(-pgid) misses (proctree: by parent, group and
			// session, stopped first so none forks past the walk).
			never := map[int]bool{os.Getpid(): true, os.Getppid(): true, st.agent: true}
			st.onAgentThread(func() {
				proctree.Kill("/proc", pgid, 0, never, func(pid int, sig syscall.Signal) error { return unix.Kill(pid, sig) })
			})
			return
		}
		if pgid > 0 && sig > 0 && sig < 65 {
			st.onAgentThread(func() { _ = unix.Kill(-pgid, sig) })
		}
		return
	}
	switch sig {
	case unix.SIGTSTP, unix.SIGSTOP, unix.SIGCONT, unix.SIGWINCH:
	default:
		return // job control only; the rest travels as real signals
	}
	target := st.agent
	if m.Group {
		target = -st.agent
	}
	st.onAgentThread(func() { _ = unix.Kill(target, sig) })
}

// hold stops every process of the sandbox but init that is not stopped
// already (MsgHold) and says how many. Every process of the sandbox comes
// from init: the agent, the exec'd commands, and what left them is
// re-parented to init (pid 1, or a child subreaper in degraded mode), so
// proctree finds them all from init; the supervisor (init's parent) is
// never touched. From the agent's thread: Landlock's signal scope lets
// only it signal the sandbox's processes.
func (st *initState) hold() int {
	self := os.Getpid()
	never := map[int]bool{self: true, os.Getppid(): true}
	var held []proctree.Held
	st.onAgentThread(func() {
		held = proctree.Hold("/proc", self, never, func(pid int, sig syscall.Signal) error { return unix.Kill(pid, sig) })
	})
	st.held = append(st.held, held...)
	return len(held)
}

// release continues what hold stopped (MsgRelease).
func (st *initState) release() {
	held := st.held
	st.held = nil
	if len(held) == 0 {
		return
	}
	st.onAgentThread(func() {
		proctree.Release("/proc", held, func(pid int, sig syscall.Signal) error { return unix.Kill(pid, sig) })
	})
}

// reap is pid 1's job: forward signals to the agent, reap every child (orphans
// are reparented to us), and when the agent exits, kill everything else in the
// pid namespace, report the agent's status and exit with it (init's exit,
// from the agent's thread: reap returns only when it cannot happen).
func (st *initState) reap(conn *Conn) int {
	go func() {
		for s := range initSignals {
			sig := s.(syscall.Signal)
			if st.idle {
				// No agent to pass it to (kill(0) would signal init's own
				// group): an interrupt stops the sandbox, as jail stop does.
				switch sig {
				case syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP:
					st.stop()
				}
				continue
			}
			st.onAgentThread(func() { _ = unix.Kill(st.agent, sig) })
		}
	}()
	go st.serveRequests(conn)
	var status unix.WaitStatus
	for {
		var ws unix.WaitStatus
		// WUNTRACED: a stopped agent is reported to the supervisor, which
		// does what a shell does with a stopped job.
		pid, err := unix.Wait4(-1, &ws, unix.WUNTRACED, nil)
		if err == unix.EINTR {
			continue
		}
		if err == unix.ECHILD && st.idle {
			st.mu.Lock()
			stopping := st.stopping
			st.mu.Unlock()
			if stopping {
				break // stopped, and every command has ended
			}
			<-st.wake // nothing to wait for until a command starts or a stop comes
			continue
		}
		if err != nil {
			return 125 // ECHILD before the agent was seen: cannot happen
		}
		if pid != st.agent || st.idle {
			if ws.Exited() || ws.Signaled() {
				st.execEnded(conn, pid, ws)
			} else if ws.Stopped() {
				st.execStopped(conn, pid, ws)
			}
			continue
		}
		if ws.Stopped() {
			_ = conn.Send(Message{Type: MsgStopped, Signal: int(ws.StopSignal())})
			continue
		}
		if ws.Exited() || ws.Signaled() {
			status = ws
			break
		}
	}
	if st.traceEnd != nil {
		st.traceEnd("agent exit")
	}
	// No command is exec'd from here on (exec checks this under mu, in the
	// same critical section as its fork): one forked after the kill below
	// would outlive it, and one forked after the last wait4 would run
	// while the supervisor's exit check does.
	st.mu.Lock()
	st.stopping = true
	st.mu.Unlock()
	msg := Message{Type: MsgExit}
	code := status.ExitStatus()
	if status.Signaled() {
		msg.Signal = int(status.Signal())
		code = 128 + msg.Signal
	}
	msg.Code = code
	// The kill, the reap, the report and init's exit in one visit to the
	// agent's thread: the kill must come from there, and the rest needs
	// no other thread, so the main goroutine's thread is not woken in
	// between (a thread wake-up, a wait for a CPU under load, on the path
	// from the agent's exit to the supervisor's exit check, or, after the
	// report, to init's exit, which the supervisor's end waits for).
	st.onAgentThread(func() {
		if st.degraded {
			// No pid namespace: kill(-1) would reach every process of the
			// user's. Init is the subreaper of all the agent started, so its
			// descendants are exactly what is left of the sandbox.
			killDescendants()
		} else {
			// pid 1's kill(-1) reaches every other process of the namespace:
			// daemons, double forks and setsid'd children included.
			_ = unix.Kill(-1, unix.SIGKILL)
		}
		// Every child reaped, until the kernel says none is left (ECHILD):
		// the exit message below is sent only then, and the supervisor
		// takes it as its word that every other process of the sandbox is
		// gone (its exit check starts on it, while the kernel tears init
		// down). A reaped process has run its last system call: its files
		// are closed, its writes done. As subreaper (or pid 1), init
		// inherits every orphan, so none can outlive this loop unseen. (Any
		// thread of init reaps any child of init: wait4 waits for the
		// children of the whole thread group.)
		for {
			_, err := unix.Wait4(-1, nil, 0, nil)
			if err == unix.ECHILD {
				break
			}
			if err != nil && err != unix.EINTR {
				// Cannot happen (no pointer, valid options); never taken
				// for "none left".
				time.Sleep(time.Millisecond)
			}
		}
		if st.traceEnd != nil {
			st.traceEnd("reaped")
		}
		_ = conn.Send(msg)
		os.Exit(code) // InitMain's exit, from here (see above)
	})
	return code
}

// exec starts one more command in the sandbox on the supervisor's request
// (jail exec) and answers with its pid, or why it could not start. It is
// forked from the agent's thread, so it is exactly as walled as the agent:
// that thread's Landlock domain and cgroup namespace, init's seccomp
// filters (the exec-notify one included: its execs reach the same
// listener, hence the same trail), capabilities, no_new_privs, rlimits and
// cgroup, all inherited across fork; the agent-only rlimits are set on it
// as on the agent.
func (st *initState) exec(conn *Conn, es *ExecSpec, files []*os.File) {
	reply := Message{Type: MsgExecStarted, ID: es.ID}
	fail := func(code int, err error) {
		reply.Error, reply.ExitCode = err.Error(), code
		_ = conn.Send(reply)
	}
	if len(es.Argv) == 0 {
		fail(125, errors.New("no command"))
		return
	}
	if es.Deadline != 0 && MonotonicNS() > es.Deadline {
		// The supervisor has told the client the command did not start
		// (init was stopped or starved meanwhile): starting it now would run
		// a command nobody waits for, on the client's stdio.
		fail(125, errors.New("the request came after its deadline"))
		return
	}
	if !es.Tty && len(files) != 3 {
		fail(125, fmt.Errorf("exec: %d stdio fds, want 3", len(files)))
		return
	}
	if es.ReportChild && !clonePidfd() {
		// Fail closed, at once: without kcmp the supervisor tells the
		// command from a process the agent made with clone(CLONE_PARENT)
		// only by this report (review17d). Without CLONE_PIDFD there is
		// none to send: it waited its whole start bound (15 s) for it,
		// then let the command's exec go unmatched.
		fail(125, errors.New("jail exec needs Linux 5.3 or later where jail cannot use kcmp (it tells the command from the agent's processes by a pidfd); not started: run the sandbox on a newer kernel, or where kcmp is allowed"))
		return
	}
	for _, kv := range st.netEnv {
		name, _, _ := strings.Cut(kv, "=")
		if !hasEnv(es.Env, name) {
			es.Env = append(es.Env, kv)
		}
	}
	path, err := lookPathIn(es.Argv[0], es.Env, es.Cwd)
	if err != nil {
		code := 125
		var se *setupError
		if errors.As(err, &se) {
			code = se.code
		}
		fail(code, err)
		return
	}
	var master, slave *os.File
	stdio := files
	if es.Tty {
		if master, slave, err = openPty(); err != nil {
			fail(125, st.startLimits.said(err))
			return
		}
		defer slave.Close()
		defer master.Close()
		stdio = []*os.File{slave, slave, slave}
	}
	st.mu.Lock()
	if st.stopping {
		st.mu.Unlock()
		fail(125, errors.New("the sandbox is stopping"))
		return
	}
	var pid int
	var pidfd *int
	endReport := func() {}
	if es.ReportChild {
		pidfd = new(int)
		*pidfd = -1 // what ForkExec leaves where CLONE_PIDFD is unsupported
		endReport = reportChild(conn, es.ID)
	}
	st.onAgentThread(func() { pid, err = startCommand(es, path, stdio, pidfd) })
	endReport()
	if pidfd != nil && *pidfd >= 0 {
		unix.Close(*pidfd)
	}
	if err == nil {
		st.execs[pid] = es.ID
	}
	st.mu.Unlock()
	if err != nil {
		code := 126
		var se *setupError
		if errors.As(err, &se) {
			code = se.code
		}
		fail(code, st.startLimits.said(err))
		return
	}
	for _, rl := range st.agentRlimits {
		lim := unix.Rlimit{Cur: rl.Cur, Max: rl.Max}
		if perr := unix.Prlimit(pid, rl.Resource, &lim, nil); perr != nil {
			// Fail closed: no command runs without the sandbox's limits.
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
	select {
	case st.wake <- struct{}{}:
	default:
	}
	reply.Pid = pid
	if master != nil {
		_ = conn.Send(reply, master)
		return
	}
	_ = conn.Send(reply)
}

// startLimits are init's process and open-file soft limits when it set up.
type startLimits struct{ nproc, nofile uint64 }

func readStartLimits() startLimits {
	var l startLimits
	var r unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NPROC, &r) == nil {
		l.nproc = r.Cur
	}
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &r) == nil {
		l.nofile = r.Cur
	}
	return l
}

// said adds to a start that failed for want of processes or fds that
// init's own limit for them is lower than when it set up: the agent runs
// as init's uid and can lower it through one of init's thread ids (the
// agent filter refuses pid 1 only), and "resource temporarily
// unavailable" alone does not say whose limit, nor what to do. The
// sandbox's own bounds (its cgroup's pids.max, the limits jail set) are
// not named here: they were there from the start.
func (l startLimits) said(err error) error {
	res, what, start := unix.RLIMIT_NPROC, "process limit", l.nproc
	switch {
	case errors.Is(err, unix.EAGAIN):
	case errors.Is(err, unix.EMFILE):
		res, what, start = unix.RLIMIT_NOFILE, "open-file limit", l.nofile
	default:
		return err
	}
	var r unix.Rlimit
	if unix.Getrlimit(res, &r) != nil || r.Cur >= start {
		return err
	}
	return fmt.Errorf("%w (init's %s is %d, %d when it started: lowered from inside the sandbox)", err, what, r.Cur, start)
}

// execEnded reports an exec'd command's end; other children (orphans
// reparented to init) are only reaped.
func (st *initState) execEnded(conn *Conn, pid int, ws unix.WaitStatus) {
	st.mu.Lock()
	id, ok := st.execs[pid]
	delete(st.execs, pid)
	st.mu.Unlock()
	if !ok {
		return
	}
	m := Message{Type: MsgExecExit, ID: id, Code: ws.ExitStatus()}
	if ws.Signaled() {
		m.Signal = int(ws.Signal())
		m.Code = 128 + m.Signal
	}
	_ = conn.Send(m)
}

// execStopped reports an exec'd command that stopped (a shell's suspend
// builtin, a SIGSTOP): its jail exec may stop with it (sandbox:
// selfstop_linux.go). Other children's stops are not reported.
func (st *initState) execStopped(conn *Conn, pid int, ws unix.WaitStatus) {
	st.mu.Lock()
	id, ok := st.execs[pid]
	st.mu.Unlock()
	if ok {
		_ = conn.Send(Message{Type: MsgStopped, ID: id, Signal: int(ws.StopSignal())})
	}
}

// stop asks everything in the sandbox to end (SIGTERM): jail stop. An idle
// init then ends when no child is left; with an agent, its end ends all.
func (st *initState) stop() {
	st.mu.Lock()
	st.stopping = true
	groups := make([]int, 0, len(st.execs))
	for pid := range st.execs {
		groups = append(groups, pid)
	}
	st.mu.Unlock()
	st.onAgentThread(func() {
		if st.idle && !st.degraded {
			// pid 1's kill(-1) reaches every process of the namespace
			// (daemons a command left included), never init itself.
			_ = unix.Kill(-1, unix.SIGTERM)
		}
		if st.agent > 0 {
			_ = unix.Kill(st.agent, unix.SIGTERM)
		}
		for _, g := range groups {
			_ = unix.Kill(-g, unix.SIGTERM)
		}
	})
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// lookPathIn is lookPath for a command that starts in dir: a relative
// path with a slash is resolved against dir, not init's own cwd.
func lookPathIn(file string, env []string, dir string) (string, error) {
	if strings.Contains(file, "/") && !filepath.IsAbs(file) && dir != "" {
		p, err := lookPath(filepath.Join(dir, file), env)
		if err != nil {
			return "", err
		}
		return p, nil
	}
	return lookPath(file, env)
}

// startCommand forks and execs an exec'd command with the given stdio.
// With a pty it leads a session of its own with the pty as its
// controlling terminal; otherwise it gets a process group of its own in
// init's session, which has no terminal, and its stdio are never one (the
// supervisor refuses a terminal fd): it cannot reach a host terminal, so
// TIOCSTI-style injection (CVE-2017-5226) has nothing to aim at.
func startCommand(es *ExecSpec, path string, stdio []*os.File, pidfd *int) (int, error) {
	attr := &syscall.ProcAttr{
		Dir:   es.Cwd,
		Env:   es.Env,
		Files: []uintptr{stdio[0].Fd(), stdio[1].Fd(), stdio[2].Fd()},
		Sys:   &syscall.SysProcAttr{},
	}
	if es.Tty {
		attr.Sys.Setsid = true
		attr.Sys.Setctty = true
		attr.Sys.Ctty = 0 // the child's fd 0, the pty's slave
	} else {
		attr.Sys.Setpgid = true
	}
	// CLONE_PIDFD: the pidfd is in init's fd table before the child runs a
	// single instruction (the kernel installs it in clone), for
	// reportChild to find while the fork waits for the child's exec.
	attr.Sys.PidFD = pidfd
	// Its own child subreaper (reaper_linux.go): what it starts and
	// orphans stays its child while it lives, for proctree's kill.
	return withAgentTimerSlack(func() (int, error) { return forkExecReaper(path, es.Argv, attr) })
}

// reportChild sends the supervisor a copy of each pidfd that appears in
// init's fd table from now until the returned func is called: the one
// clone(CLONE_PIDFD) puts there for the command being forked (init makes
// no other meanwhile). The fork is a vfork (CLONE_VM|CLONE_VFORK): the
// forking thread waits in clone until the child's exec completes, and the
// exec waits for the supervisor's answer, so the report must come from
// another thread, and before the answer: where the supervisor cannot use
// kcmp, it is how it tells the command from a process the agent made with
// clone(CLONE_PARENT), which is init's thread's fresh child too and took
// the command's place (its limits, its argv in the trail: review17d).
// init runs with one P, which the forking goroutine keeps through the
// vfork (a raw system call, signals blocked: it cannot be stopped): a
// second P for the watch meanwhile, and no garbage collection, whose
// stop-the-world would wait for that P, and the watch with it, until the
// supervisor gave up on the report. Nothing here takes syscall.ForkLock,
// which the fork holds.
func reportChild(conn *Conn, id int) (end func()) {
	seen := map[int]bool{}
	for _, fd := range pidfds() {
		seen[fd] = true // init's own from before: not the command's
	}
	gcMu.Lock()
	gcPrev := debug.SetGCPercent(-1) // returns once a cycle under way is done
	prev := runtime.GOMAXPROCS(2)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTimer(time.Hour)
		defer tick.Stop()
		for i := 0; ; i++ {
			for _, fd := range pidfds() {
				if seen[fd] {
					continue
				}
				seen[fd] = true
				// A copy: the fork's own pidfd is closed once it returns.
				nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
				if err != nil {
					continue
				}
				f := os.NewFile(uintptr(nfd), "pidfd")
				_ = conn.Send(Message{Type: MsgExecChild, ID: id}, f)
				f.Close()
			}
			if i < 20 {
				// The child's exec comes in microseconds.
				select {
				case <-stop:
					return
				default:
					runtime.Gosched()
				}
				continue
			}
			// Then a scan every 200 us (init's timer slack: about a
			// millisecond), and the fork's return ends it at once.
			tick.Reset(200 * time.Microsecond)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		runtime.GOMAXPROCS(prev)
		debug.SetGCPercent(gcPrev)
		gcMu.Unlock()
	}
}

// pidfds lists init's fds that are pidfds.
func pidfds() []int {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var out []int
	buf := make([]byte, 32)
	for _, n := range names {
		fd, err := strconv.Atoi(n)
		if err != nil || fd == int(d.Fd()) {
			continue
		}
		k, err := unix.Readlink("/proc/self/fd/"+n, buf)
		if err == nil && string(buf[:k]) == "anon_inode:[pidfd]" {
			out = append(out, fd)
		}
	}
	return out
}

// hasEnv tells whether env sets name.
func hasEnv(env []string, name string) bool {
	for _, kv := range env {
		if n, _, _ := strings.Cut(kv, "="); n == name {
			return true
		}
	}
	return false
}

// agentTimerSlack is the spec's AgentTimerSlack: the timer slack of every
// process init starts (0: the one init has).
var agentTimerSlack int64

// forkExec starts path, a failure being the exit code the shell would give
// (127: not found, 126: found but not runnable) with the reason.
func forkExec(path string, argv []string, attr *syscall.ProcAttr) (int, error) {
	return withAgentTimerSlack(func() (int, error) {
		pid, err := syscall.ForkExec(path, argv, attr)
		if err != nil {
			code := 126
			if errors.Is(err, os.ErrNotExist) {
				code = 127
			}
			return 0, &setupError{code, fmt.Errorf("exec %s: %w", path, err)}
		}
		return pid, nil
	})
}

// withAgentTimerSlack runs fork with the forking thread's timer slack set
// to agentTimerSlack: the child inherits it, jail's caller's, not init's
// own (InitTimerSlack), for the fork only, on a thread held for it.
func withAgentTimerSlack(fork func() (int, error)) (int, error) {
	if agentTimerSlack > 0 {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		_ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(agentTimerSlack), 0, 0, 0)
		defer unix.Prctl(unix.PR_SET_TIMERSLACK, InitTimerSlack, 0, 0, 0)
	}
	return fork()
}

// clonePidfd tells whether clone(CLONE_PIDFD) gives init a pidfd of its
// fork child here, probed once by such a clone (probeClonePidfd). A
// variable: tests force the answer.
var clonePidfd = sync.OnceValue(probeClonePidfd)

// probeClonePidfd makes the clone startCommand makes, with CLONE_PIDFD,
// of a child that exits at once, and tells whether a pidfd came back. Not
// pidfd_open: an outer seccomp filter (jail inside jail, a container's)
// that refuses pidfd_open alone made a jail exec refused that would have
// worked, and one that refuses the clone's CLONE_PIDFD only passed it.
// A kernel before 5.2 ignores the flag (once CLONE_PID) and leaves the
// pidfd at -1: false too.
func probeClonePidfd() bool {
	pidfd := int32(-1)
	pid, errno := cloneExitAtOnce(&pidfd)
	if errno != 0 {
		return false
	}
	for {
		// init's reaper may take the child first: ECHILD then.
		_, err := unix.Wait4(int(pid), nil, 0, nil)
		if err != unix.EINTR {
			break
		}
	}
	if pidfd < 0 {
		return false
	}
	unix.Close(int(pidfd))
	return true
}

// cloneExitAtOnce clones a child that only exits: a fork, not a vfork
// sharing this stack (CLONE_VM needs the runtime's own assembly, which
// returns without the child's calls overwriting the parent's frames);
// CLONE_VFORK keeps the parent waiting until the child is gone. nosplit:
// the child, a copy of one thread of a Go program, must not enter the
// runtime (a stack growth) before it exits.
//
//go:nosplit
//go:norace
func cloneExitAtOnce(pidfd *int32) (uintptr, syscall.Errno) {
	a1, a2 := uintptr(unix.CLONE_VFORK|unix.CLONE_PIDFD|unix.SIGCHLD), uintptr(0)
	if runtime.GOARCH == "s390x" {
		a1, a2 = a2, a1 // clone's first two arguments are swapped there
	}
	pid, _, errno := syscall.RawSyscall6(unix.SYS_CLONE, a1, a2, uintptr(unsafe.Pointer(pidfd)), 0, 0, 0)
	if errno != 0 || pid != 0 {
		return pid, errno
	}
	for {
		syscall.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
}
