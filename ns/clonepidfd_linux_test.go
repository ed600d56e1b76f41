package ns

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// clonePidfdEnv makes this test binary, re-executed by
// TestClonePidfdProbeUnderSeccomp, install the named outer filter and say
// what the probe answers under it.
const clonePidfdEnv = "JAIL_TEST_CLONEPIDFD_FILTER"

// TestClonePidfdProbeUnderSeccomp: the probe that decides whether a jail
// exec can be matched without kcmp (clonePidfd) must answer for the clone
// init makes, whatever an outer seccomp filter (jail inside jail, a
// container's) refuses besides. It probed pidfd_open: a filter refusing
// only pidfd_open made it say no, and a no-kcmp jail exec was refused
// though CLONE_PIDFD worked; a filter refusing only CLONE_PIDFD made it
// say yes. Each case re-executes this binary under the filter.
func TestClonePidfdProbeUnderSeccomp(t *testing.T) {
	if v := os.Getenv(clonePidfdEnv); v != "" {
		clonePidfdChild(t, v)
		return
	}
	for _, tc := range []struct {
		filter string
		want   string
	}{
		{"none", "true"},
		{"pidfd_open", "true"},
		{"clone_pidfd", "false"},
	} {
		t.Run(tc.filter, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestClonePidfdProbeUnderSeccomp$", "-test.count=1")
			cmd.Env = append(os.Environ(), clonePidfdEnv+"="+tc.filter)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			got := ""
			for _, l := range strings.Split(string(out), "\n") {
				if v, ok := strings.CutPrefix(l, "clonePidfd="); ok {
					got = v
				}
			}
			if got != tc.want {
				t.Fatalf("under a filter refusing %s the probe says %q, want %s\n%s", tc.filter, got, tc.want, out)
			}
		})
	}
}

// clonePidfdChild installs the filter (on every thread: TSYNC) and prints
// the probe's answer.
func clonePidfdChild(t *testing.T, filter string) {
	const (
		ldAbsW = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jset   = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret    = unix.BPF_RET | unix.BPF_K
		eperm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		allow  = unix.SECCOMP_RET_ALLOW
	)
	var prog []unix.SockFilter
	switch filter {
	case "none":
	case "pidfd_open":
		prog = []unix.SockFilter{
			{Code: ldAbsW, K: 0}, // seccomp_data.nr
			{Code: jeq, Jt: 0, Jf: 1, K: unix.SYS_PIDFD_OPEN},
			{Code: ret, K: eperm},
			{Code: ret, K: allow},
		}
	case "clone_pidfd":
		// clone with CLONE_PIDFD refused, clone3 (whose flags BPF cannot
		// read) said absent, as container runtimes do.
		prog = []unix.SockFilter{
			{Code: ldAbsW, K: 0},
			{Code: jeq, Jt: 0, Jf: 1, K: unix.SYS_CLONE3},
			{Code: ret, K: enosys},
			{Code: jeq, Jt: 0, Jf: 3, K: unix.SYS_CLONE},
			{Code: ldAbsW, K: 16}, // args[0], low half (little endian)
			{Code: jset, Jt: 0, Jf: 1, K: unix.CLONE_PIDFD},
			{Code: ret, K: eperm},
			{Code: ret, K: allow},
		}
	default:
		t.Fatalf("unknown filter %q", filter)
	}
	if prog != nil {
		fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			t.Fatalf("no_new_privs: %v", err)
		}
		if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); e != 0 {
			t.Fatalf("seccomp: %v", e)
		}
	}
	os.Stdout.WriteString("clonePidfd=" + map[bool]string{true: "true", false: "false"}[clonePidfd()] + "\n")
}
