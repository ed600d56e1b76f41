// Command probe is the workload that `make bench` runs inside and outside the
// sandbox. Every mode prints its own measurement on stdout, so jail's startup
// does not pollute loop timings:
//
//	probe getppid N          N getppid(2) calls; prints ns=ELAPSED
//	probe getppid-floor N    the same under an allow-all seccomp filter
//	probe open N PATH        N open(2)+close(2) of PATH; prints ns=ELAPSED
//	probe time CMD [ARG...]  runs CMD; prints ns=ELAPSED (exit status passed on)
//	probe get ADDR           reads ADDR until EOF; prints ns=ELAPSED bytes=N
//	probe get-paced ADDR     the same, asking for the server's paced download
//	probe ping ADDR N        N x (dial, 1-byte echo, close); prints ns=... per try
//	probe greeting ADDR N    N x (dial, read the server's greeting, close), a
//	                         server-first protocol; prints ns=... per try
//	probe dns NAME N HOSTNS  N raw A queries to the resolv.conf server, which
//	                         must not be one of HOSTNS (comma-separated: the
//	                         host's own resolvers); prints ns=... per query
//	probe hold ADDR N        holds N connections open, prints "ready", waits for stdin EOF
//	probe relay ADDR         relays every connection to a loopback listener it
//	                         prints (addr=HOST:PORT) to ADDR, the way any relaying
//	                         proxy must at least (a second TCP connection, splice(2)
//	                         both ways, no checks), until stdin EOF
package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fail(fmt.Errorf("usage: probe getppid|open|time|get|ping|greeting|dns|hold ARGS"))
	}
	arg := os.Args[2:]
	start := time.Now()
	switch os.Args[1] {
	case "getppid", "getppid-floor":
		if os.Args[1] == "getppid-floor" {
			if err := allowAllFilter(); err != nil {
				fail(err)
			}
			start = time.Now()
		}
		for n := atoi(arg[0]); n > 0; n-- {
			syscall.Getppid()
		}
	case "open":
		for n := atoi(arg[0]); n > 0; n-- {
			fd, err := syscall.Open(arg[1], syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			if err != nil {
				fail(err)
			}
			syscall.Close(fd)
		}
	case "time":
		cmd := exec.Command(arg[0], arg[1:]...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fail(err)
		}
	case "get", "get-paced":
		c, err := net.Dial("tcp", arg[0])
		if err != nil {
			fail(err)
		}
		cmd := byte(cmdDownload)
		if os.Args[1] == "get-paced" {
			cmd = cmdPaced
		}
		c.Write([]byte{cmd})
		n, err := io.CopyBuffer(io.Discard, c, make([]byte, 256<<10))
		if err != nil {
			fail(err)
		}
		fmt.Printf("ns=%d bytes=%d\n", time.Since(start).Nanoseconds(), n)
		return
	case "ping":
		addr := resolve(arg[0])
		each(atoi(arg[1]), func() error { return ping(addr) })
		return
	case "greeting":
		addr := resolve(arg[0])
		each(atoi(arg[1]), func() error { return greeting(addr) })
		return
	case "dns":
		each(atoi(arg[1]), dnsQuery(arg[0], strings.Split(arg[2], ",")))
		return
	case "hold":
		hold(resolve(arg[0]), atoi(arg[1]))
		return
	case "relay":
		relay(arg[0])
		return
	default:
		fail(fmt.Errorf("unknown mode %q", os.Args[1]))
	}
	fmt.Printf("ns=%d\n", time.Since(start).Nanoseconds())
}

// each runs f n times and prints one ns= line per try.
func each(n int, f func() error) {
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for i := 0; i < n; i++ {
		t := time.Now()
		if err := f(); err != nil {
			w.Flush()
			fail(err)
		}
		fmt.Fprintf(w, "ns=%d\n", time.Since(t).Nanoseconds())
	}
}

// ping measures a full connection setup: the answer byte proves the far end
// (not just a local proxy socket) accepted.
func ping(addr string) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Write([]byte{cmdPing}); err != nil {
		return err
	}
	var b [1]byte
	_, err = io.ReadFull(c, b[:])
	return err
}

// greeting measures a connection to a server that speaks first (SMTP,
// MySQL): the client sends nothing until the server's first bytes come.
func greeting(addr string) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	var b [1]byte
	_, err = io.ReadFull(c, b[:])
	return err
}

// dnsQuery returns a function that sends one A query for name to the first
// nameserver of /etc/resolv.conf and waits for the matching answer. It
// refuses to query any of forbidden: inside jail that would mean the query
// leaves the machine, which the benchmark must never cause.
func dnsQuery(name string, forbidden []string) func() error {
	server := ""
	if data, err := os.ReadFile("/etc/resolv.conf"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[0] == "nameserver" && server == "" {
				server = net.JoinHostPort(f[1], "53")
			}
		}
	}
	var id uint16
	return func() error {
		if server == "" {
			return fmt.Errorf("no nameserver in /etc/resolv.conf")
		}
		for _, f := range forbidden {
			if f != "" && server == net.JoinHostPort(f, "53") {
				return fmt.Errorf("nameserver %s is the host's own resolver: not querying it", f)
			}
		}
		c, err := net.Dial("udp", server)
		if err != nil {
			return err
		}
		defer c.Close()
		id++
		q := binary.BigEndian.AppendUint16(nil, id)
		q = append(q, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0) // RD, QDCOUNT=1
		for _, label := range strings.Split(strings.TrimSuffix(name, "."), ".") {
			q = append(append(q, byte(len(label))), label...)
		}
		q = append(q, 0, 0, 1, 0, 1) // root, type A, class IN
		c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write(q); err != nil {
			return err
		}
		buf := make([]byte, 512)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return err
			}
			if n >= 12 && binary.BigEndian.Uint16(buf) == id {
				if rcode := buf[3] & 0xf; rcode != 0 {
					return fmt.Errorf("dns %s: rcode %d", name, rcode)
				}
				return nil
			}
		}
	}
}

// resolve looks the name up once, so that loops time connections, not DNS.
func resolve(hostport string) string {
	a, err := net.ResolveTCPAddr("tcp4", hostport)
	if err != nil {
		fail(err)
	}
	return a.String()
}

func hold(addr string, n int) {
	conns := make([]net.Conn, 0, n)
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			fail(fmt.Errorf("after %d connections: %w", i, err))
		}
		c.Write([]byte{cmdHold})
		conns = append(conns, c)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	for _, c := range conns {
		c.Close()
	}
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fail(err)
	}
	return n
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "probe:", err)
	os.Exit(1)
}

// Command bytes of the bench server. Control bytes, not letters: a lone
// letter could start an HTTP method ("P" of POST), and jail's proxy rightly
// waits for the rest of a request head before letting it upstream.
const (
	cmdDownload = 0x01
	cmdPing     = 0x02
	cmdHold     = 0x03
	cmdPaced    = 0x04
)

func relay(dst string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	fmt.Printf("addr=%s\n", ln.Addr())
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go relayOne(c.(*net.TCPConn), dst)
		}
	}()
	io.Copy(io.Discard, os.Stdin)
}

// relayOne copies both ways between c and a new connection to dst; io.Copy
// between two *net.TCPConn is splice(2), as in jail's relay.
func relayOne(c *net.TCPConn, dst string) {
	defer c.Close()
	u, err := net.Dial("tcp", dst)
	if err != nil {
		return
	}
	up := u.(*net.TCPConn)
	defer up.Close()
	done := make(chan struct{})
	go func() {
		io.Copy(c, up)
		c.CloseWrite()
		close(done)
	}()
	io.Copy(up, c)
	up.CloseWrite()
	<-done
}
