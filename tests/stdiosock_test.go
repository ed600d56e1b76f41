//go:build linux

package tests

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestStdioHostNetSocketRefused (review15d): a socket keeps the network
// namespace it was made in. A host UDP socket handed to `jail --net none`
// as stdin (bash's `< /dev/udp/HOST/PORT`, an inetd or socket-activated
// service's, a Go caller's net.Conn) is connect(2)ed again by the agent
// to any address of the host's network: --net none, the proxy's allow
// list and --no-local-tcp all bypassed. A connected TCP socket too: the
// agent disconnects it with connect(AF_UNSPEC) and connects it anew.
// Refused (exit 125, one line); a Unix socketpair (ssh's stdio) still
// runs. Seen failing on main's binary (0c3548a), as root and as jailtest:
// the agent's datagram reached a UDP listener on the host's loopback, and
// the TCP socket, disconnected, reached a second TCP listener there, exit
// 0.
func TestStdioHostNetSocketRefused(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("python3 is needed for the probe: %v", err)
	}
	host, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	port := host.LocalAddr().(*net.UDPAddr).Port
	const token = "FROM-SANDBOX-NET-NONE"
	probe := "import socket\ns=socket.socket(fileno=0)\ns.connect(('127.0.0.1'," + strconv.Itoa(port) + "))\ns.send(b'" + token + "')\nprint('sent')\n"

	runWith := func(t *testing.T, stdin *os.File, script []string) (int, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, jail(t), append([]string{"--quiet", "--net", "none", "--"}, script...)...)
		cmd.Dir = workspace(t)
		var out bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &out, &out
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), out.String()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, out.String()
	}
	udp := func(t *testing.T, connect bool) *os.File {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		if connect {
			if err := unix.Connect(fd, &unix.SockaddrInet4{Port: 9, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
				t.Fatal(err)
			}
		}
		f := os.NewFile(uintptr(fd), "udp")
		t.Cleanup(func() { f.Close() })
		return f
	}
	for _, c := range []struct {
		name    string
		connect bool
	}{{"connected udp", true}, {"unconnected udp", false}} {
		t.Run(c.name, func(t *testing.T) {
			code, out := runWith(t, udp(t, c.connect), []string{"python3", "-c", probe})
			host.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			buf := make([]byte, 64)
			if n, _, err := host.ReadFrom(buf); err == nil && strings.Contains(string(buf[:n]), token) {
				t.Fatalf("ATTACK WORKED: under --net none the agent reached the host's loopback through its stdin socket (exit %d): %s", code, out)
			}
			if code != 125 || !strings.Contains(out, "stdin is a host network socket") || strings.Count(strings.TrimSpace(out), "\n") != 0 {
				t.Fatalf("exit %d, want 125 with one line naming stdin:\n%s", code, out)
			}
		})
	}

	// A connected TCP socket: disconnected (connect with AF_UNSPEC) and
	// connected to another listener of the host's.
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	second, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	reached := make(chan string, 1)
	go func() {
		c, err := second.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 64)
		n, _ := c.Read(buf)
		reached <- string(buf[:n])
	}()
	conn, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tcpf, err := conn.(*net.TCPConn).File()
	if err != nil {
		t.Fatal(err)
	}
	defer tcpf.Close()
	reconnect := "import socket,ctypes\nctypes.CDLL(None).connect(0,(ctypes.c_ubyte*16)(),16)\ns=socket.socket(fileno=0)\ns.connect(('127.0.0.1'," +
		strconv.Itoa(second.Addr().(*net.TCPAddr).Port) + "))\ns.send(b'" + token + "')\nprint('sent')\n"
	code, out := runWith(t, tcpf, []string{"python3", "-c", reconnect})
	select {
	case got := <-reached:
		if strings.Contains(got, token) {
			t.Fatalf("ATTACK WORKED: under --net none the agent disconnected its stdin TCP socket and reached another host listener (exit %d): %s", code, out)
		}
	case <-time.After(300 * time.Millisecond):
	}
	if code != 125 || !strings.Contains(out, "stdin is a host network socket") {
		t.Fatalf("a connected TCP socket as stdin: exit %d, want 125:\n%s", code, out)
	}

	// What still runs: a Unix socketpair (ssh's stdio).
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := os.NewFile(uintptr(pair[0]), "pair0"), os.NewFile(uintptr(pair[1]), "pair1")
	defer a.Close()
	defer b.Close()
	if code, out := runWith(t, a, []string{"/bin/sh", "-c", "echo ran"}); code != 0 || strings.TrimSpace(out) != "ran" {
		t.Errorf("a unix socketpair as stdin: exit %d, want 0:\n%s", code, out)
	}
}
