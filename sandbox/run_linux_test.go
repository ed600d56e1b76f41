package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
)

func TestHideTrail(t *testing.T) {
	tmpfs := func(p string) ns.Mount { return ns.Mount{Kind: ns.KindTmpfs, Path: p, Dir: true, FD: -1} }
	bind := func(p string) ns.Mount { return ns.Mount{Kind: ns.KindBind, Path: p, Dir: true, FD: -1} }
	robind := func(p string) ns.Mount { return ns.Mount{Kind: ns.KindROBind, Path: p, Dir: true, FD: -1} }
	mask := func(p string) ns.Mount { return ns.Mount{Kind: ns.KindMask, Path: p, FD: -1} }
	dirMask := func(p string) []ns.Mount {
		return []ns.Mount{{Kind: ns.KindMask, Path: p, Dir: true, FD: -1, Why: "the audit trail's directory"}}
	}
	fileMask := func(p string) []ns.Mount {
		return []ns.Mount{{Kind: ns.KindMask, Path: p, FD: -1, Why: "the audit trail"}}
	}
	base := []ns.Mount{tmpfs("/tmp"), tmpfs("/home"), tmpfs("/home/u"), bind("/home/u/proj")}
	tests := []struct {
		name string
		path string
		plan []ns.Mount
		want []ns.Mount
	}{
		{"under /tmp's tmpfs", "/tmp/jail/a.jsonl", base, nil},
		{"under the home tmpfs", "/home/u/.local/state/jail/a.jsonl", base, nil},
		{"directly in a tmpfs", "/tmp/a.jsonl", base, nil},
		{"visible host dir", "/var/log/jail/a.jsonl", base, dirMask("/var/log/jail")},
		{"empty plan", "/var/log/jail/a.jsonl", nil, dirMask("/var/log/jail")},
		{"prefix is not a parent", "/tmpx/a.jsonl", base, dirMask("/tmpx")},
		{"--read bind over a tmpfs", "/home/u/logs/a.jsonl", append(base, robind("/home/u/logs")), dirMask("/home/u/logs")},
		{"--read bind deeper in a tmpfs", "/home/u/logs/jail/a.jsonl", append(base, robind("/home/u/logs")), dirMask("/home/u/logs/jail")},
		{"dir holds the workspace", "/srv/audit/a.jsonl", append(base, bind("/srv/audit/ws")), fileMask("/srv/audit/a.jsonl")},
		{"dir holds a --read deep down", "/srv/a.jsonl", append(base, robind("/srv/x/y/z")), fileMask("/srv/a.jsonl")},
		{"dir holds a tmpfs", "/srv/a.jsonl", append(base, tmpfs("/srv/cache")), fileMask("/srv/a.jsonl")},
		{"masks inside do not count", "/srv/audit/a.jsonl", append(base, mask("/srv/audit/x.pem")), dirMask("/srv/audit")},
		{"read-only re-binds inside do not count", "/srv/audit/a.jsonl", append(base, ns.Mount{Kind: ns.KindReadOnly, Path: "/srv/audit/.git/config"}), dirMask("/srv/audit")},
		{"sibling with a common prefix", "/srv/audit/a.jsonl", append(base, bind("/srv/auditx")), dirMask("/srv/audit")},
		{"a later bind covers the tmpfs", "/data/logs/a.jsonl", []ns.Mount{tmpfs("/data"), robind("/data")}, dirMask("/data/logs")},
		{"a later tmpfs covers the bind", "/data/logs/a.jsonl", []ns.Mount{robind("/data"), tmpfs("/data")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := hideTrail(tt.path, tt.plan)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("hideTrail(%q) = %+v, want %+v", tt.path, got, tt.want)
			}
		})
	}
}

func TestByteExact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"ls -la", "ls -la"},
		{`C:\path`, `C:\path`}, // valid UTF-8: unchanged, backslash too
		{"h\u00e9llo \u65e5\U0001f600", "h\u00e9llo \u65e5\U0001f600"},
		{"\uFFFD", "\uFFFD"},
		{"\xff", `\xff`},
		{"caf\xe9.txt", `caf\xe9.txt`},
		{"\xe6\x97", `\xe6\x97`},
		{"\xc0\xaf", `\xc0\xaf`},
		{"\xed\xa0\x80", `\xed\xa0\x80`},
		{"a\\b\xff", `a\x5cb\xff`},
		{"\\\xff\\", `\x5c\xff\x5c`},
		{"\u00e9\xff\u00e9", "\u00e9\\xff\u00e9"},
		{"\x00\xff", "\x00\\xff"},
	}
	for _, tt := range tests {
		got := byteExact(tt.in)
		if got != tt.want {
			t.Errorf("byteExact(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("byteExact(%q) = %q is not UTF-8", tt.in, got)
		}
	}
}

// TestByteExactDistinct: the audit trail must tell apart two different
// commands. A valid string that spells an escape is left unchanged, so it
// collides with the invalid string the escape stands for.
func TestByteExactDistinct(t *testing.T) {
	pairs := [][2]string{
		{"\xff", "\\xff"},
		{"a\\b\xff", "a\\x5cb\\xff"},
		{"\xff", "\xfe"},
		{"\\\xff", "\\\\\xff"},
		{"\xc3", "\xc3\xa9"},
	}
	for _, p := range pairs {
		if a, b := byteExact(p[0]), byteExact(p[1]); a == b {
			t.Errorf("BUG: byteExact(%q) == byteExact(%q) == %q: the audit trail cannot tell these argvs apart", p[0], p[1], a)
		}
	}
}

// unescape inverts byteExact for invalid input (the documented encoding).
func unescape(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			var v byte
			for _, c := range []byte(s[i+2 : i+4]) {
				v <<= 4
				switch {
				case c >= '0' && c <= '9':
					v |= c - '0'
				case c >= 'a' && c <= 'f':
					v |= c - 'a' + 10
				}
			}
			b = append(b, v)
			i += 3
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

func FuzzByteExact(f *testing.F) {
	f.Add("ls", "ls ")
	f.Add("\xff", "\xfe")
	f.Add("a\\b\xff", "a\\\\b\xff")
	f.Add("caf\xe9", "caf\u00e9")
	f.Fuzz(func(t *testing.T, a, b string) {
		ea, eb := byteExact(a), byteExact(b)
		for _, c := range [][2]string{{a, ea}, {b, eb}} {
			in, out := c[0], c[1]
			if !utf8.ValidString(out) {
				t.Fatalf("byteExact(%q) = %q is not UTF-8", in, out)
			}
			if utf8.ValidString(in) {
				if out != in {
					t.Fatalf("valid %q changed to %q", in, out)
				}
			} else if unescape(out) != in {
				t.Fatalf("byteExact(%q) = %q does not decode back (got %q)", in, out, unescape(out))
			}
		}
		if a != b && ea == eb {
			t.Fatalf("byteExact(%q) == byteExact(%q) == %q", a, b, ea)
		}
	})
}

func TestSandboxPid(t *testing.T) {
	if got := sandboxPid(os.Getpid()); got != os.Getpid() {
		t.Errorf("sandboxPid(self) = %d, want %d", got, os.Getpid())
	}
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if got := sandboxPid(cmd.Process.Pid); got != cmd.Process.Pid {
		t.Errorf("sandboxPid(child) = %d, want %d", got, cmd.Process.Pid)
	}
	// Unknown pids come back unchanged.
	for _, pid := range []int{0, -1, 1 << 30} {
		if got := sandboxPid(pid); got != pid {
			t.Errorf("sandboxPid(%d) = %d", pid, got)
		}
	}
}

// A process in a pid namespace of its own is pid 1 there: sandboxPid gives
// the innermost NSpid, from the pidfd's fdinfo as from /proc/PID/status.
func TestSandboxPidNested(t *testing.T) {
	cmd := exec.Command("sleep", "10")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("user and pid namespaces: %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if got := sandboxPid(cmd.Process.Pid); got != 1 {
		t.Errorf("sandboxPid(nested child %d) = %d, want 1", cmd.Process.Pid, got)
	}
	var buf [256]byte
	fd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open: %v", err)
	}
	defer unix.Close(fd)
	n, err := readSmall(fmt.Sprintf("/proc/self/fdinfo/%d", fd), buf[:])
	if err != nil {
		t.Fatal(err)
	}
	if pid, ok := innermostNSpid(buf[:n]); !ok || pid != 1 {
		t.Errorf("innermostNSpid(fdinfo %q) = %d, %v; want 1", buf[:n], pid, ok)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if pid, ok := innermostNSpid(b); !ok || pid != 1 {
		t.Errorf("innermostNSpid(status) = %d, %v; want 1", pid, ok)
	}
}

func TestInnermostNSpid(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"Pid:\t5\nNSpid:\t5\n", 5, true},
		{"Pid:\t5244\nNSpid:\t5244\t12\t1\n", 1, true},
		{"NStgid:\t9\t2\nNSpid:\t9\t2", 2, true},      // no final newline
		{"pos:\t0\nPid:\t-1\nNSpid:\t-1\n", 0, false}, // an exited process's pidfd
		{"Pid:\t5\n", 0, false},
		{"NSpid:\n", 0, false},
		{"XNSpid:\t3\n", 0, false},
		{"NSpid:\tx\n", 0, false},
		{"", 0, false},
	} {
		got, ok := innermostNSpid([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("innermostNSpid(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// The kill switch puts the kill event on disk before it kills (README: the
// trail is "fsynced at kill"): when kill returns, every line up to the kill
// event is written and fsynced, even with a deep queue of events before it.
func TestKillSyncsTrail(t *testing.T) {
	w, err := audit.Create(filepath.Join(t.TempDir(), "trail.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	victim := exec.Command("sleep", "100")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer victim.Wait()
	defer victim.Process.Kill()
	// startRecorded: as in a run, the start event is in (events that come
	// before it wait for it, see record).
	r := &runner{pol: &policy.Policy{}, trail: w, sb: &ns.Sandbox{Pid: victim.Process.Pid}, startRecorded: true}
	for i := 0; i < 2000; i++ { // a queue the writer needs a while to drain
		r.record(audit.Exec{PID: 2, Path: "/bin/true", Argv: []string{"/bin/true", strings.Repeat("x", 200)}, Decision: audit.DecisionAllow})
	}
	r.kill("user", "test")
	st := w.Stats()
	if st.Written < 2001 || st.Synced != st.Written {
		t.Fatalf("kill returned with the kill event not on disk: %+v", st)
	}
	if err := victim.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("kill did not SIGKILL the sandbox's init: %v", err)
	}
}
