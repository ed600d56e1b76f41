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

// jail ps lists a running sandbox and jail kill ends it, with every process
// inside; jail doctor reports the kernel features.
func TestControlPsKillDoctor(t *testing.T) {
	m := marker()
	cmd := exec.Command(jail(t), "--kill-grace", "30s", "--", "/bin/sh", "-c", "trap '' TERM; setsid sleep "+m+" & sleep "+m)
	cmd.Dir = workspace(t)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var id string
	deadline := time.Now().Add(30 * time.Second)
	for id == "" && time.Now().Before(deadline) {
		out, _ := exec.Command(jail(t), "ps").Output()
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "sleep "+m) {
				id = strings.Fields(l)[0]
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if id == "" {
		t.Fatal("jail ps never listed the running sandbox")
	}
	if out, err := exec.Command(jail(t), "kill", "no-such-id").CombinedOutput(); err == nil || !strings.Contains(string(out), "no running sandbox") {
		t.Fatalf("kill of an unknown id: %v %s", err, out)
	}
	start := time.Now()
	if out, err := exec.Command(jail(t), "kill", "--now", id).CombinedOutput(); err != nil {
		t.Fatalf("jail kill --now %s: %v %s", id, err, out)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a killed sandbox exited 0")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("jail kill --now did not end the sandbox (the agent ignores TERM; grace is 30s)")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("kill --now took %v", d)
	}
	waitNoProcs(t, "sleep\x00"+m, 3*time.Second)
	out, _ := exec.Command(jail(t), "ps").Output()
	if strings.Contains(string(out), id) {
		t.Fatalf("ps still lists %s:\n%s", id, out)
	}
	r := run(t, runOpts{}, "doctor")
	for _, w := range []string{"user namespaces", "landlock", "seccomp", "limits", "egress"} {
		if !strings.Contains(r.stdout, w) {
			t.Fatalf("doctor lacks %q:\n%s", w, r.stdout)
		}
	}
}

// controlID waits until `jail ps` lists a sandbox whose command contains
// marker and returns its id.
func controlID(t *testing.T, marker string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		out, _ := exec.Command(jail(t), "ps").Output()
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, marker) {
				return strings.Fields(l)[0]
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("jail ps never listed the running sandbox")
	return ""
}

// `jail kill ID` without --now is graceful (README: "SIGTERM, then after
// --kill-grace everything is killed"): a command that handles SIGTERM gets
// it and ends on its own, with its own exit code; one that ignores it, and
// its daemons, are killed once the grace has passed, not before.
func TestControlGracefulKill(t *testing.T) {
	t.Run("handles TERM", func(t *testing.T) {
		m := marker()
		ws := workspace(t)
		cmd := exec.Command(jail(t), "--kill-grace", "30s", "--", "/bin/sh", "-c", "trap 'echo term > got; exit 3' TERM; echo ready > ready; while :; do sleep 0.05; done # "+m)
		cmd.Dir = ws
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		id := controlID(t, m)
		controlReady(t, ws) // the trap is set: a TERM before it proves nothing
		if out, err := exec.Command(jail(t), "kill", id).CombinedOutput(); err != nil {
			t.Fatalf("jail kill %s: %v %s", id, err, out)
		}
		code := waitCode(t, cmd, 10*time.Second)
		if code != 3 {
			t.Errorf("exit %d, want the command's own 3 after its TERM handler", code)
		}
		if b, _ := os.ReadFile(filepath.Join(ws, "got")); string(b) != "term\n" {
			t.Errorf("the command's TERM handler did not run: %q", b)
		}
	})
	t.Run("ignores TERM", func(t *testing.T) {
		m, d := marker(), marker()
		ws := workspace(t)
		cmd := exec.Command(jail(t), "--kill-grace", "2s", "--", "/bin/sh", "-c", "trap '' TERM; setsid sh -c \"trap '' TERM HUP; exec sleep "+d+"\" & echo ready > ready; while :; do sleep 0.05; done # "+m)
		cmd.Dir = ws
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		id := controlID(t, m)
		controlReady(t, ws)
		start := time.Now()
		if out, err := exec.Command(jail(t), "kill", id).CombinedOutput(); err != nil {
			t.Fatalf("jail kill %s: %v %s", id, err, out)
		}
		code := waitCode(t, cmd, 15*time.Second)
		took := time.Since(start)
		if took < 1800*time.Millisecond {
			t.Errorf("jail kill (graceful) ended the sandbox after %v, before the 2s grace", took)
		}
		if took > 8*time.Second {
			t.Errorf("jail kill (graceful) took %v; want about the 2s grace", took)
		}
		if code == 0 {
			t.Errorf("a killed sandbox exited 0")
		}
		waitNoProcs(t, "sleep\x00"+d, 3*time.Second)
	})
}

// controlReady waits for the command's "ready" file in ws.
func controlReady(t *testing.T, ws string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, _ := os.ReadFile(filepath.Join(ws, "ready")); string(b) == "ready\n" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never became ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitCode waits for cmd and returns its exit code (128+N for a signal).
func waitCode(t *testing.T, cmd *exec.Cmd, within time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			return 0
		}
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		t.Fatalf("wait: %v", err)
	case <-time.After(within):
		cmd.Process.Kill()
		t.Fatalf("jail did not exit within %v", within)
	}
	return -1
}
