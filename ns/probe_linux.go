package ns

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ProbeArg0 is argv[0] of the re-executed binary when it is to try, and
// only try, what a sandbox start does in new namespaces (see Probe).
const ProbeArg0 = "jail:probe"

// IsProbe tells main() that this process is a namespace probe.
func IsProbe() bool { return len(os.Args) > 0 && os.Args[0] == ProbeArg0 }

// ProbeError says which step of a sandbox start the kernel refused.
type ProbeError struct {
	Step  string // "clone", "mount", "proc", "hostname"
	Errno syscall.Errno
}

func (e *ProbeError) Error() string { return e.Step + ": " + e.Errno.Error() }
func (e *ProbeError) Unwrap() error { return e.Errno }

// Probe tries what a sandbox start does, without starting one: a clone with
// the very flags, id maps and credentials init gets (cloneAttr), then, in
// the child, the first mounts init makes (a private mount tree, a tmpfs, a
// fresh /proc for the new pid namespace) and sethostname. So it fails where
// a run fails: a seccomp filter refusing CLONE_NEWUSER (Docker's default,
// another jail), AppArmor's restriction that lets the clone through but
// denies every capability inside (Ubuntu 24.04), a container's masked /proc.
// Everything happens in the child's own namespaces and dies with it.
func Probe(rootful, netHost bool) error {
	attr := cloneAttr(rootful, netHost)
	var out bytes.Buffer
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{ProbeArg0}, Env: []string{}, Stdout: &out, SysProcAttr: attr}
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("namespace probe: exit %d: %s", ee.ExitCode(), strings.TrimSpace(out.String()))
		}
		var errno syscall.Errno
		if errors.As(err, &errno) {
			return &ProbeError{Step: "clone", Errno: errno}
		}
		return fmt.Errorf("namespace probe: %w", err)
	}
	res := strings.TrimSpace(out.String())
	if res == "ok" {
		return nil
	}
	step, num, ok := strings.Cut(res, " ")
	n, err := strconv.Atoi(num)
	if !ok || err != nil {
		return fmt.Errorf("namespace probe: unexpected answer %q", res)
	}
	return &ProbeError{Step: step, Errno: syscall.Errno(n)}
}

// ProbeMain is the probe's child: it runs the steps and prints "ok" or
// "STEP ERRNO". It never returns.
func ProbeMain() {
	step, err := probeSteps()
	if err != nil {
		var errno syscall.Errno
		if !errors.As(err, &errno) {
			errno = unix.EIO
		}
		fmt.Printf("%s %d\n", step, int(errno))
		os.Exit(0)
	}
	fmt.Println("ok")
	os.Exit(0)
}

func probeSteps() (string, error) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return "mount", err
	}
	// A tmpfs of our own (the probe's private mount namespace) to hold the
	// /proc mount point: nothing is created on the host.
	if err := unix.Mount("jail-probe", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=64k"); err != nil {
		return "mount", err
	}
	if err := os.Mkdir("/tmp/proc", 0o755); err != nil {
		return "mount", err
	}
	if err := unix.Mount("proc", "/tmp/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return "proc", err
	}
	if err := unix.Sethostname([]byte("jail-probe")); err != nil {
		return "hostname", err
	}
	return "", nil
}
