package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/session"
)

// This file: the supervisor's control socket. `jail kill` asks through it
// rather than with signals: the supervisor then knows who asked (the peer's
// pid and uid, from the kernel: SO_PEERCRED) and answers when the request
// is recorded and acted on, so the kill is in the trail under its own name
// and the caller's exit status is true. One socket per supervisor, beside
// its registry record (0700 directory, 0600 socket, peer uid checked).

// Control operations.
const (
	ctlKill = "kill" // kill everything now (jail kill --now)
	ctlStop = "stop" // SIGTERM to the command, everything killed after --kill-grace (jail kill)
)

// ctlCall is a request on its way to the main loop.
type ctlCall struct {
	op     string
	who    *audit.Requester
	reason string // jail kill --reason
	done   chan struct{}
}

// maxSunPath is the size of sockaddr_un's sun_path, NUL included.
const maxSunPath = 108

// controlPath is where the sandbox id's control socket lives.
func controlPath(id string) (string, error) {
	dir, err := ensureRegistry()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, id+".sock")
	if len(p) >= maxSunPath {
		return "", fmt.Errorf("control socket path %s is too long for a Unix socket", p)
	}
	return p, nil
}

// serveControl listens on the control socket until the returned function
// is called. Requests reach the main loop on r.ctlCh.
func (r *runner) serveControl() (path string, stop func()) {
	path, err := controlPath(r.id)
	if err != nil {
		r.debugf("no control socket (jail kill falls back to signals): %v", err)
		return "", func() {}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		r.debugf("no control socket: %v", err)
		return "", func() {}
	}
	old := unix.Umask(0o177) // the socket is born 0600: no window in which another user could connect
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	unix.Umask(old)
	if err != nil {
		r.debugf("no control socket: %v", err)
		return "", func() {}
	}
	ln.SetUnlinkOnClose(true)
	go func() {
		for {
			c, err := ln.AcceptUnix()
			if err != nil {
				return
			}
			go r.handleControl(c)
		}
	}()
	return path, func() { ln.Close() }
}

func (r *runner) handleControl(uc *net.UnixConn) {
	c := session.NewConn(uc)
	defer c.Close()
	_ = uc.SetDeadline(time.Now().Add(5 * time.Second))
	reply := func(rep session.Reply) { _ = c.Send(rep) }
	cred, err := peerCred(uc)
	if err != nil {
		reply(session.Reply{Error: err.Error()})
		return
	}
	// Only the user who started the sandbox (or root) may drive it. The
	// directory already keeps others out; the check does not rely on it.
	if int(cred.Uid) != os.Getuid() && cred.Uid != 0 {
		reply(session.Reply{Error: "permission denied: not the sandbox's user"})
		return
	}
	// A process inside any sandbox runs as the same host uid as its user
	// (unprivileged jail): the uid check alone would let an agent that
	// reached a socket (a visible state directory, an inherited fd) exec
	// into, stop or kill sandboxes. Its user namespace gives it away.
	if !peerInOwnUserNS(uc, int(cred.Pid)) {
		reply(session.Reply{Error: "permission denied: the peer is inside a sandbox"})
		return
	}
	var req session.Request
	files, err := c.Recv(&req)
	if err != nil {
		reply(session.Reply{Error: "bad request: " + err.Error()})
		return
	}
	who := &audit.Requester{PID: int(cred.Pid), UID: int(cred.Uid)}
	switch req.Op {
	case ctlKill, ctlStop:
	case session.OpExec:
		_ = uc.SetDeadline(time.Time{}) // as long as the command runs
		r.handleExec(c, req, files, who)
		return
	case session.OpAttach:
		closeAll(files)
		r.handleAttach(c, who, req.Suspends)
		return
	case session.OpInspect:
		closeAll(files)
		reply(session.Reply{OK: true, Info: r.inspect()})
		return
	default:
		closeAll(files)
		reply(session.Reply{Error: fmt.Sprintf("unknown operation %q", req.Op)})
		return
	}
	closeAll(files)
	call := ctlCall{op: req.Op, who: who, reason: req.Reason, done: make(chan struct{})}
	select {
	case r.ctlCh <- call:
	case <-r.ctx.Done():
		reply(session.Reply{OK: true}) // the sandbox is ending anyway
		return
	}
	select {
	case <-call.done:
		reply(session.Reply{OK: true})
	case <-time.After(4 * time.Second):
		reply(session.Reply{Error: "the supervisor did not answer"})
	}
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// peerInOwnUserNS tells whether the peer of uc, pid being its SO_PEERCRED
// pid, runs in the supervisor's own user namespace. pid alone is only a
// number: had the peer (an agent) exited and its pid been reused by a host
// process before /proc/PID is read, that process's namespace would answer.
// Where the kernel has SO_PEERPIDFD (6.5+) the answer is pinned to the
// process that connected: its pidfd is taken first, /proc/PID read, and
// the pidfd must still name a live process then; alive, it has held the
// pid all along, so /proc/PID was it. Older kernels: the pid alone.
func peerInOwnUserNS(uc *net.UnixConn, pid int) bool {
	pidfd, err := peerPidfd(uc)
	switch {
	case errors.Is(err, unix.ENOPROTOOPT):
		return sameUserNS(pid) // before Linux 6.5
	case err != nil:
		return false // the peer is gone (EINVAL, ESRCH) or unknown: fail closed
	}
	defer unix.Close(pidfd)
	if testPeerPidReused != nil {
		pid = testPeerPidReused(pid)
	}
	if !sameUserNS(pid) {
		return false
	}
	// Signal 0 checks that the process lives; EPERM (root's jail kill of a
	// user's sandbox is allowed, the user cannot signal root) says so too.
	err = unix.PidfdSendSignal(pidfd, 0, nil, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// testPeerPidReused, set by a test, stands for the peer's pid being reused
// between its pidfd and the read of /proc/PID: it returns the pid then read.
var testPeerPidReused func(pid int) int

// peerPidfd returns a pidfd of uc's peer (SO_PEERPIDFD; close-on-exec).
func peerPidfd(uc *net.UnixConn) (int, error) {
	raw, err := uc.SyscallConn()
	if err != nil {
		return -1, err
	}
	pidfd, gerr := -1, error(nil)
	if err := raw.Control(func(fd uintptr) {
		pidfd, gerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PEERPIDFD)
	}); err != nil {
		return -1, err
	}
	return pidfd, gerr
}

// sameUserNS tells whether pid runs in the supervisor's own user namespace.
func sameUserNS(pid int) bool {
	var a, b unix.Stat_t
	if unix.Stat("/proc/self/ns/user", &a) != nil || unix.Stat(fmt.Sprintf("/proc/%d/ns/user", pid), &b) != nil {
		return false // fail closed
	}
	return a.Dev == b.Dev && a.Ino == b.Ino
}

func peerCred(c *net.UnixConn) (*unix.Ucred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	return cred, cerr
}

// askControl sends op to the supervisor listening on path and waits for
// its answer.
func askControl(path, op, reason string) error {
	c, err := session.Dial(path)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.Unix().SetDeadline(time.Now().Add(6 * time.Second))
	if err := c.Send(session.Request{Op: op, Reason: reason}); err != nil {
		return err
	}
	var rep session.Reply
	if _, err := c.Recv(&rep); err != nil {
		return fmt.Errorf("no answer: %w", err)
	}
	if !rep.OK {
		return errors.New(rep.Error)
	}
	return nil
}

// gone tells whether a control request failed because the supervisor has
// just ended (its socket is closed or removed).
func gone(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}
