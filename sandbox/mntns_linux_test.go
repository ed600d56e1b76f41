package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// holding reports whether one of this process's descriptors is the
// namespace ns names ("mnt:[INODE]", as /proc/PID/ns/mnt reads).
func holding(t *testing.T, ns string) bool {
	t.Helper()
	fds, err := filepath.Glob("/proc/self/fd/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && l == ns {
			return true
		}
	}
	return false
}

// The sandbox's mount namespace outlives init's exit while the supervisor
// holds it (so that init's exit, which the run's end waits for, does not
// tear it down), and is let go of by awaitMounts, which RunSession calls
// before it returns: nothing of it is left then. Failed with an
// awaitMounts that did not drop it, and with a holdMounts that took
// nothing.
func TestMountsHeldPastInitThenDropped(t *testing.T) {
	cmd := exec.Command("sleep", "10")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("user and mount namespaces: %v", err)
	}
	pid := cmd.Process.Pid
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	ns, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	if self, _ := os.Readlink("/proc/self/ns/mnt"); self == ns {
		t.Fatalf("the child shares the test's mount namespace %s", ns)
	}
	r := &runner{}
	r.holdMounts(pid)
	if !r.mntHeld || !holding(t, ns) {
		t.Fatalf("holdMounts(%d) holds no descriptor of %s", pid, ns)
	}
	cmd.Process.Kill()
	cmd.Wait() // reaped: the namespace's last process is gone
	if !holding(t, ns) {
		t.Fatalf("%s not held past its last process's exit", ns)
	}
	r.dropMounts()
	r.awaitMounts()
	if holding(t, ns) {
		t.Errorf("%s still held after awaitMounts", ns)
	}
	r.awaitMounts() // a second call does nothing
}

// No namespace to hold: a pid that is gone (init's exit came first),
// and a degraded run (init shares the host's namespaces), hold nothing,
// and awaitMounts has nothing to wait for.
func TestMountsNotHeld(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	r := &runner{}
	r.holdMounts(cmd.Process.Pid) // reaped: no /proc entry
	if r.mntHeld {
		t.Errorf("holdMounts of a reaped pid holds a descriptor")
	}
	r.awaitMounts()
	self, _ := os.Readlink("/proc/self/ns/mnt")
	d := &runner{degraded: true}
	d.holdMounts(os.Getpid())
	if d.mntHeld || holding(t, self) {
		t.Errorf("a degraded run holds its init's (the host's) mount namespace")
	}
	d.awaitMounts()
}
