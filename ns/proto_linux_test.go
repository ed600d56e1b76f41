package ns

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// pair returns both ends of a fresh socketpair as Conns, closed at cleanup.
func pair(t *testing.T) (*Conn, *Conn) {
	t.Helper()
	a, b, err := Socketpair()
	if err != nil {
		t.Fatal(err)
	}
	ca, cb := NewConn(a), NewConn(b)
	t.Cleanup(func() { ca.Close(); cb.Close() })
	return ca, cb
}

// pipes returns n pipes; the write ends are what a test sends.
func pipes(t *testing.T, n int) (r, w []*os.File) {
	t.Helper()
	for i := 0; i < n; i++ {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pr.Close(); pw.Close() })
		r, w = append(r, pr), append(w, pw)
	}
	return r, w
}

func isCloexec(t *testing.T, f *os.File) bool {
	t.Helper()
	flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0)
	if err != nil {
		t.Fatalf("F_GETFD %s: %v", f.Name(), err)
	}
	return flags&unix.FD_CLOEXEC != 0
}

func openFDs(t *testing.T) int {
	t.Helper()
	e, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(e)
}

// bigSpec returns a spec whose wire encoding is larger than n bytes.
func bigSpec(n int) *Spec {
	s := &Spec{Hostname: "jail", Cwd: "/ws", Argv: Strings{"sh", "-c", "\xff\xfe not utf-8"}, Env: Strings{"PATH=/bin"}}
	for i := 0; ; i++ {
		s.Mounts = append(s.Mounts, Mount{Kind: KindMask, Path: fmt.Sprintf("/ws/some/fairly/long/path/to/a/secret/file-%06d.pem", i), FD: -1, Why: "default: *.pem"})
		if i%256 == 0 {
			if len(encodeMessage(Message{Type: MsgSpec, Spec: s})) > n {
				return s
			}
		}
	}
}

// paddedError returns a message whose wire encoding is exactly n bytes.
func paddedError(t *testing.T, n int) Message {
	t.Helper()
	m := Message{Type: MsgError}
	for l := n - 16; l < n; l++ { // the length's varint grows with it
		m.Error = strings.Repeat("x", l)
		if len(encodeMessage(m)) == n {
			break
		}
	}
	b := encodeMessage(m)
	if len(b) != n {
		t.Fatalf("padding: got %d bytes, want %d", len(b), n)
	}
	return m
}

func TestSendRecvRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		msg   Message
		nfds  int
		inMem bool // expect the payload to travel in a memfd
	}{
		{name: "go, no fds", msg: Message{Type: MsgGo}},
		{name: "started", msg: Message{Type: MsgStarted, Pid: 42}},
		{name: "exit by signal", msg: Message{Type: MsgExit, Code: 137, Signal: 9}},
		{name: "error", msg: Message{Type: MsgError, Error: "boom \u00e9", ExitCode: 127}},
		{name: "files with one fd", msg: Message{Type: MsgFiles, Names: []string{"pty"}, Info: map[string]string{"landlock.abi": "6"}}, nfds: 1},
		{name: "files with three fds", msg: Message{Type: MsgFiles, Names: []string{"tcp", "dns", "seccomp"}}, nfds: 3},
		{name: "dialed with fd", msg: Message{Type: MsgDialed, Port: 8080}, nfds: 1},
		{name: "small spec", msg: Message{Type: MsgSpec, Spec: &Spec{
			Mounts:   []Mount{{Kind: KindTmpfs, Path: "/tmp", Dir: true, Size: 1 << 30, Mode: 0o1777, FD: -1}, {Kind: KindFile, Path: "/etc/resolv.conf", Data: []byte("nameserver 10.0.0.1\n\x00\xff"), FD: -1}},
			Hostname: "jail", Cwd: "/ws",
			Argv:    Strings{"prog", "\xff\xfe", "a\x00b", ""},
			Env:     Strings{"PATH=/bin", "X=\xc3\x28"},
			Rlimits: []Rlimit{{Resource: 7, Cur: 1024, Max: 1024}},
			Hooks:   map[string][]byte{HookLandlock: []byte(`{"x":1}`)},
		}}, nfds: 2},
		{name: "exactly maxMsg inline", msg: paddedError(t, maxMsg)},
		{name: "maxMsg+1 in memfd", msg: paddedError(t, maxMsg+1), inMem: true},
		{name: "big spec", msg: Message{Type: MsgSpec, Spec: bigSpec(200 << 10)}, inMem: true},
		{name: "big spec with fds", msg: Message{Type: MsgSpec, Spec: bigSpec(maxMsg)}, nfds: 4, inMem: true},
		{name: "huge spec (2 MiB)", msg: Message{Type: MsgSpec, Spec: bigSpec(2 << 20)}, nfds: 1, inMem: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sup, child := pair(t)
			rs, ws := pipes(t, tt.nfds)
			before := openFDs(t)
			if err := sup.Send(tt.msg, ws...); err != nil {
				t.Fatalf("Send: %v", err)
			}
			if n := openFDs(t); n != before {
				t.Errorf("Send leaked fds: %d open before, %d after", before, n)
			}
			got, files, err := child.Recv()
			if err != nil {
				t.Fatalf("Recv: %v", err)
			}
			defer func() {
				for _, f := range files {
					f.Close()
				}
			}()
			if !reflect.DeepEqual(got, tt.msg) {
				t.Errorf("message differs after the round trip:\n got %+v\nwant %+v", got, tt.msg)
			}
			if len(files) != tt.nfds {
				t.Fatalf("got %d fds, want %d", len(files), tt.nfds)
			}
			if n := openFDs(t); n != before+tt.nfds {
				t.Errorf("after Recv %d fds open, want %d (memfd not closed?)", n, before+tt.nfds)
			}
			for i, f := range files {
				if !isCloexec(t, f) {
					t.Errorf("received fd %d is not close-on-exec", i)
				}
				// Same pipe, same order: write through the received copy.
				msg := fmt.Sprintf("fd %d", i)
				if _, err := f.Write([]byte(msg)); err != nil {
					t.Fatalf("write to received fd %d: %v", i, err)
				}
				buf := make([]byte, 64)
				n, err := rs[i].Read(buf)
				if err != nil || string(buf[:n]) != msg {
					t.Errorf("fd %d is not the pipe sent at that position: read %q, %v", i, buf[:n], err)
				}
			}
		})
	}
}

// TestBigMessageWire checks what actually travels for a large message: a small
// envelope and, as first fd, a sealed memfd holding exactly the JSON.
func TestBigMessageWire(t *testing.T) {
	a, b, err := Socketpair()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	defer b.Close()
	for _, f := range []*os.File{a, b} {
		if !isCloexec(t, f) {
			t.Errorf("socketpair end %s is not close-on-exec", f.Name())
		}
		typ, err := unix.GetsockoptInt(int(f.Fd()), unix.SOL_SOCKET, unix.SO_TYPE)
		if err != nil || typ != unix.SOCK_SEQPACKET {
			t.Errorf("socket type %d, %v; want SOCK_SEQPACKET", typ, err)
		}
	}
	_, pw := pipes(t, 1)
	m := Message{Type: MsgSpec, Spec: bigSpec(100 << 10)}
	want := encodeMessage(m)
	if err := NewConn(a).Send(m, pw...); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, maxMsg)
	oob := make([]byte, unix.CmsgSpace(8*4))
	n, oobn, _, _, err := unix.Recvmsg(int(b.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(buf[:n]); got != string(bigEnvelope()) {
		t.Fatalf("envelope %q", got)
	}
	scms, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(scms) != 1 {
		t.Fatalf("control messages: %v, %v", scms, err)
	}
	fds, err := unix.ParseUnixRights(&scms[0])
	if err != nil || len(fds) != 2 {
		t.Fatalf("fds %v, %v; want memfd + pipe", fds, err)
	}
	mf := os.NewFile(uintptr(fds[0]), "memfd")
	defer mf.Close()
	defer unix.Close(fds[1])
	if l, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fds[0])); !strings.HasPrefix(l, "/memfd:jail-msg") {
		t.Errorf("first fd is %q, want a memfd", l)
	}
	seals, err := unix.FcntlInt(mf.Fd(), unix.F_GET_SEALS, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []int{unix.F_SEAL_WRITE, unix.F_SEAL_GROW, unix.F_SEAL_SHRINK, unix.F_SEAL_SEAL} {
		if seals&s == 0 {
			t.Errorf("memfd seals %#x lack %#x", seals, s)
		}
	}
	got, err := io.ReadAll(io.NewSectionReader(mf, 0, 1<<30))
	if err != nil || string(got) != string(want) {
		t.Errorf("memfd holds %d bytes (%v), want the %d-byte message", len(got), err, len(want))
	}
	if _, err := unix.Pwrite(int(mf.Fd()), []byte("x"), 0); err == nil {
		t.Error("write to the sealed memfd succeeded")
	}
}

func TestBigPayloadSealed(t *testing.T) {
	data := []byte(strings.Repeat("abc", 40000))
	f, err := bigPayload(data)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !isCloexec(t, f) {
		t.Error("memfd is not close-on-exec")
	}
	if err := unix.Ftruncate(int(f.Fd()), 1); err == nil {
		t.Error("shrinking the sealed memfd succeeded")
	}
	if err := unix.Ftruncate(int(f.Fd()), int64(len(data))+4096); err == nil {
		t.Error("growing the sealed memfd succeeded")
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, 0); err == nil {
		// F_SEAL_SEAL: adding (even no) seals fails with EPERM.
		t.Error("F_ADD_SEALS succeeded on a memfd sealed with F_SEAL_SEAL")
	}
	got, _ := io.ReadAll(io.NewSectionReader(f, 0, 1<<30))
	if string(got) != string(data) {
		t.Error("memfd content differs")
	}
}

func TestRecvClosedPeer(t *testing.T) {
	sup, child := pair(t)
	sup.Close()
	_, files, err := child.Recv()
	if err == nil {
		t.Fatal("Recv from a closed peer succeeded")
	}
	if !errors.Is(err, os.ErrClosed) {
		t.Errorf("Recv error %v, want one wrapping os.ErrClosed", err)
	}
	if files != nil {
		t.Errorf("files %v with an error", files)
	}
}

func TestSendClosedPeer(t *testing.T) {
	sup, child := pair(t)
	child.Close()
	err := sup.Send(Message{Type: MsgGo})
	if err == nil {
		t.Fatal("Send to a closed peer succeeded")
	}
	if !errors.Is(err, unix.EPIPE) && !errors.Is(err, unix.ECONNRESET) {
		t.Errorf("Send error %v, want EPIPE", err)
	}
	if !strings.Contains(err.Error(), MsgGo) {
		t.Errorf("Send error %q does not name the message type", err)
	}
	// A big message fails the same way, and closes its memfd.
	before := openFDs(t)
	if err := sup.Send(Message{Type: MsgSpec, Spec: bigSpec(maxMsg)}); err == nil {
		t.Error("big Send to a closed peer succeeded")
	}
	if n := openFDs(t); n != before {
		t.Errorf("failed big Send leaked fds: %d before, %d after", before, n)
	}
}

func TestSendClosedConn(t *testing.T) {
	sup, _ := pair(t)
	sup.Close()
	if err := sup.Send(Message{Type: MsgGo}); err == nil {
		t.Error("Send on a closed Conn succeeded")
	}
	if _, _, err := sup.Recv(); err == nil {
		t.Error("Recv on a closed Conn succeeded")
	}
}

// rawSend writes a datagram that Send would never write.
func rawSend(t *testing.T, c *Conn, b []byte, files ...*os.File) {
	t.Helper()
	var oob []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		oob = unix.UnixRights(fds...)
	}
	if err := unix.Sendmsg(int(c.f.Fd()), b, oob, nil, 0); err != nil {
		t.Fatal(err)
	}
}

func TestRecvMalformed(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		nfds    int
		want    string
	}{
		{"json, the old format", `{"type":"go"}`, 0, "decode message"},
		{"not the wire format with fds", "\x00\x01", 2, "decode message"},
		{"truncated", "\x01\x01\x05go", 1, "decode message"},
		{"unknown field", "\x01\x01\x02go\x7f\x00", 1, "decode message"},
		{"big envelope without memfd", string(bigEnvelope()), 0, "without its memfd"},
		{"big envelope, first fd not a memfd", string(bigEnvelope()), 1, "read memfd"},
		// The pipe fails to read as the payload; the fd after it must be closed too.
		{"big envelope, first fd not a memfd, one more fd", string(bigEnvelope()), 2, "read memfd"},
		{"big envelope, memfd not a message", string(bigEnvelope()), -1, "decode message"},
		{"big envelope, memfd not a message, one more fd", string(bigEnvelope()), -2, "decode message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sup, child := pair(t)
			var ws []*os.File
			if tt.nfds < 0 { // a memfd with garbage, then -nfds-1 pipes
				mf, err := bigPayload([]byte("garbage"))
				if err != nil {
					t.Fatal(err)
				}
				defer mf.Close()
				_, ws = pipes(t, -tt.nfds-1)
				ws = append([]*os.File{mf}, ws...)
			} else {
				_, ws = pipes(t, tt.nfds)
			}
			before := openFDs(t)
			rawSend(t, sup, []byte(tt.payload), ws...)
			m, files, err := child.Recv()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Recv = %+v, %v; want an error containing %q", m, err, tt.want)
			}
			if files != nil {
				t.Errorf("files returned with an error: %v", files)
			}
			if n := openFDs(t); n != before {
				t.Errorf("BUG: received fds not closed after a bad message: %d open before, %d after", before, n)
			}
		})
	}
}

// TestRecvManyFds: Recv's control buffer holds 64 fds. A message with more
// must not lose some silently (the kernel sets MSG_CTRUNC and closes the
// rest): MsgFiles pairs Names with fds by position.
func TestRecvManyFds(t *testing.T) {
	for _, n := range []int{64, 70} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			sup, child := pair(t)
			_, ws := pipes(t, n)
			names := make([]string, n)
			for i := range names {
				names[i] = fmt.Sprint("f", i)
			}
			if err := sup.Send(Message{Type: MsgFiles, Names: names}, ws...); err != nil {
				t.Fatal(err)
			}
			m, files, err := child.Recv()
			for _, f := range files {
				f.Close()
			}
			if err == nil && len(files) != len(m.Names) {
				t.Errorf("BUG: %d names but %d fds received and no error: fds beyond Recv's control buffer are dropped silently (MSG_CTRUNC not checked)", len(m.Names), len(files))
			}
		})
	}
}

func TestStringsJSONByteExact(t *testing.T) {
	tests := []struct {
		name string
		in   Strings
	}{
		{"nil", nil},
		{"empty", Strings{}},
		{"empty string", Strings{""}},
		{"ascii", Strings{"ls", "-la", "/tmp"}},
		{"utf-8", Strings{"h\u00e9llo", "\u65e5\u672c", "\U0001f600"}},
		{"lone high byte", Strings{"\xff"}},
		{"latin-1 file name", Strings{"caf\xe9.txt"}},
		{"truncated sequence", Strings{"\xe6\x97"}},
		{"overlong slash", Strings{"\xc0\xaf"}},
		{"surrogate half", Strings{"\xed\xa0\x80"}},
		{"replacement char itself", Strings{"\uFFFD", "\xef\xbf\xbd"}},
		{"nul and controls", Strings{"a\x00b", "\x01\x1f\x7f", "\n\t\r"}},
		{"json specials", Strings{`"`, `\`, `\u0000`, "</script>", "&<>"}},
		{"env pair", Strings{"X=\xff\xfe=\x80"}},
		{"all bytes", Strings{func() string {
			b := make([]byte, 256)
			for i := range b {
				b[i] = byte(i)
			}
			return string(b)
		}()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			var out Strings
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatalf("unmarshal %s: %v", b, err)
			}
			if len(out) != len(tt.in) {
				t.Fatalf("got %d strings, want %d", len(out), len(tt.in))
			}
			for i := range out {
				if out[i] != tt.in[i] {
					t.Errorf("string %d: got %q, want %q", i, out[i], tt.in[i])
				}
			}
			// Inside a Spec, through the socket, too.
			sup, child := pair(t)
			if err := sup.Send(Message{Type: MsgSpec, Spec: &Spec{Argv: tt.in, Env: tt.in}}); err != nil {
				t.Fatal(err)
			}
			m, _, err := child.Recv()
			if err != nil {
				t.Fatal(err)
			}
			for i := range tt.in {
				if m.Spec.Argv[i] != tt.in[i] || m.Spec.Env[i] != tt.in[i] {
					t.Errorf("string %d changed through the socket", i)
				}
			}
		})
	}
}

func TestStringsUnmarshal(t *testing.T) {
	tests := []struct {
		in      string
		want    Strings
		wantErr bool
	}{
		{`null`, Strings{}, false},
		{`[]`, Strings{}, false},
		{`["aGk=", ""]`, Strings{"hi", ""}, false},
		{`[null]`, Strings{""}, false},
		{`["/w=="]`, Strings{"\xff"}, false},
		{`["not base64!"]`, nil, true},
		{`["hi"]`, nil, true}, // plain strings are not accepted: no silent fallback
		{`[1]`, nil, true},
		{`{}`, nil, true},
		{`"aGk="`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var s Strings
			err := json.Unmarshal([]byte(tt.in), &s)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(s, tt.want) {
				t.Errorf("got %q, want %q", s, tt.want)
			}
		})
	}
}

func FuzzStrings(f *testing.F) {
	f.Add("ls", "-la", []byte(`["bHM="]`))
	f.Add("\xff\xfe", "caf\xe9", []byte(`null`))
	f.Add("", "\x00", []byte(`[null,"",""]`))
	f.Add("\uFFFD", "\xef\xbf", []byte(`["/w=="]`))
	f.Fuzz(func(t *testing.T, a, b string, raw []byte) {
		in := Strings{a, b, a + b, ""}
		enc, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(enc) {
			t.Fatalf("invalid JSON %q", enc)
		}
		var out Strings
		if err := json.Unmarshal(enc, &out); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(out, in) {
			t.Fatalf("round trip changed %q into %q", in, out)
		}
		// Arbitrary input never panics, and what decodes re-encodes stably.
		var s Strings
		if err := json.Unmarshal(raw, &s); err != nil {
			return
		}
		enc2, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var s2 Strings
		if err := json.Unmarshal(enc2, &s2); err != nil || !reflect.DeepEqual(s, s2) {
			t.Fatalf("re-encoding %q gave %q (%v)", s, s2, err)
		}
	})
}

// TestRecvReusesItsBuffer: a Recv does not allocate a fresh 60 KiB
// datagram buffer each time (in the supervisor and in init, with the
// collector held during a start, each one was fresh pages: a fault each at
// 18-30 µs on a paravirtualized VM). Old Recv: >= 60 KiB a call.
func TestRecvReusesItsBuffer(t *testing.T) {
	a, b := pair(t)
	m := Message{Type: MsgGo}
	recv := func() {
		if err := a.Send(m); err != nil {
			t.Fatal(err)
		}
		if _, _, err := b.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	recv()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 20
	for range n {
		recv()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 8<<10 {
		t.Errorf("a small message's Send and Recv allocate %d bytes, want the receive buffer reused", per)
	}
}

// TestRecvFDsLostKeepsRequest: a message whose payload is whole but whose
// fds did not all arrive (MSG_CTRUNC: init's open-file limit lowered by the
// agent, here more fds than Recv's control buffer) comes back decoded,
// with ErrFDsLost and no fds (the ones that did arrive closed), so init can
// answer that request; the connection goes on: the next message is read
// whole. Before, Recv returned a bare error and init's request loop ended.
func TestRecvFDsLostKeepsRequest(t *testing.T) {
	sup, child := pair(t)
	_, ws := pipes(t, maxFDs+3)
	fds := make([]int, len(ws))
	for i, f := range ws {
		fds[i] = int(f.Fd())
	}
	before := openFDs(t)
	b := encodeMessage(Message{Type: MsgExec, ID: 7, Exec: &ExecSpec{ID: 7, Argv: Strings{"true"}}})
	if err := unix.Sendmsg(int(sup.f.Fd()), b, unix.UnixRights(fds...), nil, 0); err != nil {
		t.Fatal(err)
	}
	m, files, err := child.Recv()
	if !errors.Is(err, ErrFDsLost) || len(files) != 0 || m.Type != MsgExec || m.Exec == nil || m.Exec.ID != 7 {
		t.Fatalf("Recv of an exec request with its fds cut: %v, %d fds, %+v; want ErrFDsLost, no fds and the request", err, len(files), m)
	}
	if n := openFDs(t); n != before {
		t.Errorf("the fds that did arrive were not closed: %d open before, %d after", before, n)
	}
	if err := sup.Send(Message{Type: MsgStop}); err != nil {
		t.Fatal(err)
	}
	if m, _, err := child.Recv(); err != nil || m.Type != MsgStop {
		t.Fatalf("the message after the cut one: %v %+v", err, m)
	}
}
