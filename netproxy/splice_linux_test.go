package netproxy

import (
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
)

// rchar is this process's read(2)-family byte count (/proc/self/io). It
// counts bytes copied into user space by read and recvmsg, not what
// splice(2) moves between a socket and a pipe.
func rchar(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no rchar in /proc/self/io")
	return 0
}

// TestRelaySplices: the download direction of an allowed flow is spliced
// between the two sockets (the payload never enters the proxy's user space),
// for a raw address, a name whose client speaks first in a protocol the
// proxy does not parse, a TLS flow after its ClientHello, and an HTTP/1
// flow's responses. The test client's own reads are the only user-space
// reads of the payload: a wrapper around either conn (a bufio.Reader, a
// counting reader) would make Go copy through a buffer and double them.
func TestRelaySplices(t *testing.T) {
	const size = 32 << 20
	srv := newServer(t, func(c net.Conn) {
		buf := make([]byte, 64<<10)
		n, _ := c.Read(buf) // the client's first bytes
		if n > 0 && strings.HasPrefix(string(buf[:n]), "GET ") {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: "+strconv.Itoa(size)+"\r\n\r\n")
		}
		for left := size; left > 0; left -= len(buf) {
			if _, err := c.Write(buf[:min(left, len(buf))]); err != nil {
				return
			}
		}
	})
	h := newHarness(t, flags{allow: []string{"bulk.test"}, hosts: []string{"bulk.test:127.0.0.1"}, ips: []string{"127.0.0.1/32:" + srv.portStr()}})
	name := netip.AddrPortFrom(h.mustLookup("bulk.test"), srv.port())
	raw := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), srv.port())
	for _, c := range []struct {
		what  string
		dst   netip.AddrPort
		first []byte
	}{
		{"raw address", raw, []byte{0x01}},
		{"name, other protocol", name, []byte{0x01}},
		{"name, TLS", name, clientHello(t, "bulk.test")},
		{"name, HTTP/1 response", name, []byte("GET / HTTP/1.1\r\nHost: bulk.test\r\nConnection: close\r\n\r\n")},
	} {
		t.Run(c.what, func(t *testing.T) {
			conn, err := h.dial(c.dst)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			r0 := rchar(t)
			if _, err := conn.Write(c.first); err != nil {
				t.Fatal(err)
			}
			n, err := sink(conn)
			read := rchar(t) - r0
			if err != nil || n < size {
				t.Fatalf("got %d bytes (%v), want %d", n, err, size)
			}
			// The client read n; a copying relay would read n more.
			if read > n+n/4 {
				t.Errorf("%d bytes read into user space for a %d-byte download: the relay copied instead of splicing", read, n)
			}
		})
	}
}
