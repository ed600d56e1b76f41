package ns

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/procstat"
	"github.com/jail-sandbox/jail/slack"
)

// ErrUserNS means the kernel refused to create a user namespace for us.
var ErrUserNS = errors.New("cannot create a user namespace")

// Config says how to start one sandbox.
type Config struct {
	Spec *Spec
	// Rootful is set when jail runs as root: inside uid 0 maps to NobodyID and
	// bind sources are idmapped mounts prepared here.
	Rootful bool
	// NetHost keeps the host's network namespace (--net host).
	NetHost bool
	// CgroupFD, when >= 0, starts init directly inside that cgroup v2 directory
	// (clone3 CLONE_INTO_CGROUP): no window in which it runs unlimited.
	CgroupFD int
	Stdin    *os.File
	Stdout   *os.File
	Stderr   *os.File
	// Degraded starts init without any namespace (see Spec.Degraded).
	Degraded bool
	// Exe, when set, is the program to exec as init instead of this binary
	// (/proc/self/exe): the lean init's checked copy (package initbin), an
	// O_PATH descriptor. Begin execs it through /proc/self/fd, so that
	// what was checked is what runs; should that exec fail, Begin execs
	// this binary instead (Starting.ExeErr says why).
	Exe *os.File
	// Entry says that Exe is the lean init with its own ELF entry (amd64,
	// built by make build; initbin.HasEntry): Begin then starts init
	// through that entry, without forking the supervisor (entry_linux.go).
	// Should that fail before init exists, Begin starts init the old way
	// (Starting.EntryErr says why). Not in degraded mode (no namespace:
	// Go's fork is already a vfork there).
	Entry bool
	// JoinThread, when set, puts init in the sandbox's cgroup v1 groups
	// from its birth: it is called on init's spawner thread (locked, and
	// never the process's main thread: see goSpawner) just before init's
	// clone, moves that thread into the groups, and returns leave, called
	// right after the clone, which moves the thread back (cgroup.Group's
	// JoinThread: a thread moving itself skips the kernel's global lock and
	// its RCU grace period, which writing init's pid costs). Should either
	// fail, Begin kills what it started, ends the thread (Go ends the
	// thread of a locked goroutine that returns: a thread left in a group
	// leaves it so) and fails with a *JoinError, without falling back.
	JoinThread func() (leave func() error, err error)
	// BeforeSpec runs after init exists (its pid is known, it waits for its
	// spec) and before the spec is sent: the place to put it into a v1 cgroup.
	BeforeSpec func(pid int) error
}

// Sandbox is a started sandbox, seen from the supervisor.
type Sandbox struct {
	Pid  int
	Conn *Conn
	done chan struct{}
	ws   syscall.WaitStatus
	ru   *syscall.Rusage
	werr error
}

// Wait blocks until init has exited and returns its wait status. When init
// has exited, the kernel has already killed and reaped every other process of
// its pid namespace.
func (s *Sandbox) Wait() (syscall.WaitStatus, error) {
	<-s.done
	return s.ws, s.werr
}

// Rusage is init's resource usage when it exited, which includes every
// process it reaped: the whole sandbox's cpu time and peak RSS. Nil before.
func (s *Sandbox) Rusage() *syscall.Rusage {
	<-s.done
	return s.ru
}

// Done is closed when init has exited.
func (s *Sandbox) Done() <-chan struct{} { return s.done }

// Start clones init into new namespaces and hands it the spec.
func Start(cfg Config) (*Sandbox, error) {
	st, err := Begin(cfg)
	if err != nil {
		return nil, err
	}
	return st.Finish(cfg.Spec)
}

// Starting is init cloned and exec'd, waiting for its spec: it has run
// nothing but jail's own init code, holds no file of the sandbox's and
// reads nothing until Finish sends the spec (or Abort kills it).
type Starting struct {
	s          *Sandbox
	parent     *os.File
	rootful    bool
	degraded   bool
	beforeSpec func(pid int) error
	done       bool
	netSent    bool // Network sent init its network configuration
	// ExeErr is why Config.Exe could not be exec'd (init is this binary
	// then); nil when it was, or when there was none.
	ExeErr error
	// Entry: init was started by the lean init's entry (Config.Entry),
	// without a fork of the supervisor. EntryErr is why that failed, when
	// it was tried and init was then started the old way.
	Entry    bool
	EntryErr error
}

// Pid is init's pid (in the supervisor's pid namespace).
func (st *Starting) Pid() int { return st.s.Pid }

// Begin clones init (cfg.Spec is not needed yet: Finish sends it), so that
// init's exec and Go start run while the supervisor still plans. Until
// Finish, init only waits on its socket, or sets up the network that
// Network gave it; cfg.BeforeSpec (joining a v1
// cgroup) runs in Finish, before the spec, as it did in Start. With
// cfg.Entry the lean init's own entry clones it (entry_linux.go: this
// process is not forked); should that fail before init exists, the old
// way (a fork) starts it.
func Begin(cfg Config) (*Starting, error) {
	var entryErr error
	if cfg.Entry && cfg.Exe != nil && !cfg.Degraded {
		s, parent, err := spawnEntry(cfg)
		if err == nil {
			s.Conn = NewConn(parent)
			return &Starting{s: s, parent: parent, rootful: cfg.Rootful, beforeSpec: cfg.BeforeSpec, Entry: true}, nil
		}
		if je := (*JoinError)(nil); errors.As(err, &je) {
			// The cgroup, not the entry, failed: the old way would
			// fail alike.
			return nil, err
		}
		// Nothing was started (or what was finds its socket closed and
		// exits): the old way, which fails again, with the error the
		// user must see, where the entry's namespaces could not be made.
		entryErr = err
	}
	parent, child, err := Socketpair()
	if err != nil {
		return nil, err
	}
	defer child.Close()
	attr := cloneAttr(cfg.Rootful, cfg.NetHost)
	if cfg.Degraded {
		// No namespace, no id map, the caller's credentials: only the
		// process attributes that do not need a namespace.
		attr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setsid: true}
	}
	if cfg.CgroupFD >= 0 {
		attr.UseCgroupFD = true
		attr.CgroupFD = cfg.CgroupFD
	}
	s, err := spawn(cfg, attr, child, cfg.Exe)
	var exeErr error
	if je := (*JoinError)(nil); errors.As(err, &je) {
		parent.Close()
		return nil, err
	}
	if err != nil && cfg.Exe != nil {
		// The lean init did not start (an exec error of the copy, or the
		// clone itself): this binary, as without it. A clone that cannot
		// work fails again here, with the error the user must see.
		exeErr = err
		s, err = spawn(cfg, attr, child, nil)
	}
	if je := (*JoinError)(nil); errors.As(err, &je) {
		parent.Close()
		return nil, err
	}
	if err != nil {
		parent.Close()
		return nil, startError(err)
	}
	s.Conn = NewConn(parent)
	return &Starting{s: s, parent: parent, rootful: cfg.Rootful, degraded: cfg.Degraded, beforeSpec: cfg.BeforeSpec, ExeErr: exeErr, EntryErr: entryErr}, nil
}

// InitTimerSlack is init's timer slack (ns): how late a sleep of init's
// may end, so that the kernel can fold its wake-ups together. A millisecond
// bounds what it delays (sysmon's hand-off of a processor stuck in a
// system call), and init waits on descriptors, not on timers.
const InitTimerSlack = 1_000_000

// spawnerThread makes the calling goroutine's thread init's spawner, for
// init's whole life: both ways of starting init (spawn, spawnEntry) call
// it before they start anything, so that init inherits the same from it.
func spawnerThread() {
	// Pdeathsig is tied to the thread that forked (init's parent): keep
	// this goroutine on its thread for init's whole life.
	runtime.LockOSThread()
	// Init inherits this thread's timer slack from its clone on, its
	// Go runtime's monitor thread (sysmon) included: that thread
	// sleeps 20 us at a time while anything runs, about 90 wake-ups
	// of init in a short run, each a context switch (costly in a VM).
	// The thread is init's alone and ends with it (it stays locked),
	// so no other goroutine inherits the setting; init gives every
	// process it starts the slack jail had (Spec.AgentTimerSlack).
	// The lean init's entry inherits it too, init from its clone, and
	// execve keeps it.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, InitTimerSlack, 0, 0, 0)
}

// dropHostGroups empties the calling thread's supplementary groups, for
// a rootful start (cfg.Rootful, not degraded), before it starts anything:
// init (the entry's clone, or the fork) takes its credentials from this
// thread. Without it init and every process of the sandbox keep the
// caller's host groups (root's 0, adm, ... under sudo): setgroups(2) is
// denied in the sandbox's user namespace, so nothing inside can drop
// them, the gid map names only 0 (host nobody), and they still count in
// every permission check of a host file bound without an id map (the
// root file system: a file readable by group 0 alone), shown inside as
// 65534. The raw system call changes this thread alone (Go's and libc's
// setgroups change every thread): the thread is init's spawner for
// init's whole life and ends with it (spawnerThread), so the supervisor
// keeps its groups and no other goroutine runs here. A refusal fails the
// start: a rootful start already needs CAP_SETGID for init's gid map.
func dropHostGroups(cfg Config) error {
	if !cfg.Rootful || cfg.Degraded {
		return nil
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 0, 0, 0); e != 0 {
		return fmt.Errorf("drop the supplementary groups of init's spawner thread (setgroups): %w", e)
	}
	return nil
}

// JoinError is a failure to move init's spawner thread into the sandbox's
// cgroups or back out (Config.JoinThread): nothing was started, or what
// was is killed and reaped, and the thread has ended.
type JoinError struct {
	Err error
	tid int // the spawner thread, which Begin waits to end (joinFailed)
}

func (e *JoinError) Error() string {
	return "start init inside the sandbox's cgroup: " + e.Err.Error()
}
func (e *JoinError) Unwrap() error { return e.Err }

// bornIn runs start (init's clone, or the entry's) with the calling thread
// inside the sandbox's cgroups when join is set, and moves it back right
// after. Should the move back fail, undo kills and reaps what start
// started: no sandbox runs whose supervisor thread is half inside. An
// error from join or leave is a *JoinError; the caller then ends the
// thread (its goroutine returns, locked).
func bornIn(join func() (func() error, error), start func() error, undo func()) error {
	if join == nil {
		return start()
	}
	leave, err := join()
	if err != nil {
		return &JoinError{err, unix.Gettid()}
	}
	err = start()
	if lerr := leave(); lerr != nil {
		if err == nil {
			undo()
		}
		return &JoinError{lerr, unix.Gettid()}
	}
	return err
}

// joinFailed is a spawner's error as Begin returns it: after a JoinError,
// once the spawner thread has ended. Its goroutine returned locked, so Go
// ends the thread, but only after the error was sent: until then it may
// still be in the sandbox's groups, where the caller's removal (a v1
// freeze and kill) would stop it or find it. A thread that has exited has
// left its groups (cgroup_exit), and /proc/self/task/TID is gone once it
// is reaped, which for a thread that is not the leader is at its exit.
func joinFailed(err error) error {
	je := (*JoinError)(nil)
	if !errors.As(err, &je) {
		return err
	}
	for deadline := time.Now().Add(5 * time.Second); je.tid > 0; time.Sleep(100 * time.Microsecond) {
		if _, serr := os.Stat(fmt.Sprintf("/proc/self/task/%d", je.tid)); errors.Is(serr, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (and the thread %d did not end)", je, je.tid)
		}
	}
	return je
}

// onMainThread tells whether the calling (locked) thread is the process's
// main thread (a test hook).
var onMainThread = func() bool { return unix.Gettid() == unix.Getpid() }

// goSpawner runs f on a new goroutine, which f locks to its thread
// (spawnerThread). With offMain, that thread is never the process's main
// thread: f may move it into the sandbox's cgroups (Config.JoinThread),
// and should it fail to move back, it must end; Go never ends the main
// thread, it parks it for good (runtime.mexit), which would keep it in
// the group (and, a thread group's leader, list jail itself in the
// group's cgroup.procs).
func goSpawner(offMain bool, f func()) {
	if !offMain {
		go f()
		return
	}
	go func() {
		runtime.LockOSThread()
		if !onMainThread() {
			f() // its own lock stacks on this one: the thread stays f's
			return
		}
		// Hand f to another thread: while this goroutine keeps the main
		// thread locked and waits, the new one cannot run there.
		locked := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(locked)
			f()
		}()
		<-locked
		runtime.UnlockOSThread()
	}()
}

// initEnv is init's whole environment (the agent's is the spec's, built
// apart). GOMAXPROCS=1: init's runtime starts with one P, so one mcache
// (each P's own spans: a fresh page per size class and P) and no thread
// started to run a second P at its package init; InitMain keeps it at 1.
var initEnv = []string{"GOMAXPROCS=1"}

// spawn clones and execs init: exe (the lean init, fd 4 of the child,
// exec'd as /proc/self/fd/4 after the clone; init closes it first thing,
// with every fd above its socket) or, when nil, this binary.
func spawn(cfg Config, attr *syscall.SysProcAttr, child, exe *os.File) (*Sandbox, error) {
	cmd := &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{InitArg0},
		Env:         initEnv,
		Stdin:       cfg.Stdin,
		Stdout:      cfg.Stdout,
		Stderr:      cfg.Stderr,
		ExtraFiles:  []*os.File{child},
		SysProcAttr: attr,
	}
	if exe != nil {
		// A path into the child's own fd table, not a name in a
		// directory: the very file Open checked is exec'd.
		cmd.Path = fmt.Sprintf("/proc/self/fd/%d", initFD+1)
		cmd.ExtraFiles = append(cmd.ExtraFiles, exe)
	}
	s := &Sandbox{done: make(chan struct{})}
	started := make(chan error, 1)
	goSpawner(cfg.JoinThread != nil, func() {
		spawnerThread()
		if err := dropHostGroups(cfg); err != nil {
			started <- err
			close(s.done)
			return
		}
		err := bornIn(cfg.JoinThread, cmd.Start, func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		if err != nil {
			// A locked goroutine that returns ends its thread: after
			// a JoinError nothing of jail's stays in the sandbox's groups.
			started <- err
			close(s.done)
			return
		}
		started <- nil
		err = cmd.Wait()
		if cmd.ProcessState != nil {
			s.ws = cmd.ProcessState.Sys().(syscall.WaitStatus)
			s.ru, _ = cmd.ProcessState.SysUsage().(*syscall.Rusage)
			err = nil
		}
		s.werr = err
		close(s.done)
	})
	if err := <-started; err != nil {
		return nil, joinFailed(err)
	}
	s.Pid = cmd.Process.Pid
	return s, nil
}

// Abort kills an init that has not had its spec, and waits for it: nothing
// of the sandbox ran. Safe to call after Finish (then it does nothing).
func (st *Starting) Abort() {
	if st == nil || st.done {
		return
	}
	st.done = true
	// SIGKILL before the socket closes: init, seeing EOF, would say "no
	// spec" on the user's terminal.
	_ = unix.Kill(st.s.Pid, unix.SIGKILL)
	<-st.s.done
	st.parent.Close()
}

// Network hands init the network hook's configuration ahead of its spec,
// so that init sets the network up (the proxy's namespace, the veth pair,
// the nftables rules: 5-9 ms) while the supervisor plans, instead of after
// the spec. The spec must carry the same configuration in
// Hooks[HookNetwork]; init refuses one that does not. It sends nothing
// (sent is false) when init is not born inside its cgroup (BeforeSpec
// joins it at Finish): init does nothing of the sandbox's before that, the
// network setup included.
func (st *Starting) Network(cfg []byte) (sent bool, err error) {
	if st.done || st.beforeSpec != nil || st.degraded || st.netSent {
		return false, nil
	}
	m := Message{Type: MsgNetwork, Spec: &Spec{Hooks: map[string][]byte{HookNetwork: cfg}}}
	if err := st.s.Conn.Send(m); err != nil {
		return false, fmt.Errorf("send init its network configuration: %w", err)
	}
	st.netSent = true
	return true, nil
}

// Finish hands init its spec (after BeforeSpec) and returns the running
// sandbox; on an error init is killed.
func (st *Starting) Finish(spec0 *Spec) (*Sandbox, error) {
	if st.done {
		return nil, errors.New("start the sandbox: init was already handed its spec or killed")
	}
	s := st.s
	fail := func(err error) (*Sandbox, error) {
		st.Abort()
		return nil, err
	}
	select {
	case <-s.done:
		// init died before its spec (killed from outside): nothing to hand.
		return fail(fmt.Errorf("start the sandbox: init exited before its spec (%v)", s.ws))
	default:
	}
	if st.beforeSpec != nil {
		if err := st.beforeSpec(s.Pid); err != nil {
			return fail(err)
		}
	}
	spec := *spec0
	var files []*os.File
	var err error
	spec.Degraded = st.degraded
	// What jail's caller gave, for the agent (see spawn): not this
	// thread's, which is the supervisor's own (package slack) or, on
	// init's spawner, init's.
	spec.AgentTimerSlack = slack.Caller()
	if st.rootful && !st.degraded {
		spec.Mounts, files, err = idmapBinds(s.Pid, spec.Mounts)
		if err != nil {
			return fail(err)
		}
	}
	err = s.Conn.Send(Message{Type: MsgSpec, Spec: &spec}, files...)
	for _, f := range files {
		f.Close()
	}
	if err != nil {
		return fail(err)
	}
	st.done = true
	return s, nil
}

// cloneAttr is how init is cloned: the namespaces, the id maps and the
// credentials. Probe uses the very same, so that `jail doctor` tries what a
// run does.
func cloneAttr(rootful, netHost bool) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{
		Cloneflags: cloneFlags(netHost),
		// Init dies with the supervisor (and with init the whole pid
		// namespace): the kernel sends SIGKILL when the thread that started
		// it exits, so Start and Wait run on one locked thread below.
		Pdeathsig: syscall.SIGKILL,
		// A new session: init and the agent have no controlling terminal of
		// the host's, and terminal signals go to jail only.
		Setsid: true,
		// setgroups(2) stays denied in the sandbox: an unprivileged user ns
		// requires it, and it stops dropping groups that guard files (the
		// "negative group permissions" problem, CVE-2014-8989).
		GidMappingsEnableSetgroups: false,
	}
	attr.UidMappings, attr.GidMappings = idMaps(rootful)
	if rootful {
		// Writing the map does not change the child's credentials: it is still
		// host root (kuid 0, unmapped inside). setresuid(0) inside the new
		// user ns makes it kuid 65534 for real, so root's privileges on the
		// host are gone before init even execs.
		attr.Credential = &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true}
	} else {
		// A non-zero uid loses its capabilities at execve; ambient
		// capabilities carry init's (full, user-ns-scoped) set across its own
		// exec. Init clears them all before the agent starts.
		for c, last := 0, lastCap(); c <= last; c++ {
			attr.AmbientCaps = append(attr.AmbientCaps, uintptr(c))
		}
	}
	return attr
}

// cloneFlags are init's namespaces: every one but the network's with
// --net host (NetHost). Both ways of starting init make exactly these.
func cloneFlags(netHost bool) uintptr {
	flags := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID |
		unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP)
	if !netHost {
		flags |= unix.CLONE_NEWNET
	}
	return flags
}

// idMaps are init's user namespace's uid and gid maps: started by root,
// the namespace's root is host nobody (NobodyID) and nothing else is
// mapped; started by a user, that user is mapped to itself, alone.
func idMaps(rootful bool) (uids, gids []syscall.SysProcIDMap) {
	if rootful {
		return []syscall.SysProcIDMap{{ContainerID: 0, HostID: NobodyID, Size: 1}},
			[]syscall.SysProcIDMap{{ContainerID: 0, HostID: NobodyID, Size: 1}}
	}
	uid, gid := os.Getuid(), os.Getgid()
	return []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		[]syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
}

func startError(err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.EINVAL) {
		// The caller (the supervisor) names the cause and the fix: it
		// knows the host (package hostcheck), this package does not.
		return fmt.Errorf("%w: %w", ErrUserNS, err)
	}
	return fmt.Errorf("start the sandbox: %w", err)
}

// idmapBinds prepares, as root on the host, every bind source as a detached
// mount idmapped through the sandbox's user namespace: files owned by host
// root appear owned by the sandbox's uid 0 (host nobody), and what it creates
// is stored as owned by root, as if root had run the agent. Other owners are
// unmapped inside (read-only to the agent unless world-writable).
func idmapBinds(pid int, mounts []Mount) ([]Mount, []*os.File, error) {
	userns, err := openUserNS(pid)
	if err != nil {
		return nil, nil, err
	}
	defer userns.Close()
	out := make([]Mount, len(mounts))
	copy(out, mounts)
	var files []*os.File
	for i, m := range out {
		if m.Kind != KindBind && m.Kind != KindROBind {
			continue
		}
		fd, err := idmapped(m.BindSource(), m.NoLinks, int(userns.Fd()))
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, nil, err
		}
		if len(files) >= maxFDs-1 { // one place is kept for a large spec's memfd
			for _, f := range files {
				f.Close()
			}
			unix.Close(fd)
			return nil, nil, fmt.Errorf("too many bind mounts (%d+): jail started by root passes each as a file descriptor, at most %d; use fewer read/write paths", len(files), maxFDs-1)
		}
		out[i].FD = len(files)
		files = append(files, os.NewFile(uintptr(fd), m.Path))
	}
	return out, files, nil
}

// pfForkNoExec is PF_FORKNOEXEC, a task's flag (/proc/PID/stat field 9)
// from its fork until its execve.
const pfForkNoExec = 0x40

// execWait bounds openUserNS' wait for init's execve: init is throttled
// at most a CPU quota's period (100 ms) at a time.
const execWait = 10 * time.Second

// openUserNS opens init's user namespace (pid: init, this process's
// unreaped child: its pid is not reused). Until its execve a rootful init
// is the entry's clone (or the fork's child), host nobody and not
// dumpable (its setresuid), its memory still in the supervisor's user
// namespace: /proc/PID/ns/user is then refused (EACCES) to a supervisor
// without CAP_SYS_PTRACE (root in a container's default capability set,
// which also keeps init's execve: initNoExec), and the start failed
// whenever init was slower to its execve than the supervisor to its spec
// (1-2 starts in 10 under load or a small CPU quota). Refused, the open
// is tried again while init has still not exec'd (PF_FORKNOEXEC in its
// stat, which anyone may read), up to execWait; refused after its execve,
// or for an init that ended, the error stands.
func openUserNS(pid int) (*os.File, error) {
	path := fmt.Sprintf("/proc/%d/ns/user", pid)
	deadline := time.Now().Add(execWait)
	// A short first wait (init is usually a few system calls from its
	// execve), longer ones for an init that waits for a CPU.
	for wait := 100 * time.Microsecond; ; wait = min(2*wait, 5*time.Millisecond) {
		f, err := os.Open(path)
		if err == nil || !errors.Is(err, unix.EACCES) || time.Now().After(deadline) {
			return f, err
		}
		st, serr := procstat.Read("", pid)
		if serr != nil || st.Flags&procstat.PFExiting != 0 || st.State == 'Z' {
			return nil, err
		}
		if st.Flags&pfForkNoExec == 0 {
			// Exec'd, if only since the open: one more try decides.
			return os.Open(path)
		}
		slack.Sleep(wait)
	}
}

// idmapped returns a detached clone of the mount tree at path (of the
// path's own mount alone where a submount's file system takes no idmap),
// idmapped through userns and private. Private: the clone is made here,
// in the host's mount namespace, and a clone of a shared mount (systemd
// makes / and every mount below it shared) joins the host mount's peer
// group, so that every mount init then made inside it (the masks, the
// pins, the read-only binds of .git) was propagated to the host's mount
// and stayed there after the run (TestRootfulMountsStayInside). Init's
// own clones are made after it made its namespace private.
func idmapped(path string, noLinks bool, userns int) (int, error) {
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(userns), Propagation: unix.MS_PRIVATE}
	var last error
	// Recursive first; if a submount's file system cannot be idmapped, fall
	// back to the path's own mount alone.
	for _, rec := range []uint{unix.AT_RECURSIVE, 0} {
		fd, err := openTreeAt(path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|rec, noLinks)
		if err != nil {
			return -1, err
		}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|rec, &attr); err != nil {
			unix.Close(fd)
			last = err
			continue
		}
		return fd, nil
	}
	return -1, fmt.Errorf("idmapped mount of %s: %w (jail started by root needs a file system with idmapped mounts: ext4, xfs, btrfs, tmpfs 6.3+; or run jail as an ordinary user)", path, last)
}
