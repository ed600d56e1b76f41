//go:build linux

package nsnet

// Test harness: the test binary re-executes itself into new user+net namespaces
// (a stand-in for the sandbox's init), calls Setup there, passes the sockets back
// over a SOCK_SEQPACKET socketpair with SCM_RIGHTS, then acts as "a process in S"
// on the parent's command.

import (
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const childEnv = "NSNET_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	os.Exit(m.Run())
}

// wire is the JSON form of a Result.
type wire struct {
	Mode, Reason         string
	ReasonForced         bool
	ReasonUnavailable    bool
	SandboxAddr, Gateway string
	ProxyAddr            string
	ElapsedMS            float64
	HasDNS               bool
	Err                  string
	// Extras name the files after TCP's (and DNS's): "resets",
	// "hostport".
	Extras         []string
	HostPortsTaken []uint16
}

// testHostPort is the port the "hostports" modes reach on the host's
// loopback.
const testHostPort = 47123

// cmd is a parent -> child request; reply the answer.
type cmd struct {
	Op      string // tcp, udp, tcp6, ping, threads, state, bench, exit
	Addr    string
	Payload string
	Bytes   int64
}
type reply struct {
	OK        bool
	Data      string
	Err       string
	Errno     int
	ElapsedMS float64
}

func sendMsg(fd int, v any, files ...*os.File) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var oob []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		oob = unix.UnixRights(fds...)
	}
	return unix.Sendmsg(fd, b, oob, nil, 0)
}

func recvMsg(fd int, v any) ([]*os.File, error) {
	buf := make([]byte, 1<<16)
	oob := make([]byte, unix.CmsgSpace(4*8))
	n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("recvmsg", err)
	}
	if n == 0 {
		return nil, errors.New("peer closed the socketpair")
	}
	var files []*os.File
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			fds, err := unix.ParseUnixRights(&m)
			if err != nil {
				return nil, err
			}
			for _, fd := range fds {
				files = append(files, os.NewFile(uintptr(fd), "passed"))
			}
		}
	}
	return files, json.Unmarshal(buf[:n], v)
}

// child is the parent's view of one re-executed namespace child.
type child struct {
	t      testing.TB
	cmd    *exec.Cmd
	sock   int
	res    wire
	TCP    *os.File
	DNS    *os.File
	Resets *os.File // mode "none": the reset watch, in TCP's place
	// HostPorts are the listeners Setup made for Config.HostPorts.
	HostPorts []*os.File
	exited    bool
}

// inCI: security tests must fail, not skip, when CI=true.
func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// startChild re-executes the test binary in new user+net namespaces with uid/gid
// mapped to themselves and ambient capabilities, like jail's init.
func startChild(t testing.TB, mode string, caps []uintptr) *child {
	t.Helper()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socketpair: %v", err)
	}
	theirs := os.NewFile(uintptr(pair[1]), "child-sock")
	c := exec.Command("/proc/self/exe", "-test.run=^$")
	c.Env = append(os.Environ(), childEnv+"="+mode)
	c.ExtraFiles = []*os.File{theirs} // fd 3
	c.Stdout, c.Stderr = os.Stderr, os.Stderr
	uid, gid := os.Getuid(), os.Getgid()
	inUID, inGID := uid, gid
	if caps != nil && uid == 0 {
		// Explicit caps only mean something for a non-root uid inside (root in a
		// user namespace gets every capability at exec): map host root to 1000.
		inUID, inGID = 1000, 1000
	}
	if caps == nil {
		caps = []uintptr{unix.CAP_NET_ADMIN, unix.CAP_SYS_ADMIN, unix.CAP_NET_BIND_SERVICE, unix.CAP_NET_RAW}
	}
	c.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: inUID, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: inGID, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
		AmbientCaps:                caps,
		Pdeathsig:                  syscall.SIGKILL,
	}
	if err := c.Start(); err != nil {
		theirs.Close()
		unix.Close(pair[0])
		skipOrFail(t, "cannot create user+net namespaces here: %v", err)
	}
	theirs.Close()
	ch := &child{t: t, cmd: c, sock: pair[0]}
	t.Cleanup(ch.close)
	files, err := recvMsg(ch.sock, &ch.res)
	if err != nil {
		t.Fatalf("receive setup result: %v", err)
	}
	if ch.res.Err != "" {
		for _, f := range files {
			f.Close()
		}
		t.Fatalf("Setup in child: %s", ch.res.Err)
	}
	if len(files) > 0 && mode == "none" {
		ch.Resets = files[0]
	} else if len(files) > 0 {
		ch.TCP = files[0]
	}
	rest := files[min(1, len(files)):]
	if ch.res.HasDNS && len(rest) > 0 {
		ch.DNS, rest = rest[0], rest[1:]
	}
	for i, name := range ch.res.Extras {
		if i >= len(rest) {
			break
		}
		switch name {
		case "resets":
			ch.Resets = rest[i]
		case "hostport":
			ch.HostPorts = append(ch.HostPorts, rest[i])
		}
	}
	return ch
}

func (c *child) do(q cmd) reply {
	c.t.Helper()
	if err := sendMsg(c.sock, q); err != nil {
		c.t.Fatalf("send %s: %v", q.Op, err)
	}
	var r reply
	if _, err := recvMsg(c.sock, &r); err != nil {
		c.t.Fatalf("reply to %s: %v", q.Op, err)
	}
	return r
}

// wait ends the child and returns once it has exited.
func (c *child) wait() {
	if c.exited {
		return
	}
	c.exited = true
	_ = sendMsg(c.sock, cmd{Op: "exit"})
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			c.t.Errorf("child exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		<-done
		c.t.Errorf("child did not exit")
	}
}

// close is idempotent: an fd number must never be closed twice (it may have been
// reused by then).
func (c *child) close() {
	c.wait()
	if c.sock < 0 {
		return
	}
	unix.Close(c.sock)
	c.sock = -1
	if c.TCP != nil {
		c.TCP.Close()
	}
	if c.Resets != nil {
		c.Resets.Close()
	}
	if c.DNS != nil {
		c.DNS.Close()
	}
}

func errnoOf(err error) int {
	var e syscall.Errno
	if errors.As(err, &e) {
		return int(e)
	}
	return 0
}

func mustAddrPort(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
