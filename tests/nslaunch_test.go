//go:build linux

package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// nsLaunchEnv makes this test binary a launcher: in a mount namespace of its
// own (made by the parent with CLONE_NEWNS, plus CLONE_NEWUSER mapping the
// caller's own uid when not root) it replaces host files jail reads, as
// described by an nsLaunch, and then execs its arguments (jail). Nothing on
// the host changes.
const nsLaunchEnv = "JAIL_TEST_NS_LAUNCH"

// nsLaunch says what the launcher replaces.
type nsLaunch struct {
	// Hosts is bound over /etc/hosts: the host resolver of the jail started
	// that way answers from it, the only way to make a name "resolve on the
	// host" to a chosen address without touching the host.
	Hosts string `json:"hosts,omitempty"`
	// Syslog is a unixgram socket bound at /var/run/syslog (over a private
	// tmpfs on /run), so jail's --audit-syslog sink writes to the test.
	Syslog string `json:"syslog,omitempty"`
}

func init() {
	spec := os.Getenv(nsLaunchEnv)
	if spec == "" {
		return
	}
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "ns launcher: %v\n", err)
		os.Exit(121)
	}
	var l nsLaunch
	if err := json.Unmarshal([]byte(spec), &l); err != nil {
		fail(err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fail(fmt.Errorf("make / private: %w", err))
	}
	if l.Hosts != "" {
		if err := unix.Mount(l.Hosts, "/etc/hosts", "", unix.MS_BIND, ""); err != nil {
			fail(fmt.Errorf("bind %s over /etc/hosts: %w", l.Hosts, err))
		}
	}
	if l.Syslog != "" {
		run, _ := filepath.EvalSymlinks("/var/run")
		if err := unix.Mount("tmpfs", run, "tmpfs", 0, "mode=0755"); err != nil {
			fail(fmt.Errorf("tmpfs on %s: %w", run, err))
		}
		if err := os.WriteFile(filepath.Join(run, "syslog"), nil, 0o666); err != nil {
			fail(err)
		}
		if err := unix.Mount(l.Syslog, filepath.Join(run, "syslog"), "", unix.MS_BIND, ""); err != nil {
			fail(fmt.Errorf("bind %s over /var/run/syslog: %w", l.Syslog, err))
		}
	}
	// The capability that made the mounts possible must not reach jail.
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		fail(fmt.Errorf("clear ambient capabilities: %w", err))
	}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, nsLaunchEnv+"=") {
			env = append(env, e)
		}
	}
	fail(syscall.Exec(os.Args[1], os.Args[1:], env))
}

// runLaunched runs jail with args through the launcher.
func runLaunched(t *testing.T, l nsLaunch, o runOpts, args ...string) result {
	t.Helper()
	spec, _ := json.Marshal(l)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, append([]string{jail(t)}, args...)...)
	cmd.Dir = o.dir
	if cmd.Dir == "" {
		cmd.Dir = workspace(t)
	}
	cmd.Env = append(append(os.Environ(), o.env...), nsLaunchEnv+"="+string(spec))
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	if os.Geteuid() != 0 {
		uid, gid := os.Getuid(), os.Getgid()
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		cmd.SysProcAttr.GidMappingsEnableSetgroups = false
		cmd.SysProcAttr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
	}
	var so, se strings.Builder
	cmd.Stdout, cmd.Stderr = &so, &se
	cmd.Stdin = strings.NewReader(o.stdin)
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the ns launcher: %v", err)
	}
	go func() { done <- cmd.Wait() }()
	timeout := o.timeout
	if timeout == 0 {
		timeout = 90 * time.Second
	}
	select {
	case err = <-done:
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-done
		t.Fatalf("jail did not finish within %v\nstderr:\n%s", timeout, se.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code == 121 {
		t.Fatalf("the ns launcher failed: %s", se.String())
	}
	return result{code: code, stdout: so.String(), stderr: se.String()}
}

// runWithHosts runs jail with args where the host resolves names from
// hostsLines only (the file replaces /etc/hosts).
func runWithHosts(t *testing.T, hostsLines []string, o runOpts, args ...string) result {
	t.Helper()
	hosts := filepath.Join(auditDir(t), "hosts")
	content := "127.0.0.1 localhost\n" + strings.Join(hostsLines, "\n") + "\n"
	if err := os.WriteFile(hosts, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return runLaunched(t, nsLaunch{Hosts: hosts}, o, args...)
}
