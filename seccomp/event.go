package seccomp

import "net/netip"

// ExecEvent is one execve/execveat seen by Serve, reported before the
// kernel is told to go on (so the record precedes the exec).
type ExecEvent struct {
	Pid     int      // in the supervisor's pid namespace
	Path    string   // as passed; made absolute against cwd or dirfd when possible
	Argv    []string // as read from the process's memory (may be truncated: see Err)
	Cwd     string
	Allowed bool   // false: refused with EPERM, or the process vanished
	Rule    string // the Guard rule that refused it
	Err     string // what could not be read ("" when all went well)
	// Refuse, set by Serve's onExec, answers the exec EPERM though the
	// guard allows it (sandbox: a jail exec command whose request was
	// given up must not start late).
	Refuse bool
}

// SignalEvent is a signal sent by kill, tkill or tgkill that the exec
// audit's filter holds for the supervisor (SIGTSTP: a process stopping
// itself, which the kernel discards where the process's group is
// orphaned: Handlers.OnSignal). The numbers are as passed, in the
// caller's pid namespace; Pid is the calling thread in the supervisor's.
type SignalEvent struct {
	Pid    int
	Call   string // kill, tkill, tgkill
	Target int    // kill's pid (0: the caller's group; -N: group N), tgkill's tgid
	Thread int    // tkill's and tgkill's tid
	Signal int
}

// ListenEvent is a listen(2) the exec audit's filter reported: a TCP
// socket's address as it was bound when the call was made (port 0: the
// call binds one itself, an ephemeral port). A hint, never a decision: the
// call has been continued when Handlers.OnListen hears of it.
type ListenEvent struct {
	Pid  int // in the supervisor's pid namespace
	Addr netip.AddrPort
	// NetNS is the inode of the socket's network namespace (SIOCGSKNS):
	// a sandbox inside the sandbox listens in a namespace of its own. 0:
	// the server may not ask (no CAP_NET_ADMIN over that namespace).
	NetNS uint64
}

// Handlers are what ServeWith does with each notification.
type Handlers struct {
	Guard  *Guard            // asked of each exec (nil allows all)
	First  func() *ExecEvent // the first exec, when known (ServeFirst)
	OnExec func(*ExecEvent)  // each exec, synchronously
	// OnSignal gets each SIGTSTP sent by kill, tkill or tgkill, the call
	// held until held.Continue (which the kernel then runs as it would
	// have). It runs synchronously and may keep held to continue it
	// later, from any goroutine: the caller waits meanwhile, and a signal
	// it gets ends the wait (the call restarts, a new notification, or
	// fails EINTR; Continue of the old one then does nothing). nil: each
	// is continued at once.
	OnSignal func(ev SignalEvent, held *Held)
	// OnListen gets each listen(2) on an IPv4 or IPv6 TCP socket, after
	// the call was continued (what listens where: a server the host
	// cannot reach). nil: each is continued at once, the socket not read.
	OnListen func(ListenEvent)
}
