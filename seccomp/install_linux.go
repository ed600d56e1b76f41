package seccomp

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Install installs jail's filters on every thread of the calling process.
// It runs in the sandbox's init, after Landlock and as the last step before
// the agent is exec'd (the agent inherits the filters across fork and
// exec). It sets no_new_privs itself if the caller has not (the kernel
// refuses unprivileged filters without it). Order: the deny filter (TSYNC),
// cfg.Extra as a separate filter unless cfg.Replace (TSYNC), then with
// cfg.ExecNotify the exec filter (TSYNC|TSYNC_ESRCH|NEW_LISTENER), whose
// listener is returned; the caller passes it to the supervisor and closes
// its own copy before exec'ing the agent. When user notification is
// unavailable, listener is nil, rep.Notify false and rep.Reason says why;
// that is not an error.
func Install(cfg Config) (listener *os.File, rep Report, err error) {
	info, err := archNative()
	if err != nil {
		return nil, rep, err
	}
	rep.Arch = info.Name
	rep.AllowPtrace = cfg.AllowPtrace
	rep.Extra = "none"
	if cfg.Extra != nil {
		rep.Extra = "extend"
		if cfg.Replace {
			rep.Extra = "replace"
		}
	}
	// no_new_privs is per thread and seccomp(2) checks the calling thread's:
	// both calls must run on one thread, or a goroutine moved between them
	// (likelier on a loaded machine) gets EACCES. TSYNC then gives every
	// other thread the filter and no_new_privs with it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// no_new_privs: required for an unprivileged filter, and it stops a
	// setuid binary from escaping the filter's assumptions (seccomp(2)).
	if nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil || nnp != 1 {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return nil, rep, fmt.Errorf("seccomp: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
		}
	}
	deny, err := buildDeny(cfg)
	if err != nil {
		return nil, rep, err
	}
	rep.Instructions = len(deny)
	if cfg.ExecNotify && !cfg.SimulateBusy {
		// The deny list and the exec audit as one filter (mergeNotify:
		// the same result for every system call, one preparation and JIT
		// instead of two). Where the kernel refuses a listener (EBUSY,
		// EINVAL...), the two filters below are installed as before, and
		// report why there is no exec audit.
		merged, ok, err := mergeNotify(deny)
		if err != nil {
			return nil, rep, err
		}
		if ok {
			fd, err := loadFilter(merged, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER|
				unix.SECCOMP_FILTER_FLAG_TSYNC|unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH)
			switch {
			case err == nil:
				listener := os.NewFile(uintptr(fd), "seccomp-notify")
				if err := loadExtra(cfg); err != nil {
					listener.Close()
					return nil, rep, err
				}
				rep.Notify = true
				return listener, rep, nil
			case errors.Is(err, unix.EBUSY), errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
			default:
				return nil, rep, fmt.Errorf("seccomp: install the deny and exec-notify filter: %w", err)
			}
		}
	}
	// TSYNC: every thread of the Go runtime gets the filter, not only this
	// one; without it the agent could be forked from an unfiltered thread.
	if _, err := loadFilter(deny, unix.SECCOMP_FILTER_FLAG_TSYNC); err != nil {
		return nil, rep, fmt.Errorf("seccomp: install deny filter: %w", err)
	}
	if err := loadExtra(cfg); err != nil {
		return nil, rep, err
	}
	if !cfg.ExecNotify {
		rep.Reason = "exec audit not requested"
		return nil, rep, nil
	}
	notify, err := buildNotify()
	if err != nil {
		return nil, rep, err
	}
	// NEW_LISTENER with TSYNC is only accepted together with TSYNC_ESRCH
	// (5.7+), which reports a thread-sync failure as ESRCH instead of a
	// thread id (the return value is the listener fd).
	var fd int
	if cfg.SimulateBusy {
		// Testing: the answer WSL2 kernels and nested sandboxes give.
		fd, err = -1, unix.EBUSY
	} else {
		fd, err = loadFilter(notify, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER|
			unix.SECCOMP_FILTER_FLAG_TSYNC|unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH)
	}
	switch {
	case err == nil:
		rep.Notify = true
		return os.NewFile(uintptr(fd), "seccomp-notify"), rep, nil
	case errors.Is(err, unix.EBUSY):
		rep.Reason = "seccomp user notification unavailable: a listener already exists above this process (EBUSY, e.g. WSL2 or a nested sandbox); running without exec audit"
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		rep.Reason = fmt.Sprintf("seccomp user notification unavailable (%v): kernel older than 5.7 or built without it; running without exec audit", err)
	default:
		return nil, rep, fmt.Errorf("seccomp: install exec-notify filter: %w", err)
	}
	return nil, rep, nil
}

// loadExtra installs the user's extra policy (the seccomp option) as a
// filter of its own, when it extends the deny list (with Replace it is
// the deny list's body instead).
func loadExtra(cfg Config) error {
	if cfg.Extra == nil || cfg.Replace {
		return nil
	}
	extra, err := cfg.Extra.Assemble()
	if err != nil {
		return fmt.Errorf("seccomp: assemble the extra policy (seccomp option): %w", err)
	}
	if _, err := loadFilter(extra, unix.SECCOMP_FILTER_FLAG_TSYNC); err != nil {
		return fmt.Errorf("seccomp: install the extra policy (seccomp option): %w", err)
	}
	return nil
}

// InstallAgent installs the agent filter (buildAgent: no prlimit64
// setting pid 1's limits; any other process's when the caller, init, is
// not pid 1) on the calling thread only, without TSYNC. init
// calls it on the locked thread it forks the agent and every exec'd
// command from, after Install: they inherit it across fork; init's other
// threads do not need it. The caller's thread must already have no_new_privs (Install
// set it on every thread) and must stay locked to its goroutine: Go never
// starts a new thread from a thread locked with LockOSThread (it hands
// that to its template thread), so no other thread of init gets it.
func InstallAgent() error {
	info, err := archNative()
	if err != nil {
		return err
	}
	// Init is pid 1 only in a pid namespace of its own; otherwise (a
	// degraded run) the agent names init, the supervisor and the user's
	// other processes by their pids: every other pid is refused.
	ins, err := buildAgent(info, unix.Getpid() != 1, highestTid())
	if err != nil {
		return err
	}
	if _, err := loadFilter(ins, 0); err != nil {
		return fmt.Errorf("seccomp: agent filter: %w", err)
	}
	return nil
}

// ProbeNotify tries what Install does for the exec audit: it sets
// no_new_privs and installs the exec notification filter with a listener,
// then closes the listener. Call it only in a throwaway process (jail
// doctor's probe child): the filter stays on the caller. It returns nil
// when user notification works here, else the kernel's error (EBUSY when a
// listener already exists above: WSL2, a nested sandbox).
func ProbeNotify() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	notify, err := buildNotify()
	if err != nil {
		return err
	}
	fd, err := loadFilter(notify, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

// loadFilter calls seccomp(SECCOMP_SET_MODE_FILTER, flags, prog). It
// returns the syscall's value (the listener fd with NEW_LISTENER).
func loadFilter(ins []bpf.Instruction, flags uint) (int, error) {
	raw, err := bpf.Assemble(ins)
	if err != nil {
		return -1, fmt.Errorf("assemble bpf: %w", err)
	}
	if len(raw) == 0 || len(raw) > 4096 { // BPF_MAXINSNS
		return -1, fmt.Errorf("bpf program of %d instructions: %w", len(raw), unix.EINVAL)
	}
	filt := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filt[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filt)), Filter: &filt[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, uintptr(flags), uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return -1, errno
	}
	if flags&unix.SECCOMP_FILTER_FLAG_NEW_LISTENER == 0 && r != 0 {
		// Plain TSYNC: a positive value is the id of a thread that could
		// not be synchronized; the filter was not installed.
		return -1, fmt.Errorf("thread %d could not be synchronized: %w", r, unix.ESRCH)
	}
	return int(r), nil
}

// highestTid is the highest thread id the calling process has now (0 if
// /proc cannot be read). Called by init before it forks its agent: every
// id up to it is init's (its threads so far, in its pid namespace's order)
// and stays init's while init lives (Go keeps its threads), the agent's
// processes come after it.
func highestTid() uint32 {
	names, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0
	}
	var top uint32
	for _, n := range names {
		if v, err := strconv.ParseUint(n.Name(), 10, 32); err == nil && uint32(v) > top {
			top = uint32(v)
		}
	}
	return top
}
