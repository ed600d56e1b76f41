//go:build linux

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// This file: jail's runtime directory, $XDG_RUNTIME_DIR/jail (issue 13):
// the running sandboxes' registry, control sockets and logs, private to
// the user and never reachable from inside a sandbox.

// runtimeProbe lists the runtime directory d and connects to the control
// socket sock from inside, printing LISTED or CONNECTED on success.
func runtimeProbe(d, sock string) string {
	return `ls -A "` + d + `" 2>/dev/null | grep -q . && echo LISTED
/usr/bin/python3 -c '
import socket,sys
s=socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); print("CONNECTED")
except Exception as e:
    print("refused:", e)' "` + sock + `"
echo PROBE-DONE`
}

// The registry is in $XDG_RUNTIME_DIR/jail (0700, sockets 0600), and a
// sandbox cannot see or reach it even where a visible, writable path
// (here the workspace) contains it and the modes are opened wide: only
// the mask stops it.
func TestRuntimeDirUsedAndHidden(t *testing.T) {
	ws := workspace(t)
	rt := filepath.Join(ws, "rt")
	os.Mkdir(rt, 0o700)
	env := []string{"XDG_RUNTIME_DIR=" + rt}
	name := "r" + strings.ReplaceAll(marker(), ".", "")
	r := run(t, runOpts{dir: ws, env: env, timeout: 60 * time.Second}, "run", "-d", "--name", name)
	if r.code != 0 {
		t.Fatalf("run -d: %d %s", r.code, r.stderr)
	}
	t.Cleanup(func() {
		os.Chmod(rt, 0o700)
		os.Chmod(filepath.Join(rt, "jail"), 0o700)
		cmd := exec.Command(jail(t), "kill", "--now", name)
		cmd.Env = append(os.Environ(), env...)
		cmd.Run()
	})
	reg := filepath.Join(rt, "jail")
	socks, _ := filepath.Glob(filepath.Join(reg, "*.sock"))
	if len(socks) != 1 {
		t.Fatalf("want one control socket in %s, got %v", reg, socks)
	}
	sock := socks[0]
	for p, want := range map[string]os.FileMode{reg: 0o700, sock: 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v, want mode %04o", p, err, want)
		}
	}
	// From inside the sandbox itself (as an ordinary user the modes do not
	// stop a process of the same uid: the mask must).
	r = run(t, runOpts{dir: ws, env: env}, "exec", name, "--", "/bin/sh", "-c", runtimeProbe(reg, sock))
	if !strings.Contains(r.stdout, "PROBE-DONE") || strings.Contains(r.stdout, "LISTED") || strings.Contains(r.stdout, "CONNECTED") {
		t.Fatalf("jail exec reached the runtime directory:\n%s%s", r.stdout, r.stderr)
	}
	// From another sandbox, with the modes opened wide (as root the
	// sandbox runs as nobody, whom 0700 alone would stop).
	for _, p := range []string{rt, reg, sock} {
		os.Chmod(p, 0o777)
	}
	r = run(t, runOpts{dir: ws, env: env}, "--", "/bin/sh", "-c", runtimeProbe(reg, sock))
	if !strings.Contains(r.stdout, "PROBE-DONE") || strings.Contains(r.stdout, "LISTED") || strings.Contains(r.stdout, "CONNECTED") {
		t.Fatalf("a sandbox reached the runtime directory:\n%s%s", r.stdout, r.stderr)
	}
	// A registry open to others is not used: jail refuses it (fail closed).
	os.Chmod(rt, 0o700)
	r = run(t, runOpts{dir: ws, env: env}, "ps")
	if r.code == 0 || !strings.Contains(r.stderr, "open to others") {
		t.Fatalf("jail ps read a registry open to others: %d %s%s", r.code, r.stdout, r.stderr)
	}
}

// Without a private XDG_RUNTIME_DIR (unset, as for root in CI; or open to
// others) the registry is the state directory's run/.
func TestRuntimeDirFallback(t *testing.T) {
	ws := workspace(t)
	open := filepath.Join(ws, "open")
	os.Mkdir(open, 0o755)
	state := filepath.Join(ws, "state")
	for _, rt := range []string{"", open} {
		env := []string{"XDG_RUNTIME_DIR=" + rt, "XDG_STATE_HOME=" + state}
		name := "f" + strings.ReplaceAll(marker(), ".", "")
		r := run(t, runOpts{dir: ws, env: env}, "run", "-d", "--name", name)
		if r.code != 0 {
			t.Fatalf("run -d with XDG_RUNTIME_DIR=%q: %d %s", rt, r.code, r.stderr)
		}
		socks, _ := filepath.Glob(filepath.Join(state, "jail", "run", "*.sock"))
		r = run(t, runOpts{dir: ws, env: env}, "kill", "--now", name)
		if len(socks) != 1 || r.code != 0 {
			t.Fatalf("XDG_RUNTIME_DIR=%q: sockets in the state directory %v; kill: %d %s", rt, socks, r.code, r.stderr)
		}
		// (open/jail may exist: the plan masks it, visible in the workspace.)
		if socks, _ := filepath.Glob(filepath.Join(open, "jail", "*")); len(socks) != 0 {
			t.Fatalf("jail used the runtime directory %s, open to others: %v", open, socks)
		}
	}
}
