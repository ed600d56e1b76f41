//go:build linux

package tests

// Issue 12: refusals on a relayed terminal. jail's notices about refused
// connections (one per refused thing) are kept while the agent owns the
// screen and said after exit, once each with how many times, with cooked
// line endings; the trail has them as notice events.

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNoticeRefusalsHeldOnPty(t *testing.T) {
	script := `for i in 1 2 3; do /usr/bin/curl -sS --max-time 20 --noproxy '*' http://` + refusedHost + `/ >/dev/null 2>&1; done
echo fin""ished; sleep 0.3`
	trail := filepath.Join(t.TempDir(), "trail.jsonl")
	cmd := exec.Command(jail(t), "--audit", trail, "--allow-domain", "allowed.jailtest.example", "--", "/bin/sh", "-c", script)
	cmd.Dir, cmd.Env = workspace(t), screenEnv(refusalEnv(t)...)
	s := startOnPty(t, cmd)
	s.scr.waitFor(t, "finished", 30*time.Second)
	during := s.scr.String()
	if err := s.wait(t, 30*time.Second); err != nil {
		t.Fatalf("exit %v; terminal:\n%q", err, s.scr.String())
	}
	all := s.settled(300 * time.Millisecond)
	if strings.Contains(during, "jail:") {
		t.Errorf("jail wrote on the agent's screen while relaying it:\n%q", during)
	}
	after := all[strings.Index(all, "finished"):]
	want := "jail: refused " + refusedHost + ":80 - add --allow-domain " + refusedHost + " (3 times)\r\n"
	if !strings.Contains(after, want) {
		t.Errorf("the summary after exit lacks %q:\n%q", want, after)
	}
	if n := strings.Count(after, "jail: refused "); n != 1 {
		t.Errorf("%d refusal lines in the summary, want 1:\n%q", n, after)
	}
	if !strings.Contains(after, "jail: audit trail: "+trail+"\r\n") {
		t.Errorf("the summary does not name the trail:\n%q", after)
	}
	var notices int
	for _, e := range eventsOf(trailEvents(t, trail), "notice") {
		if strings.Contains(e["text"].(string), "refused "+refusedHost+":80") {
			notices++
		}
	}
	if notices != 1 {
		t.Errorf("%d notice events for the refused host, want 1", notices)
	}
}
