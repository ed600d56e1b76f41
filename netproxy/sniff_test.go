package netproxy

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// clientHello captures the bytes crypto/tls sends first for serverName.
func clientHello(t testing.TB, serverName string) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() {
		c := tls.Client(a, &tls.Config{ServerName: serverName, InsecureSkipVerify: true})
		c.SetDeadline(time.Now().Add(2 * time.Second))
		c.Handshake()
	}()
	buf := make([]byte, 0, 8192)
	b.SetReadDeadline(time.Now().Add(2 * time.Second))
	for {
		n, err := b.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if _, ierr := inspect(buf); !errors.Is(ierr, errNeedMore) || err != nil {
			return buf
		}
	}
}

// fragment re-splits the handshake payload of a single-record ClientHello into
// records of at most size bytes (a known SNI-filter evasion).
func fragment(hello []byte, size int) []byte {
	payload := hello[5 : 5+int(binary.BigEndian.Uint16(hello[3:5]))]
	var out []byte
	for len(payload) > 0 {
		n := min(size, len(payload))
		out = append(out, 0x16, 3, 1, byte(n>>8), byte(n))
		out = append(out, payload[:n]...)
		payload = payload[n:]
	}
	return out
}

func TestInspectTLS(t *testing.T) {
	hello := clientHello(t, "allowed.test")
	res, err := inspect(hello)
	if err != nil || res.kind != kindTLS || !slices.Equal(res.names, []string{"allowed.test"}) {
		t.Fatalf("inspect(real hello) = %+v, %v", res, err)
	}
	frag := fragment(hello, 7)
	res, err = inspect(frag)
	if err != nil || !slices.Equal(res.names, []string{"allowed.test"}) {
		t.Fatalf("inspect(fragmented hello) = %+v, %v", res, err)
	}
	for i := 0; i < len(frag); i++ {
		if _, err := inspect(frag[:i]); !errors.Is(err, errNeedMore) {
			t.Fatalf("prefix %d of a fragmented hello: %v, want errNeedMore", i, err)
		}
	}
	noSNI := clientHello(t, "")
	if res, err := inspect(noSNI); err != nil || len(res.names) != 0 || res.kind != kindTLS {
		t.Errorf("hello without SNI: %+v, %v", res, err)
	}
	bad := slices.Clone(hello)
	bad[5] = 2 // ServerHello instead of ClientHello
	if _, err := inspect(bad); !errors.Is(err, errMalformed) {
		t.Errorf("non-ClientHello: %v", err)
	}
	mixed := slices.Concat(fragment(hello, 20)[:25], []byte{0x17, 3, 3, 0, 1, 0})
	if _, err := inspect(mixed); !errors.Is(err, errMalformed) {
		t.Errorf("application data before the end of the hello: %v", err)
	}
}

func TestInspectHTTP(t *testing.T) {
	tests := []struct {
		in    string
		kind  int
		names []string
		err   error
	}{
		{"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n", kindHTTP, []string{"a.test"}, nil},
		{"GET / HTTP/1.1\r\nhOsT:   A.Test:8080  \r\nX: y\r\n\r\nbody", kindHTTP, []string{"a.test"}, nil},
		{"GET / HTTP/1.1\nHost: a.test\n\n", kindHTTP, []string{"a.test"}, nil}, // bare LF, as servers accept
		{"GET / HTTP/1.0\r\n\r\n", kindHTTP, nil, nil},
		{"\r\n\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n", kindHTTP, []string{"evil.test"}, nil}, // leading empty lines servers skip
		{"\r\n", kindUnknown, nil, errNeedMore},
		{"GET http://evil.test/x HTTP/1.1\r\nHost: a.test\r\n\r\n", kindHTTP, []string{"evil.test", "a.test"}, nil},
		{"GET http://u:p@evil.test:81/ HTTP/1.1\r\n\r\n", kindHTTP, []string{"evil.test"}, nil},
		{"GET / HTTP/1.1\r\nHost: a.test\r\nHost: evil.test\r\n\r\n", kindHTTP, nil, errMalformed},
		{"GET / HTTP/1.1\r\nX: y\r\n Host: evil.test\r\n\r\n", kindHTTP, nil, errMalformed},
		{"GET / HTTP/1.1\r\nHost a.test\r\n\r\n", kindHTTP, nil, errMalformed},
		{"GET / HTTP/1.1\r\nHost: a.test\r\n", kindUnknown, nil, errNeedMore},
		{"GE", kindUnknown, nil, errNeedMore},
		{"GET   /x   http/1.1\r\nHost: evil.test\r\n\r\n", kindHTTP, []string{"evil.test"}, nil}, // nginx takes runs of spaces
		{"GET /" + strings.Repeat("a", 20000), kindUnknown, nil, errNeedMore},                    // a long target stays undecided
		{"flow 1 xxxxxxxx", kindOther, nil, nil},
		{"GET /\x00 HTTP/1.1\r\n", kindOther, nil, nil},
		{"GET /\r\n", kindOther, nil, nil}, // HTTP/0.9: no Host exists
		{"GET / HTT", kindUnknown, nil, errNeedMore},
		{"GET /", kindUnknown, nil, errNeedMore},
		{"SSH-2.0-OpenSSH_9.6\r\n", kindOther, nil, nil},
		{"EHLO x\r\n", kindOther, nil, nil},
		{"\x00\x00\x00\x08\x04\xd2\x16\x2f", kindOther, nil, nil},         // postgres SSLRequest
		{"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", kindHTTP, nil, errMalformed}, // h2c prior knowledge: :authority unchecked
		{"GET / HTTP/1.1\r\nHost: a.test\r\nUpgrade: h2c\r\n\r\n", kindHTTP, nil, errMalformed},
		{"GET / HTTP/1.1\r\nHost: a.test\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n", kindHTTP, nil, errMalformed},
		{"GET / HTTP/1.1\r\nHost: a.test\r\nUpgrade: websocket\r\n\r\n", kindHTTP, []string{"a.test"}, nil},
		{"CONNECT evil.test:443 HTTP/1.1\r\nHost: a.test\r\n\r\n", kindHTTP, []string{"evil.test", "a.test"}, nil},
		{"POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", kindHTTP, nil, errMalformed},
		{"POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", kindHTTP, nil, errMalformed},
		{"POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: +3\r\n\r\n", kindHTTP, nil, errMalformed},
		{"POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", kindHTTP, nil, errMalformed},
		{"POST / HTTP/1.0\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n", kindHTTP, nil, errMalformed},
		{"GET / HTTP/1.1\r\nHost: a.test\r\nX-A b: c\r\n\r\n", kindHTTP, nil, errMalformed},
		{"GET / HTTP/1.1\r\nHost: a.test\rX: y\r\n\r\n", kindHTTP, nil, errMalformed},
		{"GET / HTTP/3\r\nHost: a.test\r\n\r\n", kindHTTP, nil, errMalformed},
	}
	for _, tt := range tests {
		res, err := inspect([]byte(tt.in))
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("inspect(%q) err = %v, want %v", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || res.kind != tt.kind || !slices.Equal(res.names, tt.names) {
			t.Errorf("inspect(%q) = %+v, %v; want kind %d names %v", tt.in, res, err, tt.kind, tt.names)
		}
	}
}

// FuzzInspect: the sniffer never panics, never claims more than it read, and
// a verdict on a prefix is never contradicted by more bytes (a client cannot
// get a different name past us by how it splits its segments).
func FuzzInspect(f *testing.F) {
	hello := clientHello(f, "allowed.test")
	f.Add(hello, 10)
	f.Add(fragment(hello, 9), 30)
	f.Add([]byte("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"), 5)
	f.Add([]byte("GET http://x/ HTTP/1.1\nHost: y\n\n"), 3)
	f.Add([]byte{0x16, 3, 1, 0, 4, 1, 0, 0, 0}, 1)
	f.Fuzz(func(t *testing.T, b []byte, cut int) {
		full, ferr := inspect(b)
		if cut < 0 || cut > len(b) {
			return
		}
		pre, perr := inspect(b[:cut])
		if errors.Is(perr, errNeedMore) {
			return
		}
		// The prefix already had a verdict: the full input must agree.
		if (perr == nil) != (ferr == nil) || pre.kind != full.kind || !slices.Equal(pre.names, full.names) {
			t.Fatalf("prefix verdict %+v/%v differs from full %+v/%v", pre, perr, full, ferr)
		}
	})
}

// TestStripPort: the name a Host header or a request target claims, as the
// flow's name and address are compared with it. An IPv6 literal is its
// address as netip prints it (the flow's address is compared in that
// form): "[2001:db8::1]" claimed the very address it connected to, and was
// refused as domain fronting (seen with curl http://[2001:db8::1]/ and
// --allow-ip [2001:db8::1/128]:80 through HTTP_PROXY).
func TestStripPort(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Example.COM", "example.com"},
		{"example.com.", "example.com"},
		{"example.com:8080", "example.com"},
		{"198.18.0.1:80", "198.18.0.1"},
		{"[2001:db8::1]", "2001:db8::1"},
		{"[2001:DB8:0::1]:8080", "2001:db8::1"},
		{"[::1]:80", "::1"},
		// Not an IPv6 literal in brackets: kept whole, it matches no name
		// and no address.
		{"[evil.test]", "[evil.test]"},
		{"[fe80::1%eth0]:80", "[fe80::1%eth0]:80"},
		{"[2001:db8::1]x", "[2001:db8::1]x"},
		{"[2001:db8::1", "[2001:db8::1"},
		{"[1.2.3.4]", "[1.2.3.4]"},
	} {
		if got := stripPort(tt.in); got != tt.want {
			t.Errorf("stripPort(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
