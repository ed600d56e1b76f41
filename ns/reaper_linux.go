//go:build amd64 || arm64

package ns

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// This file: a jail exec command started as its own child subreaper
// (execreap). Its descendants orphaned while it lives are re-parented to
// it, not to init: `(setsid sh -c 'sleep 1000' &)` leaves a sleep whose
// parent, process group and session are all gone, which nothing in /proc
// linked to the command, and proctree's kill of the command (its start
// given up, or Cmd.Signal(SIGKILL) where it has no cgroup) missed it. As
// the command's child it is found by its parent link. The mark is the
// kernel's, set in the fork child before its exec (which keeps it) and
// not inherited by the command's own forks; Go's ForkExec has no way to
// set it, hence this fork of our own, which does what startCommand asked
// of ForkExec and that prctl.

//go:linkname runtimeBeforeFork syscall.runtime_BeforeFork
func runtimeBeforeFork()

//go:linkname runtimeAfterFork syscall.runtime_AfterFork
func runtimeAfterFork()

//go:linkname runtimeAfterForkInChild syscall.runtime_AfterForkInChild
func runtimeAfterForkInChild()

// reaperFork is what the fork child needs, made before the fork: the child
// is a copy of one thread of a Go program and must not allocate.
type reaperFork struct {
	path   *byte
	argv   []*byte
	envv   []*byte
	dir    *byte
	fds    [3]int
	setsid bool // else setpgid(0, 0)
	ctty   bool // TIOCSCTTY on fd 0 (after setsid)
	pipe   int  // write end: the child's errno when it cannot exec
	pidfd  *int32
}

// forkExecReaper starts path as startCommand asks (attr), the child being
// its own child subreaper, and returns its pid; a failure is the exit code
// the shell would give (forkExec).
func forkExecReaper(path string, argv []string, attr *syscall.ProcAttr) (int, error) {
	fail := func(err error) (int, error) {
		code := 126
		if errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		return 0, &setupError{code, fmt.Errorf("exec %s: %w", path, err)}
	}
	if len(attr.Files) != 3 {
		return fail(fmt.Errorf("%d stdio fds, want 3", len(attr.Files)))
	}
	var f reaperFork
	var err error
	if f.path, err = syscall.BytePtrFromString(path); err != nil {
		return fail(err)
	}
	if f.argv, err = syscall.SlicePtrFromStrings(argv); err != nil {
		return fail(err)
	}
	if f.envv, err = syscall.SlicePtrFromStrings(attr.Env); err != nil {
		return fail(err)
	}
	if attr.Dir != "" {
		if f.dir, err = syscall.BytePtrFromString(attr.Dir); err != nil {
			return fail(err)
		}
	}
	for i, fd := range attr.Files {
		f.fds[i] = int(fd)
	}
	f.setsid, f.ctty = attr.Sys.Setsid, attr.Sys.Setctty
	var p [2]int
	// ForkLock: no fd opened meanwhile without O_CLOEXEC leaks into the
	// command (as ForkExec).
	syscall.ForkLock.Lock()
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		syscall.ForkLock.Unlock()
		return fail(err)
	}
	f.pipe = p[1]
	pidfd := int32(-1)
	if attr.Sys.PidFD != nil {
		f.pidfd = &pidfd
	}
	runtime.LockOSThread()
	runtimeBeforeFork()
	pid, errno := reaperForkExec(&f)
	runtimeAfterFork()
	runtime.UnlockOSThread()
	syscall.ForkLock.Unlock()
	unix.Close(p[1])
	if attr.Sys.PidFD != nil {
		*attr.Sys.PidFD = int(pidfd)
	}
	if errno != 0 {
		unix.Close(p[0])
		return fail(errno)
	}
	var b [8]byte
	n, rerr := readFull(p[0], b[:])
	unix.Close(p[0])
	if n == 0 && rerr == nil {
		return int(pid), nil // exec'd: the pipe closed on exec
	}
	for {
		// init's reaper may take the child first: ECHILD then.
		if _, werr := unix.Wait4(int(pid), nil, 0, nil); werr != unix.EINTR {
			break
		}
	}
	if n == len(b) {
		return fail(syscall.Errno(*(*uintptr)(unsafe.Pointer(&b[0]))))
	}
	if rerr == nil {
		rerr = errors.New("short error report from the fork child")
	}
	return fail(rerr)
}

// readFull reads fd until len(b) bytes or end of file.
func readFull(fd int, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := unix.Read(fd, b[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if k == 0 {
			break
		}
		n += k
	}
	return n, nil
}

// rawVforkSyscall is a system call whose return address is not on the
// stack (reaper_linux_*.s), for a clone with CLONE_VM|CLONE_VFORK.
func rawVforkSyscall(trap, a1, a2, a3 uintptr) (r1 uintptr, err syscall.Errno)

// reaperForkExec forks as ForkExec does (CLONE_VM|CLONE_VFORK: the child
// shares init's memory until its exec, which is how the supervisor tells
// init's fork child by kcmp, initForkChild; the parent waits meanwhile)
// and, in the child, does what ForkExec does for startCommand, plus
// PR_SET_CHILD_SUBREAPER, then execs. The caller has blocked signals
// (runtime_BeforeFork); the child resets them (runtime_AfterForkInChild),
// as in ForkExec. The parent returns at once: the child has used this
// frame. nosplit: the child must not enter the runtime.
//
//go:nosplit
//go:norace
func reaperForkExec(f *reaperFork) (uintptr, syscall.Errno) {
	flags := uintptr(unix.CLONE_VM | unix.CLONE_VFORK | unix.SIGCHLD)
	var ptid uintptr
	if f.pidfd != nil {
		flags |= unix.CLONE_PIDFD
		ptid = uintptr(unsafe.Pointer(f.pidfd))
	}
	pid, errno := rawVforkSyscall(unix.SYS_CLONE, flags, 0, ptid)
	if errno != 0 || pid != 0 {
		return pid, errno
	}
	// The child.
	runtimeAfterForkInChild()
	pipe := uintptr(f.pipe)
	if pipe < 3 {
		// It would be overwritten by the stdio below.
		np, _, e := syscall.RawSyscall(unix.SYS_FCNTL, pipe, unix.F_DUPFD_CLOEXEC, 3)
		if e != 0 {
			reaperChildFail(pipe, e)
		}
		pipe = np
	}
	if f.setsid {
		if _, _, e := syscall.RawSyscall(unix.SYS_SETSID, 0, 0, 0); e != 0 {
			reaperChildFail(pipe, e)
		}
	} else if _, _, e := syscall.RawSyscall(unix.SYS_SETPGID, 0, 0, 0); e != 0 {
		reaperChildFail(pipe, e)
	}
	// stdio: each source first copied above 2 (the lowest free fds: an
	// open-file limit init was given low still fits; one may be 0..2 and be
	// overwritten by another's dup), then onto 0, 1, 2 (dup3: no
	// close-on-exec there).
	var high [3]uintptr
	for i := 0; i < 3; i++ {
		nfd, _, e := syscall.RawSyscall(unix.SYS_FCNTL, uintptr(f.fds[i]), unix.F_DUPFD_CLOEXEC, 3)
		if e != 0 {
			reaperChildFail(pipe, e)
		}
		high[i] = nfd
	}
	for i := 0; i < 3; i++ {
		if _, _, e := syscall.RawSyscall(unix.SYS_DUP3, high[i], uintptr(i), 0); e != 0 {
			reaperChildFail(pipe, e)
		}
	}
	if f.ctty {
		if _, _, e := syscall.RawSyscall(unix.SYS_IOCTL, 0, unix.TIOCSCTTY, 1); e != 0 {
			reaperChildFail(pipe, e)
		}
	}
	if f.dir != nil {
		if _, _, e := syscall.RawSyscall(unix.SYS_CHDIR, uintptr(unsafe.Pointer(f.dir)), 0, 0); e != 0 {
			reaperChildFail(pipe, e)
		}
	}
	// Why: the command's orphans come to it, not to init, so that a kill
	// of the command finds them by their parent link (file comment).
	if _, _, e := syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0, 0); e != 0 {
		reaperChildFail(pipe, e)
	}
	_, _, e := syscall.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(f.path)),
		uintptr(unsafe.Pointer(&f.argv[0])), uintptr(unsafe.Pointer(&f.envv[0])))
	reaperChildFail(pipe, e)
	return 0, 0 // not reached
}

// reaperChildFail reports errno to the parent and exits the fork child.
//
//go:nosplit
//go:norace
func reaperChildFail(pipe uintptr, e syscall.Errno) {
	v := uintptr(e)
	syscall.RawSyscall(unix.SYS_WRITE, pipe, uintptr(unsafe.Pointer(&v)), unsafe.Sizeof(v))
	for {
		syscall.RawSyscall(unix.SYS_EXIT_GROUP, 253, 0, 0)
	}
}
