package seccomp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/jail-sandbox/jail/procstat"
	"golang.org/x/sys/unix"
)

// Kernel ABI structs (include/uapi/linux/seccomp.h).
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  seccompData
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

type notifSizes struct{ Notif, Resp, Data uint16 }

// Serve answers the exec notifications of listener (from Install, passed
// to the supervisor) until every process of the sandbox has exited (it
// then returns nil) or ctx is done (ctx.Err()). It runs in the supervisor.
// For each execve/execveat it opens /proc/PID/mem, checks the notification
// id is still valid (so PID was not reused), reads path, argv and cwd,
// checks the id again, asks guard (nil allows all), calls onExec
// synchronously (keep it quick: the exec waits) and answers CONTINUE, or
// EPERM when the guard refuses or onExec set the event's Refuse. A
// notification is never dropped: the exec blocks until answered, and a
// process that died meanwhile (ENOENT) is still reported, with Err set. Serve closes listener when it returns.
func Serve(ctx context.Context, listener *os.File, guard *Guard, onExec func(*ExecEvent)) error {
	return ServeFirst(ctx, listener, guard, nil, onExec)
}

// ServeFirst is Serve for a listener whose first notification may be
// known: first, when not nil, is asked at that notification (and only
// then) for the exec it makes (its Path, Argv and Cwd; Pid is the
// notification's), and says nil when it cannot vouch for it. jail's init
// installs the filter as its last wall and then forks the agent, which
// runs no code of its own before its execve (Go's ForkExec child: signal
// resets, setpgid, chdir), and nothing else that carries the filter can
// exec before it: init itself never execs, and it starts exec'd commands
// only on the supervisor's request, which waits for the agent's start
// (first says nil from then on: an agent child killed before its
// notification was received leaves the next one to such a command). So
// that first execve is the one init was told to make, and the answer it
// waits for records it as given instead of reading the process's memory
// (an open, two id checks, three reads and a readlink: about 0.1 ms of
// the agent's first instruction's wait). An execveat, or any other call,
// as the first notification is read as every other one is, and so is
// every later notification.
func ServeFirst(ctx context.Context, listener *os.File, guard *Guard, first func() *ExecEvent, onExec func(*ExecEvent)) error {
	return ServeWith(ctx, listener, Handlers{Guard: guard, First: first, OnExec: onExec})
}

// ServeWith is ServeFirst with every handler, signals' included.
func ServeWith(ctx context.Context, listener *os.File, h Handlers) error {
	guard, first, onExec := h.Guard, h.First, h.OnExec
	if listener == nil {
		return fmt.Errorf("seccomp: Serve: nil listener: %w", unix.EBADF)
	}
	defer listener.Close()
	var sz notifSizes
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_NOTIF_SIZES, 0, uintptr(unsafe.Pointer(&sz))); e != 0 {
		return fmt.Errorf("seccomp: SECCOMP_GET_NOTIF_SIZES: %w", e)
	}
	// The kernel may grow struct seccomp_notif; RECV writes sz.Notif bytes.
	bufLen := max(int(sz.Notif), int(unsafe.Sizeof(seccompNotif{})))
	buf := make([]uint64, (bufLen+7)/8)

	var cancel [2]int
	if err := unix.Pipe2(cancel[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return fmt.Errorf("seccomp: Serve: pipe: %w", err)
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	defer func() {
		close(done)
		<-stopped // the writer is gone: closing the read end cannot EPIPE it
		unix.Close(cancel[0])
	}()
	go func() {
		defer close(stopped)
		select {
		case <-ctx.Done():
			unix.Write(cancel[1], []byte{0})
		case <-done:
		}
		unix.Close(cancel[1])
	}()

	fd := int(listener.Fd())
	// 6.6+: wake the supervisor and the target synchronously (same CPU),
	// which roughly halves the round trip; older kernels say EINVAL.
	unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS), unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	s := &server{fd: fd, guard: guard, onExec: onExec, first: first, onSignal: h.OnSignal, onListen: h.OnListen}
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(cancel[0]), Events: unix.POLLIN}}
	for {
		pfd[0].Revents, pfd[1].Revents = 0, 0
		if _, err := unix.Poll(pfd, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return fmt.Errorf("seccomp: Serve: poll: %w", err)
		}
		if pfd[1].Revents != 0 {
			return ctx.Err()
		}
		if pfd[0].Revents&unix.POLLIN != 0 {
			clear(buf)
			_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.SECCOMP_IOCTL_NOTIF_RECV), uintptr(unsafe.Pointer(&buf[0])))
			switch e {
			case 0:
				s.handle((*seccompNotif)(unsafe.Pointer(&buf[0])))
			case unix.ENOENT:
				// The target died between wake-up and RECV; the exec
				// never happened and there is nothing to answer. Nor is
				// the next notification the first one.
				s.first = nil
			case unix.EINTR: // polled and received again
			default:
				return fmt.Errorf("seccomp: Serve: SECCOMP_IOCTL_NOTIF_RECV: %w", e)
			}
			continue
		}
		if pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
			return nil // every filtered process has exited
		}
	}
}

type server struct {
	fd     int
	guard  *Guard
	onExec func(*ExecEvent)
	// first tells the exec the first notification makes, when known
	// (ServeFirst); nil once a notification came or went.
	first    func() *ExecEvent
	onSignal func(SignalEvent, *Held)
	onListen func(ListenEvent)
}

func (s *server) idValid(id uint64) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(s.fd), uintptr(unix.SECCOMP_IOCTL_NOTIF_ID_VALID), uintptr(unsafe.Pointer(&id)))
	if e != 0 {
		return e
	}
	return nil
}

func (s *server) respond(id uint64, allow bool) error {
	r := seccompNotifResp{ID: id}
	if allow {
		// CONTINUE: the kernel runs the exec itself. seccomp_unotify(2):
		// never a security decision (TOCTOU); this is a guard rail.
		r.Flags = unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
	} else {
		r.Error = -int32(unix.EPERM)
	}
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(s.fd), uintptr(unix.SECCOMP_IOCTL_NOTIF_SEND), uintptr(unsafe.Pointer(&r)))
	if e != 0 {
		return e
	}
	return nil
}

func (s *server) handle(n *seccompNotif) {
	if int(n.Data.Nr) == unix.SYS_LISTEN {
		s.first = nil // only ever the first notification
		// The socket is read while the call waits (its fd is still the
		// one listen was given); the answer is always to go on.
		ev, ok := s.listenAddr(n)
		_ = s.respond(n.ID, true)
		if ok {
			s.onListen(ev)
		}
		return
	}
	if sig, ok := signalOf(n); ok {
		s.first = nil // only ever the first notification
		h := &Held{fd: s.fd, id: n.ID}
		if s.onSignal == nil {
			_ = h.Continue()
			return
		}
		s.onSignal(sig, h)
		return
	}
	var ev ExecEvent
	var alive bool
	var known *ExecEvent
	if s.first != nil && n.Data.Nr == int32(unix.SYS_EXECVE) {
		known = s.first()
	}
	s.first = nil // only ever the first notification
	if known != nil {
		ev, alive = s.known(n, known)
	} else {
		ev, alive = s.read(n)
	}
	args := ev.Argv
	if len(args) == 0 && ev.Path != "" {
		args = []string{ev.Path} // execve(path, NULL, ...): judge the path
	}
	ev.Rule = s.guard.Check(args, ev.Cwd)
	ev.Allowed = ev.Rule == "" && alive
	if s.onExec != nil {
		s.onExec(&ev)
	}
	// ENOENT here means the target died meanwhile: nothing to answer.
	_ = s.respond(n.ID, ev.Rule == "" && !ev.Refuse)
}

// known is read for the exec the notification is known to make (first):
// its path, argv and cwd as given, the pid the notification's. The id is
// checked as read checks it: a process that died meanwhile is not alive.
func (s *server) known(n *seccompNotif, first *ExecEvent) (ev ExecEvent, alive bool) {
	ev = ExecEvent{Pid: int(n.Pid), Path: first.Path, Argv: append([]string(nil), first.Argv...), Cwd: first.Cwd}
	if err := s.idValid(n.ID); err != nil {
		ev.Err = fmt.Sprintf("process exited before the exec was answered: %v", err)
		return ev, false
	}
	return ev, true
}

// read collects path, argv and cwd. The id is checked after /proc/PID/mem
// is opened (the pid named the notifying task at that moment, not a reused
// pid) and again after the reads (the memory we read belonged to it).
func (s *server) read(n *seccompNotif) (ev ExecEvent, alive bool) {
	ev = ExecEvent{Pid: int(n.Pid)}
	proc := "/proc/" + strconv.Itoa(int(n.Pid))
	// A bare descriptor, not an os.File: os.Open would try the runtime's
	// poller on it (four fcntl and an epoll_ctl refused) while the exec
	// waits.
	fd, err := unix.Open(proc+"/mem", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		ev.Err = (&os.PathError{Op: "open", Path: proc + "/mem", Err: err}).Error()
		return ev, false
	}
	defer unix.Close(fd)
	mem := memFile{fd: fd, path: proc + "/mem"}
	if err := s.idValid(n.ID); err != nil {
		ev.Err = fmt.Sprintf("process exited before the exec was answered: %v", err)
		return ev, false
	}
	var pathAddr, argvAddr uint64
	dirfd := int64(unix.AT_FDCWD)
	var flags uint64
	if n.Data.Nr == int32(unix.SYS_EXECVEAT) {
		dirfd, pathAddr, argvAddr, flags = int64(int32(n.Data.Args[0])), n.Data.Args[1], n.Data.Args[2], n.Data.Args[4]
	} else {
		pathAddr, argvAddr = n.Data.Args[0], n.Data.Args[1]
	}
	var errs []string
	path, err := readString(mem, pathAddr, maxPathLen)
	if err != nil && !(pathAddr == 0 && flags&unix.AT_EMPTY_PATH != 0) {
		errs = append(errs, "path: "+err.Error())
	}
	argv, err := readArgv(mem, argvAddr)
	if err != nil {
		errs = append(errs, "argv: "+err.Error())
	}
	cwd, err := os.Readlink(proc + "/cwd")
	if err != nil {
		errs = append(errs, "cwd: "+err.Error())
	}
	ev.Argv, ev.Cwd = argv, cwd
	switch {
	case filepath.IsAbs(path):
	case dirfd != int64(unix.AT_FDCWD):
		if d, err := os.Readlink(proc + "/fd/" + strconv.Itoa(int(dirfd))); err == nil {
			if path == "" { // fexecve / AT_EMPTY_PATH: the fd is the file
				path = d
			} else {
				path = filepath.Join(d, path)
			}
		}
	case path != "" && cwd != "":
		path = filepath.Join(cwd, path)
	}
	ev.Path = path
	alive = true
	if err := s.idValid(n.ID); err != nil {
		alive = false
		errs = append(errs, fmt.Sprintf("process exited before the exec was answered: %v", err))
	}
	if len(errs) > 0 {
		ev.Err = strings.Join(errs, "; ")
	}
	return ev, alive
}

// memFile reads a /proc/PID/mem descriptor as os.File.ReadAt would: until
// b is full, an error or the end (io.EOF), errors naming the file.
type memFile struct {
	fd   int
	path string
}

func (m memFile) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for len(b) > 0 {
		k, err := unix.Pread(m.fd, b, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, &os.PathError{Op: "read", Path: m.path, Err: err}
		}
		if k == 0 {
			return n, io.EOF
		}
		n += k
		b = b[k:]
		off += int64(k)
	}
	return n, nil
}

// Warm runs the reads of an exec answer (Serve's read: /proc/PID/mem as a
// bare descriptor, path, argv, cwd) once over this process's own memory,
// so that their first real use, while the agent's first execve waits for
// its answer, finds their code paged in. It reads only this process and
// changes nothing; errors are ignored (a warm-up that fails costs nothing).
func Warm() { _, _, _ = warmRead() }

// warmRead is Warm's reads: a path and a one-string argv of this process,
// read back through /proc/self/mem as Serve reads an exec's.
func warmRead() (string, []string, error) {
	arg := []byte("jail\x00")
	ptrs := []uintptr{uintptr(unsafe.Pointer(&arg[0])), 0}
	defer runtime.KeepAlive(arg)
	defer runtime.KeepAlive(ptrs)
	fd, err := unix.Open("/proc/self/mem", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, err
	}
	defer unix.Close(fd)
	mem := memFile{fd: fd, path: "/proc/self/mem"}
	path, err := readString(mem, uint64(ptrs[0]), maxPathLen)
	if err != nil {
		return "", nil, err
	}
	argv, err := readArgv(mem, uint64(uintptr(unsafe.Pointer(&ptrs[0]))))
	if err != nil {
		return path, nil, err
	}
	_, err = os.Readlink("/proc/self/cwd")
	return path, argv, err
}

// tgidOf is the process (thread group) of thread tid, from
// /proc/TID/status; tid itself where that cannot be read.
func tgidOf(tid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return tid
	}
	v, _ := procstat.StatusField(b, "Tgid")
	if n, err := strconv.Atoi(string(v)); err == nil {
		return n
	}
	return tid
}

// listenAddr reads the address of the socket a listen(2) notification
// names: a copy of the caller's descriptor (pidfd_getfd; the supervisor
// may ptrace what runs in the sandbox it started), checked to be an IPv4
// or IPv6 stream socket. The pidfd is taken before the id is checked
// again, so the pid named the waiting caller, not a later process given
// the same pid. false: no OnListen, or nothing to report.
func (s *server) listenAddr(n *seccompNotif) (ListenEvent, bool) {
	ev := ListenEvent{Pid: int(n.Pid)}
	if s.onListen == nil {
		return ev, false
	}
	// The notification names the calling thread, which pidfd_open takes
	// only with PIDFD_THREAD (Linux 6.9) unless it leads its process:
	// without it, a listen on any other thread (a Go server's, a test's
	// httptest server) went unreported. Older kernels: the thread's
	// process, which shares its descriptors.
	pidfd, err := unix.PidfdOpen(int(n.Pid), unix.PIDFD_THREAD)
	if err != nil {
		pidfd, err = unix.PidfdOpen(tgidOf(int(n.Pid)), 0)
	}
	if err != nil {
		return ev, false
	}
	defer unix.Close(pidfd)
	if s.idValid(n.ID) != nil {
		return ev, false
	}
	fd, err := unix.PidfdGetfd(pidfd, int(int32(n.Data.Args[0])), 0)
	if err != nil {
		return ev, false
	}
	defer unix.Close(fd)
	if t, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE); err != nil || t != unix.SOCK_STREAM {
		return ev, false
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return ev, false
	}
	// SIOCGSKNS needs CAP_NET_ADMIN over the socket's namespace, which a
	// supervisor has over its sandbox's (it owns the sandbox's user
	// namespace) and an unprivileged caller not over the host's: 0 then.
	if nsfd, err := unix.IoctlRetInt(fd, unix.SIOCGSKNS); err == nil {
		var st unix.Stat_t
		if unix.Fstat(nsfd, &st) == nil {
			ev.NetNS = st.Ino
		}
		unix.Close(nsfd)
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		ev.Addr = netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		ev.Addr = netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port))
	default:
		return ev, false // a Unix socket: nothing a port could publish
	}
	return ev, true
}

// signalOf reads a notification of kill, tkill or tgkill (the filter
// notifies them for SIGTSTP only).
func signalOf(n *seccompNotif) (SignalEvent, bool) {
	a := n.Data.Args
	ev := SignalEvent{Pid: int(n.Pid)}
	switch int(n.Data.Nr) {
	case unix.SYS_KILL:
		ev.Call, ev.Target, ev.Signal = "kill", int(int32(a[0])), int(int32(a[1]))
	case unix.SYS_TKILL:
		ev.Call, ev.Thread, ev.Signal = "tkill", int(int32(a[0])), int(int32(a[1]))
	case unix.SYS_TGKILL:
		ev.Call, ev.Target, ev.Thread, ev.Signal = "tgkill", int(int32(a[0])), int(int32(a[1])), int(int32(a[2]))
	default:
		return ev, false
	}
	return ev, true
}

// Held is a notified call waiting for its answer.
type Held struct {
	fd   int
	id   uint64
	once sync.Once
	err  error
}

// Waiting tells whether the call still waits for its answer (the kernel's
// SECCOMP_IOCTL_NOTIF_ID_VALID): false once its process died, or a signal
// ended its wait. Asked after reading the caller's /proc: the pid named
// that caller, not a later process given the same pid.
func (h *Held) Waiting() bool {
	id := h.id
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(h.fd), uintptr(unix.SECCOMP_IOCTL_NOTIF_ID_VALID), uintptr(unsafe.Pointer(&id)))
	return e == 0
}

// Continue lets the call go on: the kernel runs it as it would have
// without the filter. Only the first call answers; an answer to a call
// that no longer waits (its process died, or a signal ended the wait) is
// ENOENT.
func (h *Held) Continue() error {
	h.once.Do(func() {
		r := seccompNotifResp{ID: h.id, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(h.fd), uintptr(unix.SECCOMP_IOCTL_NOTIF_SEND), uintptr(unsafe.Pointer(&r))); e != 0 {
			h.err = e
		}
	})
	return h.err
}
