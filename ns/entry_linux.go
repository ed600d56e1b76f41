package ns

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// The entry path (Config.Entry): init is started without a fork of the
// supervisor. Go's exec forks the whole supervisor (page tables, then a
// copy-on-write fault for every page it writes afterwards) whenever the
// child is to get a new user namespace: it uses vfork only without
// CLONE_NEWUSER. So the supervisor execs the lean init, through Go's vfork
// path and in no namespace, with argv[0] EntryArg0; the lean init's own ELF
// entry (cmd/jail-init/entry_linux_amd64.s), before the Go runtime starts
// a second thread, makes the namespaces and clones init with CLONE_PARENT,
// so that init is the supervisor's child exactly as a fork would make it,
// and exits; init execs the lean init again, inside its namespaces, as
// the old path's child does, or (a rootful start by a supervisor holding
// CAP_SYS_PTRACE, initNoExec) goes on into the Go runtime without it.
// This file is the supervisor's side of their conversation on init's
// socket (one message of two little-endian uint64s a datagram): the
// supervisor sends the start message and then only listens; the entry
// writes every map itself (entrySelfMap, entryParentMap) and asks nothing.

// Entry's messages (the first uint64 of one).
const (
	entryCloned = 'C' // (entryParentMap) init's pid: cloned, not yet released
	entryPid    = 'P' // init's pid (the second uint64); the entry exits 0
	entryFailed = 'E' // a step failed: step<<32 | errno
)

// The start message's options: entryRootful, become the user namespace's
// root (host nobody) once it is mapped; entryAmbient, carry init's
// capabilities across its execve as ambient ones (a user's start: uid 0
// inside would keep them by itself); entryNoExec, init runs on as the
// entry's clone, without execve'ing the lean init again (initNoExec);
// entrySelfMap (a user's start, never with entryRootful), the entry
// writes its user namespace's maps itself, the user to itself as idMaps
// says (the kernel lets a namespace's owner map its own ids and nothing
// else); entryParentMap (a rootful start, with entryRootful), the entry
// clones init in all its namespaces at once, writes init's maps from
// outside as Go's fork writes idMaps' on the fork path (0 to the host id
// in the options' bits 32-63: idMaps' NobodyID) and then releases it. It
// says init's pid ('C') as soon as init exists: on any failure after it
// this process, init's parent, kills and reaps init (reapCloned). Every
// start has exactly one of the two: the entry refuses a start message
// with neither (step 9, EINVAL), as it maps every namespace it makes.
const (
	entryRootful   = 1
	entryAmbient   = 2
	entryNoExec    = 4
	entrySelfMap   = 8
	entryParentMap = 16
)

// entrySteps name the entry's steps in its failure reports.
var entrySteps = map[uint64]string{
	1: "unshare(CLONE_NEWUSER)",
	// 2 and 3, the entry's own setresgid and setresuid once the
	// supervisor had written its maps, are gone with that way: init,
	// released, makes them itself (it exits on a failure).
	4: "unshare of the mount, pid, ipc, uts, cgroup and network namespaces",
	5: "clone of init (CLONE_PARENT)",
	6: "write of the user namespace's own id maps",
	7: "write of init's id maps",
	8: "release of init after its id maps",
	9: "the start message (no map option)",
}

// initNoExec tells whether init may skip its execve (entryNoExec): only
// for a rootful start by a supervisor that holds CAP_SYS_PTRACE. Without
// the execve init's memory stays in the supervisor's user namespace (an
// execve would give it a new one, in the sandbox's) and it is not
// dumpable from the start (its setresuid at its release, in the entry's
// code), and so are the agent's processes between init's fork and their
// own execve: reading their /proc entries (the exec answer's
// /proc/PID/mem and root, the memory watch's /proc/INIT/root,
// pidfd_getfd) then takes CAP_SYS_PTRACE in the supervisor's user
// namespace, not ownership of the sandbox's. An unprivileged user, or a
// root without the capability (a container's default set), keeps the
// execve: nothing is lost, the start is the entry's as before.
func initNoExec() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[unix.CAP_SYS_PTRACE/32].Effective&(1<<(unix.CAP_SYS_PTRACE%32)) != 0
}

// EntryError is a start by the lean init's entry that failed before init
// existed: Begin then starts init the old way.
type EntryError struct{ Err error }

func (e *EntryError) Error() string { return "the lean init's entry: " + e.Err.Error() }
func (e *EntryError) Unwrap() error { return e.Err }

// spawnEntry starts init through the lean init's entry (cfg.Exe) and
// returns it with the supervisor's end of its socket. On an error no init
// is left: none was cloned, or (the entry killed after the clone) the one
// cloned finds its socket closed before it has a spec and exits.
func spawnEntry(cfg Config) (*Sandbox, *os.File, error) {
	parent, child, err := Socketpair()
	if err != nil {
		return nil, nil, err
	}
	defer child.Close()
	// A user's start: the entry maps the user to itself on its own
	// (entrySelfMap), as idMaps(false) would have this process do.
	opts := uint64(entryAmbient | entrySelfMap)
	if cfg.Rootful {
		// idMaps(true): 0 to NobodyID, uids and gids alike, written by
		// the entry from outside init's user namespace.
		opts = entryRootful | entryParentMap | uint64(NobodyID)<<32
		if initNoExec() {
			opts |= entryNoExec
		}
	}
	// The same namespaces as cloneAttr's (the old path): the entry makes
	// them all, the user namespace first.
	if err := entrySend(parent, uint64(cloneFlags(cfg.NetHost)), opts); err != nil {
		parent.Close()
		return nil, nil, err
	}
	attr := &syscall.SysProcAttr{
		// No namespace flag: Go starts this process with vfork (the
		// supervisor's memory is not copied). Should the supervisor die
		// while the entry waits for its maps, the entry dies too.
		Pdeathsig: syscall.SIGKILL,
		// Out of the terminal's foreground process group from the start:
		// a ^C meant for jail never kills the entry between its clone
		// and its report (init, cloned, makes a session of its own).
		Setsid: true,
	}
	if cfg.CgroupFD >= 0 {
		// Born in the sandbox's cgroup (clone3 CLONE_INTO_CGROUP): init,
		// its child, is too, and its cgroup namespace (made there) is
		// rooted there, as when init was cloned into it directly.
		attr.UseCgroupFD = true
		attr.CgroupFD = cfg.CgroupFD
	}
	files, closeNull, err := entryFiles(cfg, child)
	if err != nil {
		parent.Close()
		return nil, nil, err
	}
	defer closeNull()
	e := &entryProc{
		// The very file initbin checked, as in the old path.
		path: fmt.Sprintf("/proc/self/fd/%d", initFD+1),
		attr: &syscall.ProcAttr{Env: initEnv, Files: files, Sys: attr},
	}
	s := &Sandbox{done: make(chan struct{})}
	started := make(chan error, 1)
	goSpawner(cfg.JoinThread != nil, func() {
		// init's parent is the thread that starts the entry (through
		// CLONE_PARENT), as it is spawn's: the same thread settings.
		spawnerThread()
		if err := dropHostGroups(cfg); err != nil {
			started <- err
			close(s.done)
			return
		}
		pid, err := runEntry(e, parent, opts, cfg.JoinThread)
		if err != nil {
			started <- err
			close(s.done)
			return
		}
		s.Pid = pid
		// Before the go-ahead: the pidfd of init, our child (a zombie's
		// too), for exitWait.
		exited := initExited(pid)
		started <- nil
		exitWait(exited)
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		for {
			_, err = syscall.Wait4(pid, &ws, 0, &ru)
			if err != syscall.EINTR {
				break
			}
		}
		if err == nil {
			s.ws, s.ru = ws, &ru
		}
		s.werr = err
		close(s.done)
	})
	if err := <-started; err != nil {
		parent.Close()
		if je := (*JoinError)(nil); errors.As(err, &je) {
			return nil, nil, joinFailed(je)
		}
		return nil, nil, &EntryError{err}
	}
	return s, parent, nil
}

// entryProc is the entry's process: started by syscall.ForkExec, not
// os/exec. os.StartProcess first probes, once a process, whether pidfds
// work (os.checkPidfd: pidfd_open, waitid, pidfd_send_signal and a
// clone(CLONE_VFORK|CLONE_PIDFD) of a child that exits at once) on this
// thread, before the entry's own vfork: 0.1-0.3 ms of init's start, and
// 1-4 ms when the probe's child or this thread then waited for a CPU or
// for a Go processor. ForkExec is the same vfork (a clone3 with the
// cgroup's fd) and exec, without the probe and without a Process to
// track: runEntry opens its own pidfd, and waits for the entry itself.
type entryProc struct {
	path string
	attr *syscall.ProcAttr
	pid  int
	ws   syscall.WaitStatus
}

// start forks and execs the entry.
func (e *entryProc) start() error {
	pid, err := syscall.ForkExec(e.path, []string{EntryArg0}, e.attr)
	if err != nil {
		return fmt.Errorf("exec the lean init's entry %s: %w", e.path, err)
	}
	e.pid = pid
	return nil
}

// kill kills the entry (reaped by wait).
func (e *entryProc) kill() { _ = unix.Kill(e.pid, unix.SIGKILL) }

// wait reaps the entry and keeps its status.
func (e *entryProc) wait() {
	for {
		_, err := syscall.Wait4(e.pid, &e.ws, 0, nil)
		if err != syscall.EINTR {
			return
		}
	}
}

// status is the entry's wait status as os.ProcessState says it.
func (e *entryProc) status() string {
	switch {
	case e.ws.Exited():
		return "exit status " + strconv.Itoa(e.ws.ExitStatus())
	case e.ws.Signaled():
		return "signal: " + e.ws.Signal().String()
	}
	return fmt.Sprintf("wait status %#x", uint32(e.ws))
}

// entryFiles are the entry's descriptors 0-4: the caller's stdio (or
// /dev/null, as os/exec gives for a nil one), init's socket and the lean
// init's checked copy. closeNull closes the /dev/null opened here.
func entryFiles(cfg Config, child *os.File) (files []uintptr, closeNull func(), err error) {
	var null *os.File
	closeNull = func() {
		if null != nil {
			null.Close()
		}
	}
	for _, f := range []*os.File{cfg.Stdin, cfg.Stdout, cfg.Stderr} {
		if f == nil {
			if null == nil {
				if null, err = os.OpenFile(os.DevNull, os.O_RDWR, 0); err != nil {
					return nil, closeNull, err
				}
			}
			f = null
		}
		files = append(files, f.Fd())
	}
	return append(files, child.Fd(), cfg.Exe.Fd()), closeNull, nil
}

// runEntry execs the entry and returns init's pid once the entry has
// exited (it writes init's maps itself: opts has entrySelfMap or
// entryParentMap).
//
// join (Config.JoinThread), when set, has the entry born inside the
// sandbox's cgroups, and with it init, its clone. The thread moves back
// as soon as the entry exists; on a failure to move back the entry is
// killed and any init it cloned and said ('C', or 'P' for a user's
// start, which clones init without a word before) is reaped (entryUndo).
func runEntry(e *entryProc, parent *os.File, opts uint64, join func() (func() error, error)) (int, error) {
	parentMap := opts&entryParentMap != 0
	if err := bornIn(join, e.start, func() { entryUndo(e, parent) }); err != nil {
		return 0, err
	}
	epid := e.pid
	// The entry's death is seen even while init (which shares its end of
	// the socket) keeps the socket open.
	pidfd, err := unix.PidfdOpen(epid, 0)
	if err != nil {
		e.kill()
		e.wait()
		return 0, fmt.Errorf("pidfd_open of the entry: %w", err)
	}
	defer unix.Close(pidfd)
	cloned := 0 // init, once the entry said 'C'
	end := func(err error) (int, error) {
		if cloned != 0 {
			// Killed by the entry after a failed step, or not (the
			// entry itself killed, an unexpected message): killed and
			// reaped here either way.
			reapCloned(cloned)
		}
		e.wait()
		if err == errEntryExited {
			if cloned != 0 {
				err = errors.New("it exited before it released init")
			}
			err = fmt.Errorf("%w (%s)", err, e.status())
		}
		return 0, err
	}
	for {
		kind, val, err := entryRecv(parent, pidfd, parentMap)
		if err != nil {
			if err != errEntryExited {
				e.kill()
			}
			return end(err)
		}
		switch kind {
		case entryCloned:
			if val == 0 || val > 1<<22 {
				e.kill()
				return end(fmt.Errorf("the entry reported pid %d", val))
			}
			if !parentMap || cloned != 0 {
				e.kill()
				if cloned == 0 {
					cloned = int(val) // reaped by end, if a child
				}
				return end(fmt.Errorf("unexpected clone of init %d by the entry", val))
			}
			cloned = int(val)
		case entryPid:
			// The entry exits 0 right after this message: reaped here, it
			// leaves nothing. init is this process's child (CLONE_PARENT),
			// unreaped, so its pid stays its own until Wait4 below.
			if val == 0 || val > 1<<22 || parentMap && int(val) != cloned {
				e.kill()
				return end(fmt.Errorf("the entry reported pid %d", val))
			}
			e.wait()
			return int(val), nil
		case entryFailed:
			step := entrySteps[val>>32]
			if step == "" {
				step = "step " + strconv.FormatUint(val>>32, 10)
			}
			return end(fmt.Errorf("%s: %w", step, syscall.Errno(val&0xffffffff)))
		default:
			e.kill()
			return end(fmt.Errorf("unexpected message %#x from the entry", kind))
		}
	}
}

// entryUndo kills and reaps the entry, whose start is undone (its
// thread failed to leave the sandbox's cgroups), and any init it cloned
// and said ('C', or 'P': a user's entry says init only once it is
// cloned): once the entry is reaped, all it wrote is on the socket.
func entryUndo(e *entryProc, parent *os.File) {
	e.kill()
	e.wait()
	var b [16]byte
	for {
		n, _, err := unix.Recvfrom(int(parent.Fd()), b[:], unix.MSG_DONTWAIT)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n != 16 {
			return
		}
		if kind := binary.LittleEndian.Uint64(b[:8]); kind == entryCloned || kind == entryPid {
			if pid := binary.LittleEndian.Uint64(b[8:]); pid != 0 && pid <= 1<<22 {
				reapCloned(int(pid))
			}
		}
	}
}

// reapCloned kills and reaps pid, an init the entry cloned and said
// ('C' or 'P'), when the start fails, if it is this process's child: Wait4
// of any other pid is ECHILD, and a child's pid, unreaped, is never
// reused, so the kill reaches no other process.
func reapCloned(pid int) {
	var ws syscall.WaitStatus
	for {
		wpid, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || wpid == pid {
			return
		}
		break
	}
	_ = unix.Kill(pid, unix.SIGKILL)
	for {
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
			return
		}
	}
}

// errEntryExited: the entry exited without a message (a build without
// it, whose main refuses EntryArg0, or a kill).
var errEntryExited = errors.New("it exited before it cloned init")

// entryRecv waits for the entry's next message, or its exit. With
// exitFirst (entryParentMap: 'C', then the last message right before
// the entry's exit; the entry never waits for an answer) it waits for the exit alone and then reads
// what the entry wrote: this thread wakes once, not for each message,
// while init starts on the CPUs.
func entryRecv(parent *os.File, pidfd int, exitFirst bool) (kind, val uint64, err error) {
	fd := int(parent.Fd())
	var b [16]byte
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(pidfd), Events: unix.POLLIN}}
		if exitFirst {
			fds[0].Fd = -1 // poll(2) skips a negative fd
		}
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return 0, 0, fmt.Errorf("poll the entry: %w", err)
		}
		// The socket first (the entry writes init's pid, then exits), and
		// without blocking: init, once cloned, holds the other end too.
		n, _, err := unix.Recvfrom(fd, b[:], unix.MSG_DONTWAIT)
		switch {
		case err == nil && n == 16:
			return binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:]), nil
		case err == nil:
			return 0, 0, fmt.Errorf("a message of %d bytes from the entry", n)
		case err != unix.EAGAIN && err != unix.EINTR:
			return 0, 0, fmt.Errorf("read from the entry: %w", err)
		}
		if fds[1].Revents != 0 {
			return 0, 0, errEntryExited
		}
	}
}

func entrySend(parent *os.File, kind, val uint64) error {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], kind)
	binary.LittleEndian.PutUint64(b[8:], val)
	if _, err := unix.Write(int(parent.Fd()), b[:]); err != nil {
		return fmt.Errorf("write to the entry: %w", err)
	}
	return nil
}

// writeProc writes s to a /proc file in one write(2), as the kernel wants
// a map written, through a bare descriptor: os.OpenFile would try Go's
// poller on it first (two fcntl and an epoll_ctl refused, and another on
// close: 4 of 7 system calls, for each of init's user-namespace limits on
// its path to the agent). A short write is an error.
func writeProc(path, s string) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	n, err := unix.Write(fd, []byte(s))
	cerr := unix.Close(fd)
	if err == nil {
		err = cerr
	}
	if err == nil && n != len(s) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// initExited opens a pollable pidfd of init (pidfd_open with
// PIDFD_NONBLOCK, Linux 5.10), nil where there is none (exitWait then
// returns at once and the Wait4 after it blocks as before).
func initExited(pid int) *os.File {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), "pidfd")
}

// exitWait parks the spawner's goroutine until init has exited, on Go's
// poller (a pidfd is readable once its process has), and closes f; the
// Wait4 after it reaps init. Why not Wait4 alone: it blocks the thread in
// a system call that holds its P, the runtime's right to run Go code,
// until sysmon takes the P back (20 us to 10 ms later: its period grows
// while it has nothing to do), and Begin's own goroutine, which the
// go-ahead readied onto that P, waited as long: 1-4.5 ms between init's
// pid and Begin's return under the claude profile here, the supervisor on
// one P of two meanwhile. Parked, the locked goroutine's thread sleeps
// (it lives as long as init: init's parent-death signal is its) and the P
// goes on at once.
func exitWait(f *os.File) {
	if f == nil {
		return
	}
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	// An error (no poller for it) returns at once: Wait4 blocks then.
	_ = rc.Read(func(fd uintptr) bool {
		// WNOWAIT: whether init has exited, not its reaping; a wait that
		// fails ends this one too (the Wait4 after it says why).
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		return err != nil || info.Signo != 0
	})
}
