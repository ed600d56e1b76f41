//go:build linux

package tests

// End-to-end and adversarial tests of jail's seccomp layer (issue 4): the
// deny filter (one probe per rule, each with a control run that shows the
// probe would notice the rule missing), the exec audit through user
// notification, the --block-command guard rail, the default guard rails,
// and --seccomp FILE handling (exec-audit cost: `make bench`, section exec).

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ---------------------------------------------------------------- helpers

func seccompNeed(t *testing.T, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		if inCI() {
			t.Fatalf("%s is needed for the seccomp probes: %v", tool, err)
		}
		t.Skipf("no %s", tool)
	}
}

// seccompProbePL runs each probe in its own forked child (an unshare or a
// personality change that works must not colour the probes after it) and
// prints "name ok" or "name ERRNO".
const seccompProbePL = `
use strict; use warnings; use POSIX ();
$| = 1;
my $H = 1 << 32;
sub sc {
  my ($name, $nr, @a) = @_;
  my $pid = fork();
  if ($pid == 0) { $! = 0; my $r = syscall($nr, @a); my $e = $! + 0;
    print "$name ", ($r == -1 ? $e : "ok"), "\n"; POSIX::_exit(0); }
  waitpid($pid, 0);
}
sc("unshare-user", 272, 0x10000000);
sc("unshare-user-mnt", 272, 0x10000000 | 0x00020000);
sc("unshare-user-net", 272, 0x10000000 | 0x40000000);
sc("unshare-mnt", 272, 0x00020000);
{ open(my $f, "<", "/proc/self/ns/user") or die "ns: $!"; sc("setns-user", 308, fileno($f), 0x10000000); }
{ my $pid = fork();
  if ($pid == 0) { $! = 0; my $r = syscall(56, 0x10000000 | 17, 0, 0, 0, 0); my $e = $! + 0;
    if ($r == 0) { POSIX::_exit(0); }
    if ($r > 0) { waitpid($r, 0); }
    print "clone-newuser ", ($r == -1 ? $e : "ok"), "\n"; POSIX::_exit(0); }
  waitpid($pid, 0); }
sc("clone3", 435, 0, 0);
sc("mount", 165, 0, "/tmp", 1, 0, 0);
sc("umount2", 166, "/tmp", 0xffff);
sc("chroot", 161, "/nonexistent-jail-probe");
sc("open_tree", 428, -100, "/", 0);
sc("move_mount", 429, -100, "/a", -100, "/b", 0xffffffff);
sc("mount_setattr", 442, -100, "/", 0, 0, 0);
sc("keyctl", 250, 0, -3, 0);
sc("add_key", 248, 1, 1, 0, 0, -3);
sc("request_key", 249, 1, 1, 0, 0);
sc("bpf", 321, 9999, 0, 0);
{ my $attr = pack("LLQQQQ", 1, 128, 0, 0, 0, (1 | 1 << 5 | 1 << 6)); $attr .= "\0" x (128 - length($attr));
  sc("perf_event_open", 298, $attr, 0, -1, -1, 0); }
sc("userfaultfd", 323, 0x80000 | 1);
{ my $p = "\0" x 120; sc("io_uring_setup", 425, 1, $p); }
sc("io_uring_enter", 426, -1, 0, 0, 0, 0, 0);
sc("io_uring_register", 427, -1, 0, 0, 0);
sc("socket-packet", 41, 17, 99, 0);
sc("socket-packet-raw", 41, 17, 3, 0);
sc("socket-packet-hi", 41, $H | 17, 99, 0);
sc("socket-vsock", 41, 40, 1, 0);
sc("socket-vsock-hi", 41, $H | 40, 1, 0);
sc("socket-netfilter", 41, 16, 3, 12);
sc("socket-netlink-route", 41, 16, 3, 0);
sc("socket-unix", 41, 1, 1, 0);
sc("socket-inet", 41, 2, 1, 0);
sc("socket-mptcp", 41, 2, 1, 262);
sc("socket-mptcp-hi", 41, 10, 1, $H | 262);
{ my $sv = "\0" x 8;
  sc("socketpair-tipc", 53, 30, 5, 0, $sv);
  sc("socketpair-vsock", 53, 40, 1, 0, $sv);
  sc("socketpair-vsock-hi", 53, $H | 40, 1, 0, $sv);
  sc("socketpair-unix", 53, 1, 1, 0, $sv); }
sc("open_tree_attr", 467, -100, "/", 0, 0, 0);
{ my $ldt = "\0" x 16; sc("modify_ldt", 154, 0, $ldt, 16); }
{ pipe(my $pr, my $pw) or die "pipe: $!"; my $c = "XXXXXXXX"; my $fd = fileno($pr);
  sc("ioctl-tiocsti", 16, $fd, 0x5412, $c);
  sc("ioctl-tiocsti-hi", 16, $fd, $H | 0x5412, $c);
  sc("ioctl-tioclinux", 16, $fd, 0x541C, $c);
  sc("ioctl-tioclinux-hi", 16, $fd, $H | 0x541C, $c);
  sc("ioctl-tiocsetd", 16, $fd, 0x5423, $c);
  sc("ioctl-tiocsetd-hi", 16, $fd, $H | 0x5423, $c);
  sc("ioctl-fionread", 16, $fd, 0x541B, $c); }
sc("personality-rie", 135, 0x0400000);
sc("personality-rie-hi", 135, $H | 0x0400000);
sc("personality-query", 135, 0xffffffff);
{ my $h = pack("LL", 128, 0) . ("\0" x 128); my $m = pack("L", 0); sc("name_to_handle_at", 303, -100, "/", $h, $m, 0); }
{ my $pid = fork(); if ($pid == 0) { sleep 30; POSIX::_exit(0); }
  sc("ptrace-attach-sibling", 101, 16, $pid, 0, 0);
  sc("process_vm_readv-sibling", 310, $pid, 0, 0, 0, 0, 0);
  kill 9, $pid; waitpid($pid, 0); }
sc("ptrace-traceme", 101, 0, 0, 0, 0);
sc("ptrace-attach-1", 101, 16, 1, 0, 0);
{ my $buf = "\0" x 8; my $l = pack("QQ", unpack("Q", pack("p", $buf)), 8); my $r = pack("QQ", 0x400000, 8);
  sc("process_vm_readv-1", 310, 1, $l, 1, $r, 1, 0); }
print "probes-done\n";
`

// seccompProbe is one line of seccompProbePL: what jail's filter must
// answer ("1" = EPERM, "38" = ENOSYS, "ok" = allowed) and whether the
// probe discriminates, i.e. gives another answer when the rule is missing
// (checked by TestSeccompProbesDiscriminate). Non-discriminating probes are
// refused by another layer as well (no capability, non-dumpable init).
type seccompProbe struct {
	name  string
	want  string
	discr bool
	why   string
}

var seccompProbes = []seccompProbe{
	{"unshare-user", "1", true, "new user namespace (root over a fresh kernel surface)"},
	{"unshare-user-mnt", "1", true, "new user+mount namespace"},
	{"unshare-user-net", "1", true, "new user+net namespace (nf_tables LPEs start here)"},
	{"unshare-mnt", "1", false, "new mount namespace alone (also needs CAP_SYS_ADMIN)"},
	{"setns-user", "1", true, "setns"},
	{"clone-newuser", "1", true, "clone(CLONE_NEWUSER)"},
	{"clone3", "38", true, "clone3 must be ENOSYS so libc falls back to the checked clone"},
	{"mount", "1", true, "mount (bad type pointer: EFAULT if it reaches the kernel)"},
	{"umount2", "1", true, "umount2 (bad flags: EINVAL if it reaches the kernel)"},
	{"chroot", "1", true, "chroot (missing dir: ENOENT if it reaches the kernel)"},
	{"open_tree", "1", true, "open_tree (succeeds unprivileged without the rule)"},
	{"move_mount", "1", false, "move_mount (also needs CAP_SYS_ADMIN)"},
	{"mount_setattr", "1", true, "mount_setattr"},
	{"keyctl", "1", true, "keyctl (session keyring is shared with the host)"},
	{"add_key", "1", true, "add_key"},
	{"request_key", "1", true, "request_key"},
	{"bpf", "1", true, "bpf"},
	{"perf_event_open", "1", true, "perf_event_open"},
	{"userfaultfd", "1", true, "userfaultfd (UFFD_USER_MODE_ONLY works unprivileged)"},
	{"io_uring_setup", "1", true, "io_uring_setup"},
	{"io_uring_enter", "1", true, "io_uring_enter"},
	{"io_uring_register", "1", true, "io_uring_register"},
	{"socket-packet", "1", true, "socket(AF_PACKET) (bad type: EINVAL if it reaches the kernel)"},
	{"socket-packet-raw", "1", false, "socket(AF_PACKET, SOCK_RAW) (also needs CAP_NET_RAW)"},
	{"socket-packet-hi", "1", true, "socket(AF_PACKET | 1<<32): family compared on 32 bits"},
	{"socket-vsock", "1", true, "socket(AF_VSOCK) reaches the host"},
	{"socket-vsock-hi", "1", true, "socket(AF_VSOCK | 1<<32)"},
	{"socket-netfilter", "1", true, "socket(AF_NETLINK, NETLINK_NETFILTER): nf_tables"},
	{"socket-netlink-route", "ok", false, "NETLINK_ROUTE stays allowed (ip addr, getaddrinfo)"},
	{"socket-unix", "ok", false, "AF_UNIX stays allowed"},
	{"socket-inet", "ok", false, "AF_INET stays allowed"},
	{"socket-mptcp", "1", true, "socket(AF_INET, IPPROTO_MPTCP): Landlock's TCP rules miss MPTCP"},
	{"socket-mptcp-hi", "1", true, "socket(AF_INET6, IPPROTO_MPTCP | 1<<32): protocol compared on 32 bits"},
	{"socketpair-tipc", "1", true, "socketpair(AF_TIPC): TIPC implements socketpair (EAFNOSUPPORT without the tipc module)"},
	{"socketpair-vsock", "1", true, "socketpair(AF_VSOCK) runs vsock's create (EOPNOTSUPP after it)"},
	{"socketpair-vsock-hi", "1", true, "socketpair(AF_VSOCK | 1<<32): family compared on 32 bits"},
	{"socketpair-unix", "ok", false, "socketpair(AF_UNIX) stays allowed"},
	{"open_tree_attr", "1", true, "open_tree_attr (Linux 6.15; ENOSYS before): open_tree's twin"},
	{"modify_ldt", "1", true, "modify_ldt (reading the LDT works unprivileged without the rule)"},
	{"ioctl-tiocsti", "1", true, "TIOCSTI (ENOTTY on a pipe if it reaches the kernel)"},
	{"ioctl-tiocsti-hi", "1", true, "TIOCSTI | 1<<32 (CVE-2019-10063)"},
	{"ioctl-tioclinux", "1", true, "TIOCLINUX"},
	{"ioctl-tioclinux-hi", "1", true, "TIOCLINUX | 1<<32"},
	{"ioctl-tiocsetd", "1", true, "TIOCSETD (ENOTTY on a pipe if it reaches the kernel): line discipline modules autoload"},
	{"ioctl-tiocsetd-hi", "1", true, "TIOCSETD | 1<<32"},
	{"ioctl-fionread", "ok", false, "other ioctls pass (FIONREAD on a pipe)"},
	{"personality-rie", "1", true, "personality(READ_IMPLIES_EXEC)"},
	{"personality-rie-hi", "1", true, "personality(READ_IMPLIES_EXEC | 1<<32)"},
	{"personality-query", "ok", false, "personality(0xffffffff) query stays allowed"},
	{"name_to_handle_at", "1", true, "file handles (Shocker)"},
	{"ptrace-attach-sibling", "1", true, "ptrace of another sandbox process without --allow-ptrace"},
	{"process_vm_readv-sibling", "1", true, "process_vm_readv without --allow-ptrace"},
	{"ptrace-traceme", "1", true, "PTRACE_TRACEME (CVE-2019-13272)"},
	{"ptrace-attach-1", "1", false, "ptrace of pid 1 (init is also non-dumpable)"},
	{"process_vm_readv-1", "1", false, "read init's memory"},
}

func seccompParseProbes(t *testing.T, out string) map[string]string {
	t.Helper()
	if !strings.Contains(out, "probes-done") {
		t.Fatalf("probe script did not finish:\n%s", out)
	}
	got := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 2 {
			got[f[0]] = f[1]
		}
	}
	return got
}

func seccompRunProbes(t *testing.T, flags ...string) map[string]string {
	t.Helper()
	ws := workspace(t)
	if err := os.WriteFile(filepath.Join(ws, "probe.pl"), []byte(seccompProbePL), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, flags...), "--", "perl", "probe.pl")
	r := run(t, runOpts{dir: ws}, args...)
	mustCode(t, r, 0)
	return seccompParseProbes(t, r.stdout)
}

// seccompOffPolicy replaces the deny-list with one harmless rule: the
// control for "what if the rule were missing" (the architecture check, the
// set-id rule, the network walls and the terminal ioctl rules stay).
const seccompOffPolicy = `{"default_action": "allow", "syscalls": [{"names": ["acct"], "action": "errno"}]}`

func seccompWriteFile(t *testing.T, name, content string) string {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// seccompI386ELF returns a minimal static x86-64 ELF that issues one i386
// system call through `int $0x80` (eax=nr, ebx=a1) and exits with the low
// byte of the result. No toolchain needed, so the probe never skips.
func seccompI386ELF(nr, a1 uint32) []byte {
	const base = 0x400000
	var code []byte
	le32 := func(v uint32) []byte { b := make([]byte, 4); binary.LittleEndian.PutUint32(b, v); return b }
	code = append(code, 0xB8)
	code = append(code, le32(nr)...) // mov eax, nr
	code = append(code, 0xBB)
	code = append(code, le32(a1)...)        // mov ebx, a1
	code = append(code, 0x31, 0xC9)         // xor ecx, ecx
	code = append(code, 0x31, 0xD2)         // xor edx, edx
	code = append(code, 0xCD, 0x80)         // int 0x80
	code = append(code, 0x89, 0xC7)         // mov edi, eax
	code = append(code, 0xB8, 231, 0, 0, 0) // mov eax, 231 (exit_group)
	code = append(code, 0x0F, 0x05)         // syscall
	const hdr = 64 + 56
	total := uint64(hdr + len(code))
	var b bytes.Buffer
	w := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.Write([]byte{0x7F, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	w(uint16(2))          // ET_EXEC
	w(uint16(0x3E))       // EM_X86_64
	w(uint32(1))          // EV_CURRENT
	w(uint64(base + hdr)) // entry
	w(uint64(64))         // phoff
	w(uint64(0))          // shoff
	w(uint32(0))          // flags
	w(uint16(64))         // ehsize
	w(uint16(56))         // phentsize
	w(uint16(1))          // phnum
	w(uint16(64))         // shentsize
	w(uint16(0))          // shnum
	w(uint16(0))          // shstrndx
	w(uint32(1))          // PT_LOAD
	w(uint32(5))          // R+X
	w(uint64(0))          // offset
	w(uint64(base))       // vaddr
	w(uint64(base))       // paddr
	w(total)              // filesz
	w(total)              // memsz
	w(uint64(0x1000))     // align
	b.Write(code)
	return b.Bytes()
}

type seccompExec struct {
	Seq      int      `json:"seq"`
	Type     string   `json:"type"`
	PID      int      `json:"pid"`
	Path     string   `json:"path"`
	Argv     []string `json:"argv"`
	Cwd      string   `json:"cwd"`
	Decision string   `json:"decision"`
	Rule     string   `json:"rule"`
}

// seccompTrail reads a JSONL trail: every event as a map, and the exec
// events decoded.
func seccompTrail(t *testing.T, path string) (all []map[string]any, execs []seccompExec) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("audit trail: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("audit trail line is not JSON: %v\n%s", err, line)
		}
		all = append(all, m)
		if m["type"] == "exec" {
			var e seccompExec
			json.Unmarshal(line, &e)
			execs = append(execs, e)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return all, execs
}

func seccompArgvIs(e seccompExec, argv ...string) bool {
	if len(e.Argv) != len(argv) {
		return false
	}
	for i := range argv {
		if e.Argv[i] != argv[i] {
			return false
		}
	}
	return true
}

func seccompFind(execs []seccompExec, argv ...string) int {
	for i, e := range execs {
		if seccompArgvIs(e, argv...) {
			return i
		}
	}
	return -1
}

func seccompDumpExecs(execs []seccompExec) string {
	var b strings.Builder
	for i, e := range execs {
		if i > 40 {
			fmt.Fprintf(&b, "... %d more\n", len(execs)-i)
			break
		}
		fmt.Fprintf(&b, "pid=%d path=%q argv=%q cwd=%q decision=%s rule=%q\n", e.PID, e.Path, e.Argv, e.Cwd, e.Decision, e.Rule)
	}
	return b.String()
}

func seccompStatusField(out, field string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, field+":") {
			return strings.TrimSpace(strings.TrimPrefix(l, field+":"))
		}
	}
	return ""
}

// ------------------------------------------------------------- the filter

// The agent, and anything it starts, runs under a seccomp filter with
// no_new_privs; it cannot be shed.
func TestSeccompStatus(t *testing.T) {
	for _, flags := range [][]string{nil, {"--no-exec-audit"}} {
		t.Run(fmt.Sprint(flags), func(t *testing.T) {
			r := sh(t, runOpts{}, `cat /proc/self/status; echo ===; /bin/sh -c 'cat /proc/self/status'`, flags...)
			mustCode(t, r, 0)
			for i, part := range strings.SplitN(r.stdout, "===", 2) {
				if got := seccompStatusField(part, "Seccomp"); got != "2" {
					t.Errorf("process %d: Seccomp: %q, want 2 (filter mode)", i, got)
				}
				if got := seccompStatusField(part, "NoNewPrivs"); got != "1" {
					t.Errorf("process %d: NoNewPrivs: %q, want 1", i, got)
				}
				n, _ := strconv.Atoi(seccompStatusField(part, "Seccomp_filters"))
				// The deny list and the exec audit in one filter, or two
				// where the kernel refuses the merged one a listener; the
				// deny filter alone with --no-exec-audit. Plus the agent
				// filter (no prlimit64 setting pid 1's limits) in every case.
				if n < 2 || n > 3 || (len(flags) > 0 && n != 2) {
					t.Errorf("process %d: Seccomp_filters: %d (flags %v)", i, n, flags)
				}
			}
		})
	}
}

// One probe per rule of the deny-list; each must be refused with the
// documented errno. TestSeccompProbesDiscriminate shows the same probes
// succeed (or fail differently) when the rule is missing.
func TestSeccompDenyList(t *testing.T) {
	seccompNeed(t, "perl")
	for _, flags := range [][]string{nil, {"--no-exec-audit"}} {
		t.Run(fmt.Sprint(flags), func(t *testing.T) {
			got := seccompRunProbes(t, flags...)
			for _, p := range seccompProbes {
				if got[p.name] != p.want {
					t.Errorf("%s: got %q, want %q (%s)", p.name, got[p.name], p.want, p.why)
				}
			}
		})
	}
}

// seccompKept: the probes of the network walls and the terminal ioctls,
// which --seccomp-replace keeps (other options' promises rest on the
// first: AF_VSOCK goes around the network namespace, MPTCP around
// --no-local-tcp, io_uring's socket op around both; the second reach the
// user's terminal when jail hands it on). Their control is seccomp's
// TestFilterProbes, which runs the same attacks with no filter.
var seccompKept = map[string]bool{
	"ioctl-tiocsti": true, "ioctl-tiocsti-hi": true, "ioctl-tioclinux": true,
	"ioctl-tioclinux-hi": true, "ioctl-tiocsetd": true, "ioctl-tiocsetd-hi": true,
	"socket-packet": true, "socket-packet-raw": true, "socket-packet-hi": true,
	"socket-vsock": true, "socket-vsock-hi": true,
	"socket-mptcp": true, "socket-mptcp-hi": true,
	"socketpair-tipc": true, "socketpair-vsock": true, "socketpair-vsock-hi": true,
	// io_uring's socket op makes a socket seccomp never sees (review14f).
	"io_uring_setup": true, "io_uring_enter": true, "io_uring_register": true,
}

// The control for TestSeccompDenyList: with the deny-list replaced by a
// harmless one (--seccomp-replace), every discriminating probe must get
// another answer, so that a missing rule fails TestSeccompDenyList; the
// network walls' probes (seccompKept) must get the same one.
func TestSeccompProbesDiscriminate(t *testing.T) {
	seccompNeed(t, "perl")
	pol := seccompWriteFile(t, "off.json", seccompOffPolicy)
	got := seccompRunProbes(t, "--seccomp", pol, "--seccomp-replace")
	for _, p := range seccompProbes {
		switch {
		case seccompKept[p.name]:
			if got[p.name] != p.want {
				t.Errorf("%s: %q with the deny-list replaced, want %q: --seccomp-replace must keep the network walls and terminal rules (%s)", p.name, got[p.name], p.want, p.why)
			}
		case p.discr && got[p.name] == p.want:
			t.Errorf("%s: still %q with the deny-list replaced: the probe does not show the rule (or --seccomp-replace kept it)", p.name, got[p.name])
		}
	}
}

// --no-local-tcp's promise holds under --seccomp-replace: MPTCP, which
// Landlock's TCP rules do not check, bound, listened and connected on the
// sandbox's loopback when the replacing policy dropped the built-in MPTCP
// rule (the same probe as TestLoopbackAndLocalTCP's).
func TestSeccompReplaceKeepsNoLocalTCP(t *testing.T) {
	seccompNeed(t, "python3")
	pol := seccompWriteFile(t, "off.json", seccompOffPolicy)
	probe := `import socket
for name, proto in (("TCP", 0), ("MPTCP", 262)):
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)
        s.bind(("127.0.0.1", 0)); s.listen(1); p = s.getsockname()[1]
        c = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto); c.connect(("127.0.0.1", p))
        a, _ = s.accept(); c.send(b"hi"); print(name, "CONNECTED", a.recv(2).decode())
    except OSError as e:
        print(name, "REFUSED", e.errno)
`
	r := run(t, runOpts{}, "--no-local-tcp", "--seccomp", pol, "--seccomp-replace", "--", "python3", "-c", probe)
	mustCode(t, r, 0)
	// TCP: Landlock's EACCES at bind; MPTCP: seccomp's EPERM at socket.
	if !strings.Contains(r.stdout, "TCP REFUSED 13\n") || !strings.Contains(r.stdout, "MPTCP REFUSED 1\n") {
		t.Fatalf("--no-local-tcp --seccomp-replace: %q%s", r.stdout, r.stderr)
	}
	// The control: without --no-local-tcp both connect, so the probe can
	// tell a wall from a broken loopback.
	r = run(t, runOpts{}, "--", "python3", "-c", strings.ReplaceAll(probe, "262", "0"))
	mustCode(t, r, 0)
	if strings.Count(r.stdout, "CONNECTED hi") != 2 {
		t.Fatalf("control, --net none: %q%s", r.stdout, r.stderr)
	}
}

// --allow-ptrace lets the sandbox's own processes trace each other, and
// nothing more: init (which holds the supervisor channel) stays untouchable.
func TestSeccompAllowPtrace(t *testing.T) {
	seccompNeed(t, "perl")
	got := seccompRunProbes(t, "--allow-ptrace")
	for name, want := range map[string]string{
		"ptrace-attach-sibling":    "ok",
		"process_vm_readv-sibling": "ok",
		"ptrace-traceme":           "ok",
		"ptrace-attach-1":          "1",
		"process_vm_readv-1":       "1",
		"keyctl":                   "1",
		"unshare-user":             "1",
		"ioctl-tiocsti-hi":         "1",
	} {
		if got[name] != want {
			t.Errorf("--allow-ptrace: %s: got %q, want %q", name, got[name], want)
		}
	}
	// Reading init's memory through /proc must fail too.
	r := sh(t, runOpts{}, `(exec 3</proc/1/mem) 2>/dev/null && echo OPEN-INIT-MEM
(exec 3</proc/$$/mem) && echo open-own-mem
cat /proc/1/environ >/dev/null 2>&1 && echo READ-INIT-ENV
cat /proc/$$/environ >/dev/null && echo read-own-env`, "--allow-ptrace")
	if strings.Contains(r.stdout, "OPEN-INIT-MEM") || strings.Contains(r.stdout, "READ-INIT-ENV") {
		t.Errorf("init's memory or environment is readable with --allow-ptrace:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "open-own-mem") || !strings.Contains(r.stdout, "read-own-env") {
		t.Errorf("control: the shell cannot open its own /proc/PID/mem or environ; the probe proves nothing:\n%s%s", r.stdout, r.stderr)
	}
}

// util-linux unshare and mount as an agent would type them.
func TestSeccompUnshareAndMountTools(t *testing.T) {
	seccompNeed(t, "unshare")
	script := `
unshare -U true 2>/dev/null; echo "unshare-U=$?"
unshare -Ur id -u 2>/dev/null; echo "unshare-Ur=$?"
unshare -Urm sh -c 'mount -t tmpfs none /tmp && echo MOUNTED' 2>/dev/null; echo "unshare-mount=$?"
mkdir -p /tmp/jsm; mount -t tmpfs none /tmp/jsm 2>/dev/null; echo "mount=$?"
umount /proc 2>/dev/null; echo "umount=$?"
`
	r := sh(t, runOpts{}, script)
	mustCode(t, r, 0)
	for _, k := range []string{"unshare-U", "unshare-Ur", "unshare-mount", "mount", "umount"} {
		if strings.Contains(r.stdout, k+"=0\n") {
			t.Errorf("%s succeeded inside the sandbox", k)
		}
		if !strings.Contains(r.stdout, k+"=") {
			t.Errorf("%s: no result", k)
		}
	}
	if strings.Contains(r.stdout, "MOUNTED") {
		t.Errorf("a new user+mount namespace could mount:\n%s", r.stdout)
	}
	// Control: with the deny-list replaced the same unshare works, so this
	// test would notice the rule missing.
	pol := seccompWriteFile(t, "off.json", seccompOffPolicy)
	c := sh(t, runOpts{}, script, "--seccomp", pol, "--seccomp-replace")
	if !strings.Contains(c.stdout, "unshare-U=0\n") {
		t.Errorf("control: unshare -U fails even without the deny-list; the probe proves nothing:\n%s%s", c.stdout, c.stderr)
	}
}

// i386 `int $0x80` and the x32 ABI are fatal (a deny-list written for the
// x86-64 table means nothing for other tables).
func TestSeccompForeignArch(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the foreign-architecture probes are for x86-64")
	}
	ws := workspace(t)
	bins := map[string][]byte{
		"js-i386-getpid":  seccompI386ELF(20, 0),
		"js-i386-unshare": seccompI386ELF(310, unix.CLONE_NEWUSER),
	}
	for n, b := range bins {
		if err := os.WriteFile(filepath.Join(ws, n), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Control, outside the jail: the helpers really make the call (not
	// killed; getpid exits with pid&0xff, unshare with 0).
	ia32 := true
	for n := range bins {
		cmd := exec.Command(filepath.Join(ws, n))
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			ws := ee.Sys().(syscall.WaitStatus)
			if ws.Signaled() {
				if ws.Signal() == syscall.SIGSEGV {
					ia32 = false
					t.Logf("%s: SIGSEGV outside the jail: this kernel has no IA32 emulation", n)
					continue
				}
				t.Fatalf("control %s died of %v outside the jail", n, ws.Signal())
			}
		} else if err != nil {
			t.Fatalf("control %s: %v", n, err)
		}
	}
	r := sh(t, runOpts{dir: ws}, `./js-i386-getpid; echo "getpid=$?"; ./js-i386-unshare; echo "unshare=$?"; perl -e 'syscall(0x40000000 | 39); print "x32-alive\n"'; echo "x32=$?"`)
	mustCode(t, r, 0)
	sigsys := fmt.Sprint(128 + int(syscall.SIGSYS))
	for _, k := range []string{"getpid", "unshare"} {
		want := k + "=" + sigsys + "\n"
		if !ia32 {
			want = k + "=" + fmt.Sprint(128+int(syscall.SIGSEGV)) + "\n"
		}
		if !strings.Contains(r.stdout, want) {
			t.Errorf("i386 %s via int 0x80 was not killed by SIGSYS (want %q):\n%s%s", k, strings.TrimSpace(want), r.stdout, r.stderr)
		}
	}
	if _, err := exec.LookPath("perl"); err == nil {
		if strings.Contains(r.stdout, "x32-alive") || !strings.Contains(r.stdout, "x32="+sigsys+"\n") {
			t.Errorf("x32 syscall was not killed by SIGSYS:\n%s", r.stdout)
		}
	}
	// The agent itself killed by SIGSYS: jail reports 128+31, never 0.
	d := run(t, runOpts{dir: ws}, "--", "./js-i386-getpid")
	if ia32 {
		mustCode(t, d, 128+int(syscall.SIGSYS))
	} else if d.code == 0 {
		t.Fatalf("exit 0 for a killed agent")
	}
	// --seccomp-replace keeps the architecture check.
	pol := seccompWriteFile(t, "off.json", seccompOffPolicy)
	k := sh(t, runOpts{dir: ws}, `./js-i386-unshare; echo "unshare=$?"`, "--seccomp", pol, "--seccomp-replace")
	if ia32 && !strings.Contains(k.stdout, "unshare="+sigsys+"\n") {
		t.Errorf("with --seccomp-replace, i386 unshare was not killed:\n%s%s", k.stdout, k.stderr)
	}
}

// seccompOnPty runs jail with a host pty as its terminal (so the agent gets
// its own pty in the sandbox) and returns what the terminal showed.
func seccompOnPty(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return onPty(t, dir, jail(t), args...)
}

// onPty runs name with args on a new pty as its controlling terminal and
// returns what the pty shows up to "pty-probe-done".
func onPty(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	master, slave := openPty(t)
	defer master.Close()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TERM=dumb")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			buf.Write(b[:n])
			if err != nil || strings.Contains(buf.String(), "pty-probe-done") {
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("no end marker on the terminal; it shows:\n%s", buf.String())
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("jail did not exit")
	}
	return buf.String()
}

// TIOCSTI on the agent's own (controlling) pty, with and without high
// bits in the request: refused. The control run shows the same ioctl works
// when the rule is missing (legacy TIOCSTI enabled) or fails for another
// reason.
func TestSeccompTIOCSTIOwnPty(t *testing.T) {
	seccompNeed(t, "perl")
	probe := `open(my $t, "+<", "/dev/tty") or print "no-ctty $!\n"; my $c = "X";
for my $req (0x5412, (1 << 32) | 0x5412, (0xffffffff << 32) | 0x5412) { $! = 0; my $r = syscall(16, 0, $req, $c); my $e = $! + 0;
  printf "tiocsti-%x=%s\n", $req, ($r == -1 ? $e : "ok"); }
print "tty=" . (-t STDIN ? "yes" : "no") . "\n"; print "pty-probe-" . "done\n";`
	ws := workspace(t)
	out := seccompOnPty(t, ws, "--", "perl", "-e", probe)
	if !strings.Contains(out, "tty=yes") {
		t.Fatalf("the agent has no terminal as stdin:\n%s", out)
	}
	if strings.Contains(out, "no-ctty") {
		t.Errorf("the pty is not the agent's controlling terminal (TIOCSTI would fail anyway):\n%s", out)
	}
	for _, k := range []string{"tiocsti-5412=1", "tiocsti-100005412=1", "tiocsti-ffffffff00005412=1"} {
		if !strings.Contains(out, k+"\r") {
			t.Errorf("want %s (EPERM); the terminal shows:\n%s", k, out)
		}
	}
	// Control: the same probe on a pty of its own outside the sandbox
	// gets another answer (the kernel's: done, or EIO where
	// dev.tty.legacy_tiocsti=0), so EPERM above is the filter's. No jail
	// run is the control: --seccomp-replace keeps the terminal rules too
	// (seccomp's ttyPrefix and TestReplaceKeepsTerminalRules).
	c := onPty(t, ws, "perl", "-e", probe)
	if !strings.Contains(c, "pty-probe-done") || strings.Contains(c, "tiocsti-5412=1\r") || strings.Contains(c, "tiocsti-100005412=1\r") {
		t.Errorf("control: outside the sandbox TIOCSTI is EPERM too (or the probe did not run); the probe proves nothing:\n%s", c)
	}
}

// -------------------------------------------------------- --seccomp FILE

// A bad --seccomp file stops jail before anything runs: exit 125, one
// line naming the file.
func TestSeccompBadPolicyFile(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"missing.json":   "",
		"garbage.json":   `{"default_action": "allow", "syscalls": [`,
		"unknown.json":   `{"default_action": "allow", "syscalls": [{"names": ["no_such_syscall_js"], "action": "errno"}]}`,
		"badaction.json": `{"default_action": "allow", "syscalls": [{"names": ["sync"], "action": "explode"}]}`,
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			if content != "" {
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ws := workspace(t)
			r := sh(t, runOpts{dir: ws}, `touch ran-anyway`, "--seccomp", p)
			mustCode(t, r, 125)
			if !strings.Contains(r.stderr, p) {
				t.Errorf("stderr does not name %s:\n%s", p, r.stderr)
			}
			if strings.Count(strings.TrimSpace(r.stderr), "\n") > 3 {
				t.Errorf("a setup error should be a line or two:\n%s", r.stderr)
			}
			if _, err := os.Stat(filepath.Join(ws, "ran-anyway")); err == nil {
				t.Errorf("the command ran despite the bad policy")
			}
		})
	}
	t.Run("replace-without-file", func(t *testing.T) {
		r := sh(t, runOpts{}, `echo ran-anyway`, "--seccomp-replace")
		if r.code == 0 || strings.Contains(r.stdout, "ran-anyway") {
			t.Errorf("--seccomp-replace without --seccomp ran the command with code %d", r.code)
		}
	})
}

// --seccomp extends the built-in list; with --seccomp-replace it replaces it
// (the architecture check stays: TestSeccompForeignArch).
func TestSeccompPolicyFile(t *testing.T) {
	seccompNeed(t, "perl")
	pol := seccompWriteFile(t, "sync.json", `{"default_action": "allow", "syscalls": [{"names": ["sync"], "action": "errno"}]}`)
	probe := `for my $p (["sync", 162], ["keyctl", 250, 0, -3, 0]) { my ($n, $nr, @a) = @$p; $! = 0; my $r = syscall($nr, @a); my $e = $! + 0; print "$n=", ($r == -1 ? $e : "ok"), "\n"; }`
	base := run(t, runOpts{}, "--", "perl", "-e", probe)
	ext := run(t, runOpts{}, "--seccomp", pol, "--", "perl", "-e", probe)
	rep := run(t, runOpts{}, "--seccomp", pol, "--seccomp-replace", "--", "perl", "-e", probe)
	for _, c := range []struct {
		name string
		r    result
		want []string
	}{
		{"built-in", base, []string{"sync=ok", "keyctl=1"}},
		{"extended", ext, []string{"sync=1", "keyctl=1"}},
		{"replaced", rep, []string{"sync=1", "keyctl=ok"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.r.stdout, w+"\n") {
				t.Errorf("%s: want %s; got code %d:\n%s%s", c.name, w, c.r.code, c.r.stdout, c.r.stderr)
			}
		}
	}
}

// ------------------------------------------------------------ exec audit

// Every command of a small shell script (a pipeline included) is in the
// trail, in order, with path, argv, cwd and the pid the sandbox sees; the
// notify listener is not in the agent's hands.
func TestSeccompExecAuditPipeline(t *testing.T) {
	ws := workspace(t)
	trail := filepath.Join(t.TempDir(), "audit.jsonl")
	script := `/bin/echo jsA | /bin/cat | /usr/bin/tr a-z A-Z; /bin/ls -d / >/dev/null; /usr/bin/env true jsZ
for f in /proc/$$/fd/*; do readlink "$f"; done
/bin/sh -c 'echo "inner-pid=$$"; exec /bin/true jspid'`
	r := run(t, runOpts{dir: ws}, "--audit", trail, "--", "/bin/sh", "-c", script)
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "JSA") {
		t.Fatalf("pipeline output missing:\n%s%s", r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "seccomp") {
		t.Errorf("the agent holds a seccomp notify fd (it could answer its own notifications):\n%s", r.stdout)
	}
	all, execs := seccompTrail(t, trail)
	if len(all) == 0 || all[0]["type"] != "start" {
		t.Fatalf("trail does not begin with a start event")
	}
	if k, _ := all[0]["kernel"].(map[string]any); k == nil || k["seccomp"] != true || k["seccomp_notify"] != true {
		t.Errorf("start event kernel = %v, want seccomp and seccomp_notify true", all[0]["kernel"])
	}
	agent := seccompFind(execs, "/bin/sh", "-c", script)
	echo := seccompFind(execs, "/bin/echo", "jsA")
	cat := seccompFind(execs, "/bin/cat")
	tr := seccompFind(execs, "/usr/bin/tr", "a-z", "A-Z")
	ls := seccompFind(execs, "/bin/ls", "-d", "/")
	env := seccompFind(execs, "/usr/bin/env", "true", "jsZ")
	tru := seccompFind(execs, "true", "jsZ")
	inner := seccompFind(execs, "/bin/true", "jspid")
	idx := map[string]int{"agent": agent, "echo": echo, "cat": cat, "tr": tr, "ls": ls, "env": env, "true (via env)": tru, "exec'd true": inner}
	for n, i := range idx {
		if i < 0 {
			t.Errorf("%s: no exec event", n)
		}
	}
	if t.Failed() {
		t.Fatalf("exec events:\n%s", seccompDumpExecs(execs))
	}
	order := []int{agent, echo, ls, env, tru, inner}
	for i := 1; i < len(order); i++ {
		if order[i] <= order[i-1] {
			t.Errorf("exec events out of order:\n%s", seccompDumpExecs(execs))
			break
		}
	}
	if cat <= agent || tr <= agent || cat >= ls || tr >= ls {
		t.Errorf("pipeline members not between the agent and ls:\n%s", seccompDumpExecs(execs))
	}
	for _, i := range []int{agent, echo, cat, tr, ls, env, inner} {
		e := execs[i]
		if e.Decision != "allow" {
			t.Errorf("%q: decision %q, want allow", e.Argv, e.Decision)
		}
		if e.Cwd != ws {
			t.Errorf("%q: cwd %q, want %q", e.Argv, e.Cwd, ws)
		}
		if e.PID <= 0 {
			t.Errorf("%q: pid %d", e.Argv, e.PID)
		}
	}
	if execs[cat].Path != "/bin/cat" || execs[tr].Path != "/usr/bin/tr" {
		t.Errorf("paths: cat %q, tr %q", execs[cat].Path, execs[tr].Path)
	}
	if !strings.HasSuffix(execs[tru].Path, "/true") {
		t.Errorf("env's exec of true: path %q", execs[tru].Path)
	}
	// The pid is the one the sandbox sees (schema: "pid inside the sandbox").
	var innerPid int
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "inner-pid=") {
			innerPid, _ = strconv.Atoi(strings.TrimPrefix(l, "inner-pid="))
		}
	}
	if innerPid == 0 || execs[inner].PID != innerPid {
		t.Errorf("exec event pid %d, but the process is pid %d inside the sandbox", execs[inner].PID, innerPid)
	}
}

// execveat (fexecve) is audited too, and argv[0] spoofing or a different
// exec path does not get past a --block-command pattern.
func TestSeccompBlockCommand(t *testing.T) {
	seccompNeed(t, "perl")
	seccompNeed(t, "python3")
	ws := workspace(t)
	trail := filepath.Join(t.TempDir(), "audit.jsonl")
	// The pattern must not appear in the agent's own argv: build it at run time.
	script := `x=jsblock
/bin/echo "${x}ed"; echo "shell-rc=$?"
perl -e 'exec {"/bin/echo"} "harmless", "js" . "blocked"; print STDERR "perl-exec: $!\n"; exit 9'; echo "perl-rc=$?"
/usr/bin/python3 -c 'import os
fd = os.open("/bin/echo", os.O_RDONLY)
try:
    os.execve(fd, ["echo", "jsblock" + "ed"], {})
except OSError as e:
    print("python-execveat:", e.errno)' ; echo "python-rc=$?"
/usr/bin/python3 -c 'import os
fd = os.open("/bin/echo", os.O_RDONLY)
os.execve(fd, ["echo", "viafd"], {})'
echo done`
	r := run(t, runOpts{dir: ws}, "--audit", trail, "--block-command", "jsblocked", "--", "/bin/sh", "-c", script)
	mustCode(t, r, 0)
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.TrimSpace(l) == "jsblocked" || strings.TrimSpace(l) == "harmless jsblocked" {
			t.Errorf("a blocked command ran:\n%s", r.stdout)
		}
	}
	for _, w := range []string{"shell-rc=126", "perl-rc=9", "python-execveat: 1", "viafd", "done"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("want %q in stdout:\n%s\nstderr:\n%s", w, r.stdout, r.stderr)
		}
	}
	if !strings.Contains(r.stderr, "Operation not permitted") {
		t.Errorf("the shell should say 'Operation not permitted':\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "perl-exec: Operation not permitted") {
		t.Errorf("perl's exec should fail with EPERM:\n%s", r.stderr)
	}
	_, execs := seccompTrail(t, trail)
	for _, argv := range [][]string{{"/bin/echo", "jsblocked"}, {"harmless", "jsblocked"}, {"echo", "jsblocked"}} {
		i := seccompFind(execs, argv...)
		if i < 0 {
			t.Errorf("no exec event for blocked %q:\n%s", argv, seccompDumpExecs(execs))
			continue
		}
		if execs[i].Decision != "deny" || !strings.Contains(execs[i].Rule, "jsblocked") {
			t.Errorf("%q: decision %q rule %q, want deny by the jsblocked pattern", argv, execs[i].Decision, execs[i].Rule)
		}
	}
	if i := seccompFind(execs, "echo", "viafd"); i < 0 {
		t.Errorf("execveat (fexecve) was not audited:\n%s", seccompDumpExecs(execs))
	} else if execs[i].Decision != "allow" {
		t.Errorf("execveat viafd: decision %q", execs[i].Decision)
	}

	// The agent command itself, refused: 126, nothing ran.
	d := run(t, runOpts{}, "--block-command", "^/bin/echo jsdirect", "--", "/bin/echo", "jsdirect")
	mustCode(t, d, 126)
	if strings.Contains(d.stdout, "jsdirect") {
		t.Errorf("blocked agent command ran: %q", d.stdout)
	}
	// --no-guard-rails drops the defaults, not the user's patterns.
	n := sh(t, runOpts{}, `x=jsblock; /bin/echo "${x}ed"; echo "rc=$?"`, "--no-guard-rails", "--block-command", "jsblocked")
	if !strings.Contains(n.stdout, "rc=126") {
		t.Errorf("--no-guard-rails disabled a --block-command pattern:\n%s%s", n.stdout, n.stderr)
	}
	// An invalid pattern is a setup error.
	b := run(t, runOpts{}, "--block-command", "(", "--", "/bin/true")
	mustCode(t, b, 125)
}

// The default guard rails refuse the obvious disasters; --no-guard-rails
// drops them (the control).
func TestSeccompGuardRails(t *testing.T) {
	ws := workspace(t)
	canary := filepath.Join(ws, "canary")
	os.WriteFile(canary, []byte("x"), 0o644)
	trail := filepath.Join(t.TempDir(), "audit.jsonl")
	// Without the guard rail: `rm -rf /` is refused by GNU rm itself (exit 1),
	// --no-preserve-root of a missing path succeeds (0), and rm -rf "$PWD"
	// deletes the canary.
	script := `rm -rf / 2>/dev/null; echo "root=$?"
rm -rf --no-preserve-root /nonexistent-js 2>/dev/null; echo "npr=$?"
rm -rf ~ 2>/dev/null; echo "home=$?"
rm -rf "$PWD" 2>/dev/null; echo "ws=$?"
rm -r -f -- "$PWD/" 2>/dev/null; echo "ws2=$?"`
	r := run(t, runOpts{dir: ws}, "--audit", trail, "--", "/bin/sh", "-c", script)
	for _, k := range []string{"root", "npr", "home", "ws", "ws2"} {
		if !strings.Contains(r.stdout, k+"=126\n") {
			t.Errorf("%s: not refused by the guard rail (want 126):\n%s", k, r.stdout)
		}
	}
	if _, err := os.Stat(canary); err != nil {
		t.Fatalf("rm -rf of the workspace went through: %v", err)
	}
	_, execs := seccompTrail(t, trail)
	i := seccompFind(execs, "rm", "-rf", "/")
	if i < 0 || execs[i].Decision != "deny" || execs[i].Rule == "" {
		t.Errorf("rm -rf / not recorded as denied with a rule:\n%s", seccompDumpExecs(execs))
	}
	// Control.
	c := sh(t, runOpts{}, `rm -rf --no-preserve-root /nonexistent-js; echo "npr=$?"`, "--no-guard-rails")
	if !strings.Contains(c.stdout, "npr=0\n") {
		t.Errorf("control: with --no-guard-rails, the harmless rm was still refused:\n%s%s", c.stdout, c.stderr)
	}
}

// --no-exec-audit: no exec events, the start event says so, and the deny
// filter stays.
func TestSeccompNoExecAudit(t *testing.T) {
	trail := filepath.Join(t.TempDir(), "audit.jsonl")
	r := run(t, runOpts{}, "--audit", trail, "--no-exec-audit", "--", "/bin/sh", "-c", `/bin/true jsnoaudit; unshare -U true 2>/dev/null; echo "unshare=$?"`)
	mustCode(t, r, 0)
	if strings.Contains(r.stdout, "unshare=0") {
		t.Errorf("--no-exec-audit dropped the deny filter: unshare -U works")
	}
	all, execs := seccompTrail(t, trail)
	if len(execs) != 0 {
		t.Errorf("exec events with --no-exec-audit:\n%s", seccompDumpExecs(execs))
	}
	if k, _ := all[0]["kernel"].(map[string]any); k == nil || k["seccomp"] != true || k["seccomp_notify"] != false {
		t.Errorf("start event kernel = %v, want seccomp true, seccomp_notify false", all[0]["kernel"])
	}
}
