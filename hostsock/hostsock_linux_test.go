package hostsock

import (
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestBound: both readers list every path-bound socket: listening stream
// and seqpacket sockets, a bound stream socket that does not listen yet, an
// unbound-peer datagram socket and a datagram server a client connected to
// (the kernel marks it established; it still takes anyone's datagrams); not
// an abstract name.
func TestBound(t *testing.T) {
	d := t.TempDir()
	sock := func(typ int, name string, listen bool) int {
		fd, err := syscall.Socket(syscall.AF_UNIX, typ|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Close(fd) })
		if !strings.HasPrefix(name, "@") {
			name = filepath.Join(d, name)
		}
		if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: name}); err != nil {
			t.Fatalf("bind %s: %v", name, err)
		}
		if listen {
			if err := syscall.Listen(fd, 1); err != nil {
				t.Fatal(err)
			}
		}
		return fd
	}
	sock(syscall.SOCK_STREAM, "listen.sock", true)
	sock(syscall.SOCK_SEQPACKET, "seq.sock", true)
	sock(syscall.SOCK_DGRAM, "dgram sock", false)
	sock(syscall.SOCK_STREAM, "bound-only.sock", false)
	peer := sock(syscall.SOCK_DGRAM, "peer.sock", false)
	conn := sock(syscall.SOCK_DGRAM, "connected.sock", false)
	if err := syscall.Connect(conn, &syscall.SockaddrUnix{Name: filepath.Join(d, "peer.sock")}); err != nil {
		t.Fatal(err)
	}
	_ = peer
	sock(syscall.SOCK_STREAM, "@hostsock-test-"+filepath.Base(d), true)
	want := []string{filepath.Join(d, "bound-only.sock"), filepath.Join(d, "connected.sock"), filepath.Join(d, "dgram sock"), filepath.Join(d, "listen.sock"), filepath.Join(d, "peer.sock"), filepath.Join(d, "seq.sock")}
	mine := func(all []string) []string {
		var out []string
		for _, p := range all {
			if strings.HasPrefix(p, d+"/") {
				out = append(out, p)
			}
		}
		slices.Sort(out)
		return out
	}
	got, err := diag()
	if err != nil {
		t.Fatalf("sock_diag: %v", err)
	}
	if g := mine(got); !slices.Equal(g, want) {
		t.Errorf("sock_diag:\n got %q\nwant %q", g, want)
	}
	got, err = fromProc("/proc/net/unix")
	if err != nil {
		t.Fatal(err)
	}
	if g := mine(got); !slices.Equal(g, want) {
		t.Errorf("/proc/net/unix:\n got %q\nwant %q", g, want)
	}
	for _, p := range got {
		if !strings.HasPrefix(p, "/") {
			t.Errorf("not absolute: %q", p)
		}
	}
}

// BenchmarkBound measures both readers as the namespace is ("few"), then
// with 3,000 more (unnamed) sockets in it, as a busy desktop has.
func BenchmarkBound(b *testing.B) {
	b.Run("few/sock_diag", func(b *testing.B) {
		for b.Loop() {
			if _, err := diag(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for range 1500 {
		p, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { syscall.Close(p[0]); syscall.Close(p[1]) })
	}
	b.Run("sock_diag", func(b *testing.B) {
		for b.Loop() {
			if _, err := diag(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("proc", func(b *testing.B) {
		for b.Loop() {
			if _, err := fromProc("/proc/net/unix"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
