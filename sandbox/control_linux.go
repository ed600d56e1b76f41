package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/audit"
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

type ctlRequest struct {
	Op string `json:"op"`
}

type ctlReply struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// ctlCall is a request on its way to the main loop.
type ctlCall struct {
	op   string
	who  *audit.Requester
	done chan struct{}
}

// maxSunPath is the size of sockaddr_un's sun_path, NUL included.
const maxSunPath = 108

// controlPath is where the sandbox id's control socket lives.
func controlPath(id string) (string, error) {
	dir, err := registryDir()
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

func (r *runner) handleControl(c *net.UnixConn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	reply := func(rep ctlReply) { _ = json.NewEncoder(c).Encode(rep) }
	cred, err := peerCred(c)
	if err != nil {
		reply(ctlReply{Error: err.Error()})
		return
	}
	// Only the user who started the sandbox (or root) may stop it. The
	// directory already keeps others out; the check does not rely on it.
	if int(cred.Uid) != os.Getuid() && cred.Uid != 0 {
		reply(ctlReply{Error: "permission denied: not the sandbox's user"})
		return
	}
	var req ctlRequest
	if err := json.NewDecoder(io.LimitReader(c, 4096)).Decode(&req); err != nil {
		reply(ctlReply{Error: "bad request: " + err.Error()})
		return
	}
	if req.Op != ctlKill && req.Op != ctlStop {
		reply(ctlReply{Error: fmt.Sprintf("unknown operation %q", req.Op)})
		return
	}
	call := ctlCall{op: req.Op, who: &audit.Requester{PID: int(cred.Pid), UID: int(cred.Uid)}, done: make(chan struct{})}
	select {
	case r.ctlCh <- call:
	case <-r.ctx.Done():
		reply(ctlReply{OK: true}) // the sandbox is ending anyway
		return
	}
	select {
	case <-call.done:
		reply(ctlReply{OK: true})
	case <-time.After(4 * time.Second):
		reply(ctlReply{Error: "the supervisor did not answer"})
	}
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
func askControl(path, op string) error {
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(6 * time.Second))
	if err := json.NewEncoder(c).Encode(ctlRequest{Op: op}); err != nil {
		return err
	}
	var rep ctlReply
	if err := json.NewDecoder(io.LimitReader(c, 4096)).Decode(&rep); err != nil {
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
