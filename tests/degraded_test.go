//go:build linux

package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Degraded modes (README: an older Landlock ABI is "reported on stderr and in
// the audit trail, never silently dropped"; docs/audit-schema.md: the start
// event's notes hold "one sentence per degraded mode"). Each mode is forced
// here the way a weaker machine would force it, and each must be said on
// stderr and in the trail, the trail also under --quiet.

// notifyShimEnv makes the test binary (TestMain) install a seccomp filter
// with a user-notification listener on itself and exec the jail command line
// in its arguments: a second listener in the same filter chain is refused
// with EBUSY, exactly as under WSL2 or inside another sandbox that audits
// execs, so jail runs without exec auditing.
const notifyShimEnv = "JAIL_TEST_NOTIFY_SHIM"

func notifyShim() {
	runtime.LockOSThread() // the filter is per thread; exec keeps this one
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "shim: no_new_privs: %v\n", err)
		os.Exit(120)
	}
	// acct(2) (nobody calls it) goes to the listener; all else is allowed.
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: unix.SYS_ACCT},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_USER_NOTIF},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		fmt.Fprintf(os.Stderr, "shim: seccomp listener: %v\n", errno)
		os.Exit(120)
	}
	// The listener stays open across exec (jail keeps it, close-on-exec,
	// in the supervisor): closing it would detach it and allow a new one.
	if _, err := unix.FcntlInt(fd, unix.F_SETFD, 0); err != nil {
		os.Exit(120)
	}
	args := os.Args[1:]
	env := []string{}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, notifyShimEnv+"=") {
			env = append(env, e)
		}
	}
	err := syscall.Exec(args[0], args, env)
	fmt.Fprintf(os.Stderr, "shim: exec %s: %v\n", args[0], err)
	os.Exit(120)
}

// degradedRun runs jail (through the notify shim when shim is set) with a
// trail, and returns the result and the start event's notes.
func degradedRun(t *testing.T, shim bool, flags ...string) (result, []string, map[string]any) {
	t.Helper()
	trail := filepath.Join(auditDir(t), "trail.jsonl")
	args := append([]string{"--audit", trail}, flags...)
	var r result
	if shim {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		r = runWith(t, runOpts{env: []string{notifyShimEnv + "=1"}}, exe, append([]string{jail(t)}, args...)...)
	} else {
		r = run(t, runOpts{}, args...)
	}
	evs := auditLoad(t, trail)
	return r, evs[0].strs("notes"), evs[0].obj("kernel")
}

func hasNote(notes []string, parts ...string) bool {
	for _, n := range notes {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(n, p)
		}
		if ok {
			return true
		}
	}
	return false
}

// Without seccomp user notification jail runs without exec auditing, and
// says so on stderr and in the start event; --quiet silences stderr only.
// Control: the same run without the shim has exec auditing and no such note.
func TestDegradedExecAudit(t *testing.T) {
	r, notes, k := degradedRun(t, true, "--", "/bin/true")
	mustCode(t, r, 0)
	if k["seccomp_notify"] != false {
		t.Fatalf("the shim did not take exec auditing away (kernel %v): the test proves nothing\n%s", k, r.stderr)
	}
	if !strings.Contains(r.stderr, "exec audit and guard rail off") || !strings.Contains(r.stderr, "EBUSY") {
		t.Errorf("exec audit off is not said on stderr: %q", r.stderr)
	}
	if !hasNote(notes, "exec audit and guard rail off", "EBUSY") {
		t.Errorf("exec auditing off is not in the start event's notes: %q", notes)
	}
	r, notes, _ = degradedRun(t, true, "--quiet", "--", "/bin/true")
	mustCode(t, r, 0)
	if strings.Contains(r.stderr, "exec audit and guard rail off") {
		t.Errorf("--quiet still prints the note: %q", r.stderr)
	}
	if !hasNote(notes, "exec audit and guard rail off") {
		t.Errorf("--quiet dropped exec auditing off from the trail: %q", notes)
	}
	// Control.
	r, notes, k = degradedRun(t, false, "--", "/bin/true")
	mustCode(t, r, 0)
	if k["seccomp_notify"] != true || hasNote(notes, "exec audit and guard rail off") || strings.Contains(r.stderr, "exec audit and guard rail off") {
		t.Errorf("control: a full run reports exec auditing off: kernel %v notes %q stderr %q", k, notes, r.stderr)
	}
}

// An older Landlock ABI (simulated): each missing feature is named on stderr
// and in the start event's notes, also under --quiet. Control: the kernel's
// own ABI adds no such note.
func TestDegradedLandlockNotes(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		flags := []string{"--x-landlock-max-abi", "3"}
		if quiet {
			flags = append(flags, "--quiet")
		}
		r, notes, k := degradedRun(t, false, append(flags, "--", "/bin/true")...)
		mustCode(t, r, 0)
		if fmt.Sprint(k["landlock_abi"]) != "3" {
			t.Errorf("start.kernel.landlock_abi %v, want 3", k["landlock_abi"])
		}
		if !hasNote(notes, "landlock ABI 3: not enforced", "scope") {
			t.Errorf("quiet=%v: the missing Landlock features are not in the start event's notes: %q", quiet, notes)
		}
		if said := strings.Contains(r.stderr, "landlock ABI 3: not enforced"); said == quiet {
			t.Errorf("quiet=%v: stderr %q", quiet, r.stderr)
		}
	}
	r, notes, _ := degradedRun(t, false, "--", "/bin/true")
	mustCode(t, r, 0)
	if hasNote(notes, "landlock") {
		t.Errorf("control: the kernel's own ABI reports missing features: %q", notes)
	}
}

// The proxy-aware fallback (forced): said on stderr and in the start event,
// whose network_mode is "proxy"; the trail keeps it under --quiet.
func TestDegradedProxyAwareNotes(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		flags := []string{"--x-force-proxy-aware", "--allow-domain", "example.com"}
		if quiet {
			flags = append(flags, "--quiet")
		}
		r, notes, k := degradedRun(t, false, append(flags, "--", "/bin/true")...)
		mustCode(t, r, 0)
		if k["network_mode"] != "proxy" {
			t.Errorf("start.kernel.network_mode %v, want proxy", k["network_mode"])
		}
		if !hasNote(notes, "proxy-aware only") {
			t.Errorf("quiet=%v: the proxy-aware fallback is not in the start event's notes: %q", quiet, notes)
		}
		if said := strings.Contains(r.stderr, "proxy-aware only"); said == quiet {
			t.Errorf("quiet=%v: stderr %q", quiet, r.stderr)
		}
	}
	r, notes, k := degradedRun(t, false, "--allow-domain", "example.com", "--", "/bin/true")
	mustCode(t, r, 0)
	if k["network_mode"] != "allow" || hasNote(notes, "proxy-aware") {
		t.Errorf("control: the transparent path reports the fallback: mode %v notes %q", k["network_mode"], notes)
	}
}
