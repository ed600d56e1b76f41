//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// jail gc removes a dead supervisor's control socket (jail kill's way in)
// with its record, and leaves a live one's alone.
func TestKillGCControlSocket(t *testing.T) {
	state := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + state, "XDG_RUNTIME_DIR="} // the registry in the state directory (the fallback)
	socks := func() []string { m, _ := filepath.Glob(filepath.Join(state, "jail", "run", "*.sock")); return m }
	dead := gcStart(t, workspace(t), env, jail(t), "--", "sleep", "60")
	gcWait(t, "the first control socket", func() bool { return len(socks()) == 1 })
	deadSock := socks()[0]
	live := gcStart(t, workspace(t), env, jail(t), "--", "sleep", "60")
	gcWait(t, "the second control socket", func() bool { return len(socks()) == 2 })
	dead.Process.Signal(syscall.SIGKILL)
	dead.Wait()
	if _, err := os.Stat(deadSock); err != nil {
		t.Fatalf("the SIGKILLed supervisor's socket is already gone: nothing to test")
	}
	mustCode(t, run(t, runOpts{env: env}, "gc"), 0)
	if _, err := os.Stat(deadSock); err == nil {
		t.Errorf("jail gc left the dead supervisor's control socket %s", deadSock)
	}
	if n := len(socks()); n != 1 {
		t.Errorf("%d control sockets left, want the live supervisor's", n)
	}
	live.Process.Signal(syscall.SIGTERM)
}
