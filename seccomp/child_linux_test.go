package seccomp

// The test binary re-executes itself: TestMain runs childMain instead of
// the tests when envChild is set. Irreversible steps (no_new_privs,
// seccomp) only ever happen in such a child.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

const (
	envChild   = "JAIL_SECCOMP_TEST_CHILD" // child mode
	envProbe   = "JAIL_SECCOMP_TEST_PROBE"
	envFilter  = "JAIL_SECCOMP_TEST_FILTER" // "1": Install before probing
	envPtrace  = "JAIL_SECCOMP_TEST_PTRACE" // "1": Config.AllowPtrace
	envN       = "JAIL_SECCOMP_TEST_N"
	envWork    = "JAIL_SECCOMP_TEST_WORKSPACE"
	envExtra   = "JAIL_SECCOMP_TEST_EXTRA" // policy file for Config.Extra
	envReplace = "JAIL_SECCOMP_TEST_REPLACE"
	envUserns  = "JAIL_SECCOMP_TEST_USERNS" // notify child: new user+pid ns, non-dumpable
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envChild); mode != "" {
		os.Exit(childMain(mode))
	}
	os.Exit(m.Run())
}

// inCI: security tests must fail, not skip, when CI=true.
func inCI() bool { return os.Getenv("CI") == "true" }

func skipOrFail(t *testing.T, format string, a ...any) {
	t.Helper()
	if inCI() {
		t.Fatalf("CI=true, cannot skip: "+format, a...)
	}
	t.Skipf(format, a...)
}

func childMain(mode string) int {
	switch mode {
	case "probe":
		return probeChild()
	case "notify":
		return notifyChild()
	case "bench-getppid":
		return benchGetppidChild()
	case "bench-exec":
		return benchExecChild()
	}
	fmt.Fprintln(os.Stderr, "unknown child mode", mode)
	return 2
}

func childConfig() (Config, error) {
	cfg := Config{AllowPtrace: os.Getenv(envPtrace) == "1", Replace: os.Getenv(envReplace) == "1"}
	if f := os.Getenv(envExtra); f != "" {
		p, err := LoadPolicyFile(f)
		if err != nil {
			return cfg, err
		}
		cfg.Extra = p
	}
	return cfg, nil
}

func probeChild() int {
	name := os.Getenv(envProbe)
	p, ok := probes[name]
	if !ok {
		fmt.Fprintln(os.Stderr, "unknown probe", name)
		return 2
	}
	if os.Getenv(envFilter) == "1" {
		cfg, err := childConfig()
		if err == nil {
			_, _, err = Install(cfg)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "install:", err)
			return 3
		}
	}
	fmt.Printf("RESULT %s\n", resultOf(p()))
	return 0
}

// resultOf names an outcome: "ok" or the errno's name ("EPERM").
func resultOf(err error) string {
	if err == nil {
		return "ok"
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		if n := unix.ErrnoName(en); n != "" {
			return n
		}
		return "errno" + strconv.Itoa(int(en))
	}
	return "error: " + strings.ReplaceAll(err.Error(), "\n", " ")
}

// probeResult is what one child run of a probe gave.
type probeResult struct {
	Result string // "ok", "EPERM", ... or "" when it died
	Signal syscall.Signal
	Stderr string
}

// runProbe runs probe name in a child in new user, mount and net
// namespaces where it is root (uid 0 mapped to ours) with every
// capability: the position of jail's init before it drops them. So a
// syscall that fails only under the filter proves the rule.
func runProbe(t *testing.T, name string, filter bool, extraEnv ...string) probeResult {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	f := "0"
	if filter {
		f = "1"
	}
	cmd.Env = append(os.Environ(), envChild+"=probe", envProbe+"="+name, envFilter+"="+f)
	cmd.Env = append(cmd.Env, extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := probeResult{Stderr: errb.String()}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.Signal = ws.Signal()
		return r
	}
	if err != nil {
		t.Fatalf("probe %s (filter=%v): %v; stderr: %s", name, filter, err, errb.String())
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if s, ok := strings.CutPrefix(l, "RESULT "); ok {
			r.Result = s
		}
	}
	return r
}

func (r probeResult) String() string {
	if r.Signal != 0 {
		return "killed by " + unix.SignalName(r.Signal)
	}
	return r.Result
}

// jsonLine prints v as one JSON line on stdout (child -> parent reports).
func jsonLine(v any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}
