//go:build linux

package tests

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestEndIfUnmaskedOwnSocketGoneAgain (review15d): with --end-if-unmasked
// the fall of the mask over the user's own host socket (root's, started by
// root) must end the run. socks15 let it go on when the path was empty
// again by the time the fall was said ("no one's (gone again)", as a
// daemon that binds, fails and unlinks leaves it, or another user with
// write access to the directory who put a file or a dangling link there
// and took it away),
// but maskwatch says a path once: the user's daemon then bound there
// again, unsaid, and the agent connected to it with the run going on.
// Seen failing on main's binary (0c3548a), as root and as jailtest: exit
// 0, the probe printed CONNECTED with the re-bound socket's token.
func TestEndIfUnmaskedOwnSocketGoneAgain(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Fatalf("perl is needed for the probe: %v", err)
	}
	ws := workspace(t)
	ro := hostDir(t)
	sock := filepath.Join(ro, "own.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	os.Chmod(sock, 0o777)
	probe := filepath.Join(ro, "probe.pl")
	if err := os.WriteFile(probe, []byte(unixProbePL), 0o644); err != nil {
		t.Fatal(err)
	}
	done := startUntilReady(t, ws, waitForGo+"\nperl "+probe+" "+sock+"; echo agent-went-on", "--end-if-unmasked")
	// The daemon's restart: its socket removed, the path leading nowhere
	// when the fall is said, then the socket bound anew. A dangling link
	// stands for the moment the path is empty (a file there and gone
	// again at once): stat(2) follows it to nothing, every time, where a
	// file removed at once races the supervisor's look.
	ln.Close()
	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ro, "nowhere"), sock); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}
	token := "REBOUND-OWN-SOCKET-" + strconv.Itoa(os.Getpid())
	greetOnUnix(t, sock, token)
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		fsWrite(t, ws, "go", "", 0o644)
		r = <-done
	}
	if strings.Contains(r.stdout, token) {
		t.Fatalf("ATTACK WORKED: the agent reached the user's re-bound socket with --end-if-unmasked: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if r.code != 137 || strings.Contains(r.stdout, "agent-went-on") {
		t.Fatalf("exit %d, want 137 (ended) before the agent went on\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "ending the run (--end-if-unmasked)") {
		t.Fatalf("the end is not said: %s", r.stderr)
	}
}
