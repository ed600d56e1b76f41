package ns

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExecNoClonePidfdFailsFast: where the supervisor cannot use kcmp it
// asks init to report the command's process (ReportChild) by the pidfd
// clone(CLONE_PIDFD) gives. A kernel without it (before Linux 5.3) gave
// none: the supervisor waited its whole start bound (15 s) for a report
// that never came, then let the command run unmatched. init now refuses
// such a start at once, saying why. Forced here: the probe says no.
func TestExecNoClonePidfdFailsFast(t *testing.T) {
	prev := clonePidfd
	clonePidfd = func() bool { return false }
	t.Cleanup(func() { clonePidfd = prev })
	initSide, sup := pair(t)
	var stdio []*os.File
	for i := 0; i < 3; i++ {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		stdio = append(stdio, f)
	}
	st := &initState{onAgentThread: func(f func()) { f() }, execs: map[int]int{}, wake: make(chan struct{}, 1)}
	es := &ExecSpec{ID: 7, Argv: []string{"/bin/true"}, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: "/", ReportChild: true}
	go st.exec(initSide, es, stdio)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		m, files, err := sup.Recv()
		for _, f := range files {
			f.Close()
		}
		if err != nil {
			t.Fatalf("recv: %v", err)
		}
		if m.Type != MsgExecStarted {
			continue // MsgExecChild: the pidfd report
		}
		if m.Pid > 0 {
			var ws syscall.WaitStatus
			syscall.Wait4(m.Pid, &ws, 0, nil)
			t.Fatalf("init started the command (pid %d) with no pidfd to report it by", m.Pid)
		}
		if m.ExitCode != 125 || !strings.Contains(m.Error, "Linux 5.3") {
			t.Fatalf("refusal = %d %q, want 125 naming Linux 5.3", m.ExitCode, m.Error)
		}
		return
	}
	t.Fatal("no answer from init within 5 s")
}
