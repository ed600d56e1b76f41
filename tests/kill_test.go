//go:build linux

package tests

// Issue 12: killing. On a relayed terminal Ctrl-C belongs to the agent
// (agents quit on a double Ctrl-C); the kill key, Enter ~ ., kills the
// sandbox at once. `jail kill --now ID` exits 0 and the trail names the
// kill and who asked.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/procstat"
)

// trailEvents reads every event of a trail as a map.
func trailEvents(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, ev)
	}
	return out
}

func eventsOf(evs []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		if e["type"] == typ {
			out = append(out, e)
		}
	}
	return out
}

func TestKillKey(t *testing.T) {
	ws := workspace(t)
	trail := filepath.Join(t.TempDir(), "trail.jsonl")
	cmd := exec.Command(jail(t), "--audit", trail, "--", "sh", "-c", `echo rea""dy; sleep 100`)
	cmd.Dir, cmd.Env = ws, screenEnv()
	s := startOnPty(t, cmd)
	s.scr.waitFor(t, "ready", 30*time.Second)
	// A pasted "~." after a line end is text, not the key.
	s.send("\x1b[200~x\r~.\r\x1b[201~")
	select {
	case err := <-s.done:
		t.Fatalf("a bracketed paste holding \\r~. killed the sandbox: %v", err)
	case <-time.After(700 * time.Millisecond):
	}
	// Enter, ~, . typed (here in one read, and the . alone later).
	s.send("\r~")
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	m := s.send(".")
	err := s.wait(t, 10*time.Second)
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 137 {
		t.Fatalf("exit %v, want 137; terminal:\n%q", err, s.scr.String())
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the kill key took %v", d)
	}
	s.waitSince(t, m, "killed the sandbox: kill key", 5*time.Second)
	kills := eventsOf(trailEvents(t, trail), "kill")
	if len(kills) != 1 || kills[0]["by"] != "user" || !strings.Contains(fmt.Sprint(kills[0]["reason"]), "kill key") {
		t.Fatalf("trail kill events: %v", kills)
	}
}

// startListed starts jail with args and returns its id from jail ps.
func startListed(t *testing.T, m string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(jail(t), args...)
	cmd.Dir = workspace(t)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		out, _ := exec.Command(jail(t), "ps").Output()
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, m) {
				return cmd, strings.Fields(l)[0]
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("jail ps never listed the sandbox")
	return nil, ""
}

func TestKillNowStatusAndTrail(t *testing.T) {
	m := marker()
	trail := filepath.Join(t.TempDir(), "trail.jsonl")
	// sleep dies of the first SIGINT at once: the old two-signal kill then
	// found no process for its second signal.
	cmd, id := startListed(t, "sleep "+m, "--audit", trail, "--", "sleep", m)
	time.Sleep(300 * time.Millisecond) // the agent is running, not starting
	out, err := exec.Command(jail(t), "kill", "--now", id).CombinedOutput()
	if err != nil {
		t.Fatalf("jail kill --now %s: %v\n%s", id, err, out)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 137 {
			t.Fatalf("the killed sandbox exited %v, want 137", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("jail kill --now did not end the sandbox")
	}
	evs := trailEvents(t, trail)
	kills := eventsOf(evs, "kill")
	if len(kills) != 1 {
		t.Fatalf("want one kill event, got %v", kills)
	}
	k := kills[0]
	req, _ := k["requester"].(map[string]any)
	if k["by"] != "user" || !strings.Contains(fmt.Sprint(k["reason"]), "jail kill --now") || req == nil ||
		req["uid"] != float64(os.Getuid()) || req["pid"] == nil || req["pid"] == float64(0) {
		t.Fatalf("the kill event does not name the kill and who asked: %v", k)
	}
	for _, s := range eventsOf(evs, "signal") {
		if s["signal"] == "SIGINT" {
			t.Errorf("the trail records a SIGINT for a kill --now: %v", s)
		}
	}
}

// jail kill ID (no --now): SIGTERM to the command, exit 0, the requester
// in the trail's signal event.
func TestKillGracefulNamesRequester(t *testing.T) {
	m := marker()
	trail := filepath.Join(t.TempDir(), "trail.jsonl")
	cmd, id := startListed(t, "sleep "+m, "--audit", trail, "--", "sleep", m)
	time.Sleep(300 * time.Millisecond)
	out, err := exec.Command(jail(t), "kill", id).CombinedOutput()
	if err != nil {
		t.Fatalf("jail kill %s: %v\n%s", id, err, out)
	}
	cmd.Wait()
	var term map[string]any
	for _, s := range eventsOf(trailEvents(t, trail), "signal") {
		if s["signal"] == "SIGTERM" {
			term = s
		}
	}
	req, _ := term["requester"].(map[string]any)
	if term == nil || req == nil || req["uid"] != float64(os.Getuid()) {
		t.Fatalf("no SIGTERM event naming the requester: %v", term)
	}
}

// jail kill returns once the sandbox has ended, with --now and without: a
// script that kills a sandbox and then removes its workspace or its HOME
// must not race a supervisor still writing its last files (a test's
// TempDir removal once failed so: "dircache directory not empty"). Seen
// failing on the kill that returned at the control socket's answer: the
// supervisor was still running (state S) when jail kill returned.
func TestKillReturnsWhenEnded(t *testing.T) {
	for _, now := range []bool{true, false} {
		t.Run(fmt.Sprintf("now=%v", now), func(t *testing.T) {
			m := marker()
			cmd, id := startListed(t, "sleep "+m, "--", "sleep", m)
			time.Sleep(300 * time.Millisecond) // the agent is running, not starting
			args := []string{"kill", id}
			if now {
				args = []string{"kill", "--now", id}
			}
			out, err := exec.Command(jail(t), args...).CombinedOutput()
			if err != nil {
				t.Fatalf("jail %v: %v\n%s", args, err, out)
			}
			// The supervisor is this test's child: exited means a zombie
			// (not reaped before cmd.Wait below).
			if st, err := procstat.Read("", cmd.Process.Pid); err == nil && st.State != 'Z' && st.State != 'X' {
				t.Errorf("jail %v returned while the supervisor still runs (state %c)", args, st.State)
			}
			cmd.Wait()
		})
	}
}
