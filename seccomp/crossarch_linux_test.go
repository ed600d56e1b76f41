package seccomp

import (
	"bufio"
	"encoding/binary"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The arm64 filter is built from sysAARCH64 (zsyscalls.go, generated from
// go-seccomp-bpf's tables) and never runs on the amd64 machines that test
// jail. These tests check its numbers against the kernel's and run the
// programs built for arm64 in x/net/bpf's VM here.

// prefixSyscalls are the syscalls the hand-written prefixes name (asm.sys).
// TestArm64TableMatchesKernel builds every arm64 filter from a table cut
// down to the golden file's names, so a prefix naming a syscall missing
// here and there fails it.
var prefixSyscalls = []string{
	"personality", "setsockopt", "io_uring_setup", "io_uring_enter", "io_uring_register",
	"socket", "socketpair", "ioctl", "execve", "execveat",
}

// filterSyscalls returns every syscall name jail's filters use, sorted.
func filterSyscalls() []string {
	seen := map[string]bool{"clone": true, "clone3": true, "openat2": true}
	for _, r := range append(denyEPERM, denyPtrace) {
		for _, n := range r.names {
			seen[n] = true
		}
	}
	for _, s := range setidSyscalls {
		seen[s.name] = true
	}
	for _, n := range prefixSyscalls {
		seen[n] = true
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// arm64Golden reads testdata/arm64-syscalls.golden: "name nr" for each
// syscall the filters use, "name -" for one arm64 does not have. The
// numbers are the kernel's (include/uapi/asm-generic/unistd.h, which
// arm64 uses), taken from golang.org/x/sys/unix's zsysnum_linux_arm64.go
// (generated from the kernel's arm64 headers) and checked against
// linux-libc-dev's asm-generic/unistd.h for every name it has: a source
// independent of go-seccomp-bpf's table, which sysAARCH64 comes from.
func arm64Golden(t *testing.T) map[string]int {
	t.Helper()
	f, err := os.Open("testdata/arm64-syscalls.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, nr, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("golden: bad line %q", line)
		}
		if nr == "-" {
			g[name] = -1
			continue
		}
		n, err := strconv.Atoi(nr)
		if err != nil {
			t.Fatalf("golden: bad line %q", line)
		}
		g[name] = n
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestArm64TableMatchesKernel(t *testing.T) {
	g := arm64Golden(t)
	arm, err := archFor("arm64")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range filterSyscalls() {
		want, listed := g[name]
		if !listed {
			t.Errorf("%s: used by the filters but not in testdata/arm64-syscalls.golden (add its asm-generic number, or - if arm64 lacks it)", name)
			continue
		}
		got, ok := arm.nr(name)
		switch {
		case want < 0 && ok:
			t.Errorf("%s: arm64 has no such syscall, the table says %d", name, got)
		case want >= 0 && !ok:
			t.Errorf("%s: missing from the arm64 table (kernel: %d): its rule would be dropped there", name, want)
		case want >= 0 && got != want:
			t.Errorf("%s: arm64 table says %d, kernel %d", name, got, want)
		}
	}
	// Every number a prefix looks up (asm.sys) must be a golden one: build
	// each arm64 program from a table holding only the golden names.
	cut := *arm
	cut.table = nil
	for _, e := range arm.table {
		if n, ok := g[e.name]; ok && n >= 0 {
			cut.table = append(cut.table, e)
		}
	}
	for _, cfg := range []Config{{}, {AllowPtrace: true}, {NoInet: true, NoUnix: true}} {
		if _, err := buildDenyFor(&cut, cfg); err != nil {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
	if _, err := notifyProgram(&cut, retAllow); err != nil {
		t.Error(err)
	}
	// On the native arch the table and the build's unix.SYS_* agree (the
	// filter once used the latter).
	native, err := archNative()
	if err != nil {
		t.Skip(err)
	}
	for name, want := range map[string]int{
		"personality": unix.SYS_PERSONALITY, "setsockopt": unix.SYS_SETSOCKOPT,
		"io_uring_setup": unix.SYS_IO_URING_SETUP, "io_uring_enter": unix.SYS_IO_URING_ENTER,
		"io_uring_register": unix.SYS_IO_URING_REGISTER, "socket": unix.SYS_SOCKET,
		"socketpair": unix.SYS_SOCKETPAIR, "ioctl": unix.SYS_IOCTL, "execve": unix.SYS_EXECVE,
		"execveat": unix.SYS_EXECVEAT, "clone": unix.SYS_CLONE, "openat": unix.SYS_OPENAT,
	} {
		if got, ok := native.nr(name); !ok || got != want {
			t.Errorf("native %s: table %d (%v), unix.SYS_* %d", name, got, ok, want)
		}
	}
}

// TestArm64FilterEmulated runs the arm64 deny filter, merged with the exec
// audit as Install loads it, in x/net/bpf's VM on crafted seccomp_data,
// with the kernel's arm64 numbers (the golden file's, not the table's).
func TestArm64FilterEmulated(t *testing.T) {
	g := arm64Golden(t)
	arm, err := archFor("arm64")
	if err != nil {
		t.Fatal(err)
	}
	nr := func(name string) uint32 {
		n, ok := g[name]
		if !ok || n < 0 {
			t.Fatalf("no arm64 syscall %s in the golden file", name)
		}
		return uint32(n)
	}
	for _, allowPtrace := range []bool{false, true} {
		deny, err := buildDenyFor(arm, Config{AllowPtrace: allowPtrace})
		if err != nil {
			t.Fatal(err)
		}
		merged, ok, err := mergeNotifyFor(arm, deny)
		if err != nil || !ok {
			t.Fatalf("merge: ok %v, %v", ok, err)
		}
		for _, prog := range []struct {
			name string
			ins  []bpf.Instruction
		}{{"deny", deny}, {"merged", merged}} {
			run := func(what string, in []byte, want uint32) {
				t.Helper()
				if prog.name == "merged" && want == retAllow {
					if n := binary.BigEndian.Uint32(in); n == nr("execve") || n == nr("execveat") {
						want = retNotify
					}
				}
				if got := runVM(t, prog.ins, in); got != want {
					t.Errorf("%s (ptrace %v) %s: %#x, want %#x", prog.name, allowPtrace, what, got, want)
				}
			}
			const aa = auditArchAARCH64
			// Every rule's names, by the kernel's numbers.
			for _, r := range denyEPERM {
				for _, name := range r.names {
					if n := g[name]; n >= 0 {
						run(name, seccompInput(uint32(n), aa), retEPERM)
					}
				}
			}
			for _, name := range denyPtrace.names {
				want := retEPERM
				if allowPtrace {
					want = retAllow
				}
				run(name, seccompInput(nr(name), aa), want)
			}
			cases := []struct {
				what string
				in   []byte
				want uint32
			}{
				{"x86_64 arch", seccompInput(nr("getpid"), auditArchX86_64), retKill},
				{"arm (32-bit) arch", seccompInput(20, 0x40000028), retKill},
				{"getpid", seccompInput(nr("getpid"), aa), retAllow},
				{"execve", seccompInput(nr("execve"), aa), retAllow},
				{"execveat", seccompInput(nr("execveat"), aa), retAllow},
				{"read", seccompInput(nr("read"), aa, 0, 0, 0), retAllow},
				{"nr with x32 bit (no x32 on arm64)", seccompInput(nr("getpid")|x32Bit, aa), retENOSYS},
				{"unknown 468", seccompInput(468, aa), retENOSYS},
				{"clone3", seccompInput(nr("clone3"), aa), retENOSYS},
				{"openat2", seccompInput(nr("openat2"), aa), retENOSYS},
				{"clone plain", seccompInput(nr("clone"), aa, uint64(unix.SIGCHLD)), retAllow},
				{"clone newuser", seccompInput(nr("clone"), aa, unix.CLONE_NEWUSER|uint64(unix.SIGCHLD)), retEPERM},
				{"openat create 04755", seccompInput(nr("openat"), aa, 0, 0, unix.O_CREAT|unix.O_WRONLY, 04755), retEPERM},
				{"openat create 0755", seccompInput(nr("openat"), aa, 0, 0, unix.O_CREAT|unix.O_WRONLY, 0755), retAllow},
				{"openat read, mode garbage", seccompInput(nr("openat"), aa, 0, 0, unix.O_RDONLY, 04755), retAllow},
				{"fchmodat 02755", seccompInput(nr("fchmodat"), aa, 0, 0, 02755), retEPERM},
				{"fchmodat2 04755 high", seccompInput(nr("fchmodat2"), aa, 0, 0, hi|04755), retEPERM},
				{"fchmod 0644", seccompInput(nr("fchmod"), aa, 0, 0644), retAllow},
				{"mknodat 04644", seccompInput(nr("mknodat"), aa, 0, 0, unix.S_IFREG|04644), retEPERM},
				{"ioctl TIOCSTI high", seccompInput(nr("ioctl"), aa, 0, hi|unix.TIOCSTI), retEPERM},
				{"ioctl TCGETS", seccompInput(nr("ioctl"), aa, 0, unix.TCGETS), retAllow},
				{"socket vsock", seccompInput(nr("socket"), aa, unix.AF_VSOCK, unix.SOCK_STREAM), retEPERM},
				{"socket inet tcp", seccompInput(nr("socket"), aa, unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_TCP), retAllow},
				{"socket inet mptcp", seccompInput(nr("socket"), aa, unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP), retEPERM},
				{"socket netlink generic", seccompInput(nr("socket"), aa, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_GENERIC), retEPERM},
				{"socketpair tipc", seccompInput(nr("socketpair"), aa, unix.AF_TIPC, unix.SOCK_SEQPACKET), retEPERM},
				{"socketpair unix", seccompInput(nr("socketpair"), aa, unix.AF_UNIX, unix.SOCK_STREAM), retAllow},
				{"setsockopt SO_ATTACH_FILTER", seccompInput(nr("setsockopt"), aa, 3, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER), retEPERM},
				{"setsockopt SO_REUSEADDR", seccompInput(nr("setsockopt"), aa, 3, unix.SOL_SOCKET, unix.SO_REUSEADDR), retAllow},
				{"personality UNAME26", seccompInput(nr("personality"), aa, 0x0020000), retEPERM},
				{"personality query", seccompInput(nr("personality"), aa, 0xffffffff), retAllow},
			}
			for _, c := range cases {
				run(c.what, c.in, c.want)
			}
		}
	}
}
