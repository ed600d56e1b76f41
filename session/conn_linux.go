package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// maxLine bounds one request or reply (argv and environment included).
const maxLine = 1 << 20

// maxFDs is the most fds one connection may carry before a line ends.
const maxFDs = 3

// Conn is a control connection: JSON lines, with fds attached to a line.
type Conn struct {
	c     *net.UnixConn
	buf   []byte
	fds   []*os.File
	ended bool
}

// NewConn wraps a connected Unix stream socket.
func NewConn(c *net.UnixConn) *Conn { return &Conn{c: c} }

// Dial connects to the control socket at path, served by this user: a
// socket another user serves (planted in a registry, reached through a
// symlink) gets nothing, not even the request (an exec's stdio fds).
func Dial(path string) (*Conn, error) {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	raw, err := c.SyscallConn()
	var cred *unix.Ucred
	var cerr error
	if err == nil {
		err = raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
	}
	if err == nil {
		err = cerr
	}
	if err == nil && int(cred.Uid) != os.Getuid() {
		err = fmt.Errorf("%s is served by uid %d, not by you: not a sandbox of yours", path, cred.Uid)
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	return NewConn(c), nil
}

// Unix is the underlying socket (deadlines, peer credentials).
func (c *Conn) Unix() *net.UnixConn { return c.c }

// Close closes the connection and any fd received but not taken.
func (c *Conn) Close() error {
	for _, f := range c.fds {
		f.Close()
	}
	c.fds = nil
	return c.c.Close()
}

// Send writes v as one line, with files attached (SCM_RIGHTS).
func (c *Conn) Send(v any, files ...*os.File) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	var oob []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		oob = unix.UnixRights(fds...)
	}
	n, _, err := c.c.WriteMsgUnix(b, oob, nil)
	if err != nil {
		return err
	}
	if n < len(b) {
		_, err = c.c.Write(b[n:])
	}
	return err
}

// Recv reads the next line into v and returns the fds that came with it
// (close-on-exec). The caller owns them.
func (c *Conn) Recv(v any) ([]*os.File, error) {
	for {
		if i := bytes.IndexByte(c.buf, '\n'); i >= 0 {
			line := c.buf[:i]
			c.buf = c.buf[i+1:]
			fds := c.fds
			c.fds = nil
			if err := json.Unmarshal(line, v); err != nil {
				for _, f := range fds {
					f.Close()
				}
				return nil, fmt.Errorf("bad message: %w", err)
			}
			return fds, nil
		}
		if c.ended {
			return nil, errors.New("connection closed")
		}
		if len(c.buf) > maxLine {
			return nil, errors.New("message too long")
		}
		p := make([]byte, 64<<10)
		oob := make([]byte, unix.CmsgSpace(maxFDs*4))
		n, oobn, flags, _, err := c.c.ReadMsgUnix(p, oob)
		n, oobn = max(n, 0), max(oobn, 0) // -1 with some errors
		if oobn > 0 {
			if perr := c.takeFDs(oob[:oobn]); perr != nil && err == nil {
				err = perr
			}
		}
		// A truncated control message lost fds: refuse the whole request.
		if flags&unix.MSG_CTRUNC != 0 && err == nil {
			err = errors.New("too many file descriptors")
		}
		c.buf = append(c.buf, p[:n]...)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			c.ended = true
		}
	}
}

func (c *Conn) takeFDs(oob []byte) error {
	scms, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return err
	}
	for _, scm := range scms {
		fds, err := unix.ParseUnixRights(&scm)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			unix.CloseOnExec(fd)
			c.fds = append(c.fds, os.NewFile(uintptr(fd), "passed-fd"))
		}
	}
	if len(c.fds) > maxFDs {
		return errors.New("too many file descriptors")
	}
	return nil
}
