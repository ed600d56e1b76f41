package netproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"
)

const gib = 1 << 30

// sink reads everything with a big buffer and returns the count.
func sink(c net.Conn) (int64, error) {
	buf := make([]byte, 256<<10)
	var n int64
	for {
		m, err := c.Read(buf)
		n += int64(m)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// sourceServer sends size bytes on every connection, then closes.
func sourceServer(t testing.TB, size int64) *countingServer {
	return newServer(t, func(c net.Conn) {
		buf := make([]byte, 256<<10)
		for left := size; left > 0; {
			n := min(left, int64(len(buf)))
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
			left -= n
		}
	})
}

// BenchmarkThroughput downloads 1 GiB from a loopback server, directly and
// through the proxy (raw-IP flow allowed by --allow-ip, so the path is
// accept -> dial -> splice both ways). Run: go test -bench Throughput
// -benchtime 3x ./netproxy/ and compare the MB/s.
func BenchmarkThroughput(b *testing.B) {
	srv := sourceServer(b, gib)
	dst := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), srv.port())
	b.Run("direct", func(b *testing.B) {
		b.SetBytes(gib)
		defer cpuPerGiB(b)()
		for i := 0; i < b.N; i++ {
			c, err := net.Dial("tcp", dst.String())
			if err != nil {
				b.Fatal(err)
			}
			if n, err := sink(c); n != gib || err != nil {
				b.Fatalf("got %d, %v", n, err)
			}
			c.Close()
		}
	})
	b.Run("proxy", func(b *testing.B) {
		h := newHarness(b, flags{ips: []string{"127.0.0.1/32:" + srv.portStr()}})
		b.SetBytes(gib)
		b.ResetTimer()
		defer cpuPerGiB(b)()
		for i := 0; i < b.N; i++ {
			c, err := h.dial(dst)
			if err != nil {
				b.Fatal(err)
			}
			if n, err := sink(c); n != gib || err != nil {
				b.Fatalf("got %d, %v", n, err)
			}
			c.Close()
		}
	})
}

// cpuPerGiB reports the process CPU time (user+sys, all threads: server,
// client and proxy) per GiB moved; under a loaded machine it is steadier than
// wall-clock throughput.
func cpuPerGiB(b *testing.B) func() {
	var r0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	return func() {
		var r1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
		ns := r1.Utime.Nano() - r0.Utime.Nano() + r1.Stime.Nano() - r0.Stime.Nano()
		b.ReportMetric(float64(ns)/1e9/float64(b.N), "cpu-s/GiB")
	}
}

// BenchmarkConnSetup measures connect + one request/response round trip to a
// loopback server, directly and through the proxy for an allowed name (DNS
// done once; includes sniffing the HTTP head, the policy, the guard, the
// upstream dial), and reports p50/p99.
func BenchmarkConnSetup(b *testing.B) {
	srv := newServer(b, func(c net.Conn) {
		buf := make([]byte, 512)
		if n, _ := c.Read(buf); n > 0 {
			c.Write([]byte("HTTP/1.1 204 No Content\r\n\r\n"))
		}
	})
	req := []byte("GET / HTTP/1.1\r\nHost: setup.test\r\n\r\n")
	measure := func(b *testing.B, dial func() (net.Conn, error)) {
		lat := make([]time.Duration, 0, b.N)
		buf := make([]byte, 64)
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			c, err := dial()
			if err != nil {
				b.Fatal(err)
			}
			c.Write(req)
			if _, err := c.Read(buf); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
			c.Close()
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
	b.Run("direct", func(b *testing.B) {
		measure(b, func() (net.Conn, error) { return net.Dial("tcp", srv.ln.Addr().String()) })
	})
	b.Run("proxy", func(b *testing.B) {
		h := newHarness(b, flags{allow: []string{"setup.test"}, hosts: []string{"setup.test:127.0.0.1"}, ips: []string{"127.0.0.1/32:" + srv.portStr()}})
		dst := netip.AddrPortFrom(h.mustLookup("setup.test"), srv.port())
		b.ResetTimer()
		measure(b, func() (net.Conn, error) { return h.dial(dst) })
	})
}

// BenchmarkMemory1000Flows opens 1,000 allowed flows through the proxy, each
// with its first bytes relayed both ways, holds them open, and reports the
// heap, stack and goroutines the supervisor gained (a measurement, not a
// check: `make bench` runs it with -benchtime 1x).
func BenchmarkMemory1000Flows(b *testing.B) {
	for i := 0; i < b.N; i++ {
		memory1000Flows(b)
	}
}

func memory1000Flows(t *testing.B) {
	const flows = 1000
	srv := newServer(t, func(c net.Conn) { io.Copy(c, c) })
	h := newHarness(t, flags{allow: []string{"mem.test"}, hosts: []string{"mem.test:127.0.0.1"}, ips: []string{"127.0.0.1/32:" + srv.portStr()}})
	dst := netip.AddrPortFrom(h.mustLookup("mem.test"), srv.port())
	read := func() (runtime.MemStats, int) {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m, runtime.NumGoroutine()
	}
	before, g0 := read()
	conns := make([]net.Conn, 0, flows)
	msg := []byte("GET / HTTP/1.1\r\nHost: mem.test\r\n\r\n")
	buf := make([]byte, len(msg))
	for i := 0; i < flows; i++ {
		c, err := h.dial(dst)
		if err != nil {
			t.Fatal(err)
		}
		c.Write(msg)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatalf("flow %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	after, g1 := read()
	// The test process also holds the 1,000 client conns and the echo
	// server's 1,000 goroutines (parked in a splice, no heap buffer).
	proxyG := g1 - g0 - flows
	heap := float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / (1 << 20)
	stack := float64(int64(after.StackInuse)-int64(before.StackInuse)) / (1 << 20)
	fds, _ := os.ReadDir("/proc/self/fd")
	t.Logf("%d open flows: +%d goroutines besides the server's (%.1f/flow); heap +%.1f MiB, stacks +%.1f MiB (3 goroutines/flow incl. server) => proxy ~%.1f KiB/flow; %d fds in the test process (client+server+proxy)",
		flows, proxyG, float64(proxyG)/flows, heap, stack, (heap+stack*2/3)*1024/flows, len(fds))
	t.ReportMetric((heap+stack*2/3)*1024/flows, "KiB/flow")
	for _, c := range conns {
		c.Close()
	}
}

// BenchmarkThroughputHTTP moves 1 GiB through the proxy over plaintext HTTP/1
// for an allowed name (so every request head on the flow is inspected):
// "download" is one GET answered with a 1 GiB body (the response direction
// is never parsed); "upload" is one POST with a 1 GiB Content-Length body
// (the request direction is framed: the body must still be spliced);
// "upload-chunked" is the same body in 1 MiB chunks.
// Run: go test -run '^$' -bench ThroughputHTTP -benchtime 3x ./netproxy/
func BenchmarkThroughputHTTP(b *testing.B) {
	srv := newServer(b, func(c net.Conn) {
		br := bufio.NewReaderSize(c, 64<<10)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			if req.Method == http.MethodGet {
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", int64(gib))
				buf := make([]byte, 256<<10)
				for left := int64(gib); left > 0; {
					n := min(left, int64(len(buf)))
					if _, err := c.Write(buf[:n]); err != nil {
						return
					}
					left -= n
				}
				continue
			}
			n, _ := io.Copy(io.Discard, req.Body)
			body := strconv.FormatInt(n, 10)
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		}
	})
	h := newHarness(b, flags{allow: []string{"bulk.test"}, hosts: []string{"bulk.test:127.0.0.1"}, ips: []string{"127.0.0.1/32:" + srv.portStr()}})
	dst := netip.AddrPortFrom(h.mustLookup("bulk.test"), srv.port())
	head := func(b *testing.B, c net.Conn, s string) *bufio.Reader {
		if _, err := io.WriteString(c, s); err != nil {
			b.Fatal(err)
		}
		return bufio.NewReaderSize(c, 256<<10)
	}
	b.Run("download", func(b *testing.B) {
		b.SetBytes(gib)
		defer cpuPerGiB(b)()
		for i := 0; i < b.N; i++ {
			c, err := h.dial(dst)
			if err != nil {
				b.Fatal(err)
			}
			br := head(b, c, "GET /big HTTP/1.1\r\nHost: bulk.test\r\n\r\n")
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				b.Fatal(err)
			}
			if n, err := io.CopyBuffer(io.Discard, resp.Body, make([]byte, 256<<10)); n != gib || err != nil {
				b.Fatalf("got %d, %v", n, err)
			}
			c.Close()
		}
	})
	upload := func(b *testing.B, chunked bool) {
		b.SetBytes(gib)
		defer cpuPerGiB(b)()
		buf := make([]byte, 1<<20)
		for i := 0; i < b.N; i++ {
			c, err := h.dial(dst)
			if err != nil {
				b.Fatal(err)
			}
			var br *bufio.Reader
			if chunked {
				br = head(b, c, "POST /up HTTP/1.1\r\nHost: bulk.test\r\nTransfer-Encoding: chunked\r\n\r\n")
				for sent := 0; sent < gib; sent += len(buf) {
					fmt.Fprintf(c, "%x\r\n", len(buf))
					c.Write(buf)
					io.WriteString(c, "\r\n")
				}
				io.WriteString(c, "0\r\n\r\n")
			} else {
				br = head(b, c, fmt.Sprintf("POST /up HTTP/1.1\r\nHost: bulk.test\r\nContent-Length: %d\r\n\r\n", int64(gib)))
				for sent := 0; sent < gib; sent += len(buf) {
					if _, err := c.Write(buf); err != nil {
						b.Fatal(err)
					}
				}
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				b.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			if string(got) != strconv.Itoa(gib) {
				b.Fatalf("server got %s bytes", got)
			}
			c.Close()
		}
	}
	b.Run("upload", func(b *testing.B) { upload(b, false) })
	b.Run("upload-chunked", func(b *testing.B) { upload(b, true) })
}
