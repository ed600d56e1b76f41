package jobstop

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestResumableWithoutTerminal: a process without a controlling terminal
// (a new session: CI, a service) is no job a shell could continue, so
// Resumable is false and a stop would never end. The test binary runs
// itself in a session of its own to ask.
func TestResumableWithoutTerminal(t *testing.T) {
	if os.Getenv("JOBSTOP_ASK") == "1" {
		if Resumable() {
			os.Stdout.WriteString("resumable\n")
		} else {
			os.Stdout.WriteString("not resumable\n")
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestResumableWithoutTerminal$")
	cmd.Env = append(os.Environ(), "JOBSTOP_ASK=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "not resumable") {
		t.Fatalf("a process in a session of its own, without a terminal, was said resumable:\n%s", out)
	}
}
