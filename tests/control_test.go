//go:build linux

package tests

import (
	"os/exec"
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
	deadline := time.Now().Add(5 * time.Second)
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
