package sandbox

import (
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// The peer of TestControlPeerPidReused: this test binary started again with
// JAIL_TEST_PEER_CONNECT set connects to that socket and lives until the
// test closes the connection or kills it.
func init() {
	path := os.Getenv("JAIL_TEST_PEER_CONNECT")
	if path == "" {
		return
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		os.Exit(2)
	}
	io.Copy(io.Discard, c)
	os.Exit(0)
}

// Adversarial: the control socket's peer check reads /proc/PID/ns/user
// for the pid SO_PEERCRED gave at connect time. An agent that connects
// and exits at once leaves a number that a host process may hold by the
// time it is read (the agent can cycle host pids by forking): that
// process's user namespace, the host's, would then let the agent's
// request through. Here the peer is killed and reaped, and the number
// read is the test's own (a live process in the supervisor's namespace),
// between the pidfd and the read. Seen failing with the pid-only check
// (main's sameUserNS(pid)): the request was let through.
func TestControlPeerPidReused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer := exec.Command(os.Args[0])
	peer.Env = append(os.Environ(), "JAIL_TEST_PEER_CONNECT="+path)
	if err := peer.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := false
	defer func() {
		if !reaped {
			peer.Process.Kill()
			peer.Wait()
		}
	}()
	uc, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	cred, err := peerCred(uc)
	if err != nil {
		t.Fatal(err)
	}
	if int(cred.Pid) != peer.Process.Pid {
		t.Fatalf("peer pid %d, want %d", cred.Pid, peer.Process.Pid)
	}
	if fd, err := peerPidfd(uc); errors.Is(err, unix.ENOPROTOOPT) {
		t.Skip("no SO_PEERPIDFD before Linux 6.5: the pid alone is checked there")
	} else if err == nil {
		unix.Close(fd)
	}
	// A live peer in this user namespace passes.
	if !peerInOwnUserNS(uc, int(cred.Pid)) {
		t.Fatal("a live peer in the supervisor's user namespace refused")
	}
	testPeerPidReused = func(int) int {
		peer.Process.Kill()
		peer.Wait()
		reaped = true
		return os.Getpid()
	}
	defer func() { testPeerPidReused = nil }()
	if peerInOwnUserNS(uc, int(cred.Pid)) {
		t.Error("ATTACK WORKED: a peer gone and its pid held by a host process meanwhile passed the user namespace check")
	}
}
