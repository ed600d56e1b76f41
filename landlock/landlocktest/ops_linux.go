package landlocktest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func errnoName(err error) string {
	if err == nil {
		return "ok"
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		if n := unix.ErrnoName(en); n != "" {
			return n
		}
	}
	return "error: " + err.Error()
}

func arg(op Op, i int) string {
	if i < len(op.Args) {
		return op.Args[i]
	}
	return ""
}

func do(op Op) error {
	a, b := arg(op, 0), arg(op, 1)
	switch op.Name {
	case "read":
		f, err := os.Open(a)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.Read(make([]byte, 1))
		if errors.Is(err, io.EOF) {
			err = nil
		}
		return err
	case "readdir":
		_, err := os.ReadDir(a)
		return err
	case "write":
		f, err := os.OpenFile(a, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.Write([]byte("pwned\n"))
		return err
	case "create":
		f, err := os.OpenFile(a, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		return f.Close()
	case "opentrunc":
		f, err := os.OpenFile(a, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return err
		}
		return f.Close()
	case "truncate":
		return unix.Truncate(a, 0)
	case "chmod":
		return unix.Chmod(a, 0o777)
	case "utime":
		return unix.UtimesNano(a, []unix.Timespec{{Sec: 1}, {Sec: 1}})
	case "mkdir":
		return unix.Mkdir(a, 0o755)
	case "unlink":
		return unix.Unlink(a)
	case "rename":
		return unix.Rename(a, b)
	case "link":
		return unix.Link(a, b)
	case "symlink":
		return unix.Symlink(a, b)
	case "exec":
		// ForkExec, not os/exec: os/exec opens /dev/null for missing stdio,
		// which the rules under test may deny.
		pid, err := syscall.ForkExec(a, []string{a}, &syscall.ProcAttr{Files: []uintptr{2, 2, 2}})
		if err != nil {
			return err
		}
		var ws syscall.WaitStatus
		_, err = syscall.Wait4(pid, &ws, 0, nil)
		return err
	case "tcpconnect":
		return sockConnect(unix.IPPROTO_TCP, a)
	case "mptcpconnect":
		return sockConnect(unix.IPPROTO_MPTCP, a)
	case "tcpbind":
		fd, sa, err := inetSocket(unix.IPPROTO_TCP, a)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Bind(fd, sa)
	case "kill":
		pid, err := strconv.Atoi(a)
		if err != nil {
			return err
		}
		return unix.Kill(pid, 0)
	case "abstractconnect":
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Connect(fd, &unix.SockaddrUnix{Name: "@" + a})
	case "tcgets":
		f, err := os.OpenFile(a, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
		return err
	}
	return fmt.Errorf("unknown op %q", op.Name)
}

func inetSocket(proto int, addr string) (int, unix.Sockaddr, error) {
	ta, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return -1, nil, err
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return -1, nil, err
	}
	sa := &unix.SockaddrInet4{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To4())
	return fd, sa, nil
}

func sockConnect(proto int, addr string) error {
	fd, sa, err := inetSocket(proto, addr)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	tv := unix.NsecToTimeval(int64(2 * time.Second))
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	return unix.Connect(fd, sa)
}
