package ns

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// maxMsg bounds one datagram. Larger messages (a Spec with thousands of masks)
// travel in a sealed memfd passed as the first fd of a msgBig envelope, because
// SOCK_SEQPACKET datagrams are capped by the socket buffer (net.core.wmem_max).
const maxMsg = 60 << 10

const msgBig = "big"

// recvBufs are Recv's datagram buffers, reused: a fresh 60 KiB one per
// message was fresh pages each time while the collector is held (a fault
// each at 18-30 µs on a paravirtualized VM). Nothing decoded aliases one
// (decodeMessage copies), so a buffer goes back as soon as it is decoded.
var recvBufs = sync.Pool{New: func() any { b := make([]byte, maxMsg); return &b }}

// maxFDs is the most fds one message carries (the kernel's SCM_MAX_FD is 253).
const maxFDs = 250

// ErrBadMessage is Recv's error for one message that arrived but could not
// be taken whole (truncated, undecodable, its memfd unreadable): that
// datagram is consumed and the connection goes on; the next Recv reads the
// next message.
var ErrBadMessage = errors.New("message not received whole")

// ErrFDsLost is Recv's error for a message whose payload arrived whole but
// whose fds did not all (MSG_CTRUNC: the receiver's open-file limit, or more
// fds than the control buffer holds). Recv returns the decoded message with
// it, and no fds, so the receiver can answer that request with why.
var ErrFDsLost = errors.New("the fds sent with it could not all be received")

// Conn is one end of the supervisor/init socketpair (SOCK_SEQPACKET: message
// boundaries are kept, so one read is one message and its fds).
type Conn struct{ f *os.File }

// NewConn wraps a SOCK_SEQPACKET socket.
func NewConn(f *os.File) *Conn { return &Conn{f: f} }

// Close closes the socket.
func (c *Conn) Close() error { return c.f.Close() }

// Send writes one message with optional fds attached (SCM_RIGHTS).
func (c *Conn) Send(m Message, files ...*os.File) error {
	b := encodeMessage(m)
	if len(b) > maxMsg {
		mf, err := bigPayload(b)
		if err != nil {
			return fmt.Errorf("send %s message: %w", m.Type, err)
		}
		defer mf.Close()
		b = bigEnvelope()
		files = append([]*os.File{mf}, files...)
	}
	if len(files) > maxFDs {
		return fmt.Errorf("send %s message: %d fds, at most %d fit in one message", m.Type, len(files), maxFDs)
	}
	var oob []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		oob = unix.UnixRights(fds...)
	}
	raw, err := c.f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = raw.Write(func(fd uintptr) bool {
		serr = unix.Sendmsg(int(fd), b, oob, nil, 0)
		return serr != unix.EAGAIN
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("send %s message: %w", m.Type, err)
	}
	return nil
}

// Recv reads one message and the fds that came with it. Received fds are
// close-on-exec (MSG_CMSG_CLOEXEC), so none can leak into the agent.
func (c *Conn) Recv() (Message, []*os.File, error) {
	var m Message
	bp := recvBufs.Get().(*[]byte)
	defer recvBufs.Put(bp)
	buf := *bp
	oob := make([]byte, unix.CmsgSpace(maxFDs*4))
	raw, err := c.f.SyscallConn()
	if err != nil {
		return m, nil, err
	}
	var n, oobn, rflags int
	var rerr error
	err = raw.Read(func(fd uintptr) bool {
		n, oobn, rflags, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		return rerr != unix.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return m, nil, fmt.Errorf("receive message: %w", err)
	}
	if n == 0 {
		return m, nil, fmt.Errorf("receive message: %w", os.ErrClosed)
	}
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	if oobn > 0 {
		scms, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			closeAll()
			return m, nil, fmt.Errorf("parse control message: %w: %w", ErrBadMessage, err)
		}
		for _, scm := range scms {
			fds, err := unix.ParseUnixRights(&scm)
			if err != nil {
				continue
			}
			for _, fd := range fds {
				files = append(files, os.NewFile(uintptr(fd), "passed-fd"))
			}
		}
	}
	// A truncated message or control buffer loses data or fds silently:
	// refuse it (and close what did arrive) rather than act on half of it.
	if rflags&unix.MSG_TRUNC != 0 {
		closeAll()
		return m, nil, fmt.Errorf("receive message: %w: truncated (flags %#x)", ErrBadMessage, rflags)
	}
	payload := buf[:n]
	if rflags&unix.MSG_CTRUNC != 0 {
		// The payload is whole, some fds are not: never act on it with
		// part of its fds (a command with stdin missing would read
		// whatever took that number), but hand back what it was, without
		// fds, so the receiver can refuse that very request: the agent can
		// lower init's open-file limit (review15a), and init's request
		// loop ended here, every later jail exec waiting for its deadline.
		closeAll()
		if bytes.Equal(payload, bigEnvelope()) {
			return m, nil, fmt.Errorf("receive message: %w: large message, %w (flags %#x)", ErrBadMessage, ErrFDsLost, rflags)
		}
		m, err = decodeMessage(payload)
		if err != nil {
			return Message{}, nil, fmt.Errorf("decode message: %w: %w", ErrBadMessage, err)
		}
		return m, nil, fmt.Errorf("receive %s message: %w (flags %#x)", m.Type, ErrFDsLost, rflags)
	}
	if bytes.Equal(payload, bigEnvelope()) {
		if len(files) == 0 {
			return m, nil, fmt.Errorf("receive message: %w: large message without its memfd", ErrBadMessage)
		}
		mf := files[0]
		files = files[1:]
		payload, err = io.ReadAll(io.NewSectionReader(mf, 0, 1<<30))
		mf.Close()
		if err != nil {
			closeAll()
			return m, nil, fmt.Errorf("receive message: %w: read memfd: %w", ErrBadMessage, err)
		}
	}
	m, err = decodeMessage(payload)
	if err != nil {
		closeAll()
		return m, nil, fmt.Errorf("decode message: %w: %w", ErrBadMessage, err)
	}
	return m, files, nil
}

// bigEnvelope is the whole datagram of a message that travels in a memfd
// (the memfd is its first fd).
func bigEnvelope() []byte { return encodeMessage(Message{Type: msgBig}) }

// bigPayload stores b in a sealed memfd, so the receiver reads exactly what was sent.
func bigPayload(b []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate("jail-msg", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "jail-msg")
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("write memfd: %w", err)
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL); err != nil {
		f.Close()
		return nil, fmt.Errorf("seal memfd: %w", err)
	}
	return f, nil
}

// Socketpair returns a connected SOCK_SEQPACKET pair, both ends close-on-exec
// (the child's end is passed explicitly through ExtraFiles).
func Socketpair() (*os.File, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "jail-supervisor"), os.NewFile(uintptr(fds[1]), "jail-init"), nil
}
