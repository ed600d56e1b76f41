package sandbox

import (
	"syscall"
	"testing"

	"github.com/jail-sandbox/jail/seccomp"
)

// fakeHeld counts its Continue calls.
type fakeHeld struct{ n int }

func (f *fakeHeld) Continue() error { f.n++; return nil }

// A command's own stop: asked once, held until the client's SIGSTOP; the
// call that stop interrupted, restarted at SIGCONT, goes on; the next
// stop, right after, is asked again (seen failing with a time window
// alone: a second Ctrl-Z 0.5 s after fg went on unstopped).
func TestSelfStopRequests(t *testing.T) {
	asks := 0
	answer := true
	s := &selfStop{ask: func() bool { asks++; return answer }}
	defer s.release()
	step := func(what string, wantAsks int, h *fakeHeld, wantCont int) {
		t.Helper()
		if asks != wantAsks || h.n != wantCont {
			t.Fatalf("%s: %d asks, held continued %d times; want %d, %d", what, asks, h.n, wantAsks, wantCont)
		}
	}
	h1 := &fakeHeld{}
	s.request(5, h1)
	step("first", 1, h1, 0)
	h2 := &fakeHeld{}
	s.request(5, h2) // its wait ended by a signal, the call again
	step("again before the stop", 1, h2, 0)
	if h1.n != 1 {
		t.Fatalf("the call it replaced was continued %d times, want 1", h1.n)
	}
	h3 := &fakeHeld{}
	s.request(9, h3) // another thread's, meanwhile
	step("another thread", 1, h3, 1)
	if h2.n != 0 {
		t.Fatal("another thread's call let the held one go")
	}
	s.signalled(int(syscall.SIGSTOP))
	if h2.n != 0 {
		t.Fatal("the held call was answered at the client's SIGSTOP, which ends its wait")
	}
	h4 := &fakeHeld{}
	s.request(5, h4) // restarted at SIGCONT
	step("restart", 1, h4, 1)
	s.done(false)
	h5 := &fakeHeld{}
	s.request(5, h5) // the user's next Ctrl-Z, at once
	step("next stop", 2, h5, 0)
	answer = false
	s.signalled(int(syscall.SIGCONT)) // not a stop: nothing changes
	s.done(true)                      // declined: the call goes on
	step("declined", 2, h5, 1)
	h6 := &fakeHeld{}
	s.request(5, h6) // the client cannot be asked: on at once
	step("cannot ask", 3, h6, 1)
	// The restart consumed, a call of the same thread within the window
	// after a stop is a new stop.
	answer = true
	h7 := &fakeHeld{}
	s.request(5, h7)
	s.release()
	step("released", 4, h7, 1)
}

func TestAimsAtSelf(t *testing.T) {
	const tid, tgid, pgid = 12, 10, 8
	for _, tt := range []struct {
		ev   seccomp.SignalEvent
		want bool
	}{
		{seccomp.SignalEvent{Call: "kill", Target: 0}, true},
		{seccomp.SignalEvent{Call: "kill", Target: tgid}, true},
		{seccomp.SignalEvent{Call: "kill", Target: -pgid}, true},
		{seccomp.SignalEvent{Call: "kill", Target: tid}, false}, // a thread id is no process's
		{seccomp.SignalEvent{Call: "kill", Target: pgid}, false},
		{seccomp.SignalEvent{Call: "kill", Target: -1}, false},
		{seccomp.SignalEvent{Call: "kill", Target: 99}, false},
		{seccomp.SignalEvent{Call: "tkill", Thread: tid}, true},
		{seccomp.SignalEvent{Call: "tkill", Thread: tgid}, false},
		{seccomp.SignalEvent{Call: "tgkill", Target: tgid, Thread: tid}, true},
		{seccomp.SignalEvent{Call: "tgkill", Target: 99, Thread: tid}, false},
		{seccomp.SignalEvent{Call: "tgkill", Target: tgid, Thread: 99}, false},
		{seccomp.SignalEvent{Call: "rt_sigqueueinfo", Target: 0}, false},
	} {
		if got := aimsAtSelf(tt.ev, tid, tgid, pgid); got != tt.want {
			t.Errorf("aimsAtSelf(%+v) = %v, want %v", tt.ev, got, tt.want)
		}
	}
}

// The command stopped of its own (a shell's suspend): the client is asked
// once; declined, the command is continued; the client's own stop (the
// key) and the stop of a held call's ask are not asked again.
func TestSelfStopCommandStopped(t *testing.T) {
	asks, conts := 0, 0
	answer := true
	s := &selfStop{ask: func() bool { asks++; return answer }, cont: func() { conts++ }}
	defer s.release()
	check := func(what string, wantAsks, wantConts int) {
		t.Helper()
		if asks != wantAsks || conts != wantConts {
			t.Fatalf("%s: %d asks, %d continues; want %d, %d", what, asks, conts, wantAsks, wantConts)
		}
	}
	s.commandStopped(syscall.SIGSTOP)
	check("stopped", 1, 0)
	s.commandStopped(syscall.SIGSTOP) // reported again meanwhile
	check("again", 1, 0)
	s.signalled(int(syscall.SIGSTOP)) // the client's stop for the ask
	s.signalled(int(syscall.SIGCONT))
	s.done(false)
	check("fg", 1, 0)
	s.commandStopped(syscall.SIGSTOP)
	s.done(true) // no shell to resume the client
	check("declined", 2, 1)
	s.signalled(int(syscall.SIGSTOP)) // the key: the client's own stop
	s.commandStopped(syscall.SIGSTOP)
	check("the key's stop", 2, 1)
	s.signalled(int(syscall.SIGCONT))
	h := &fakeHeld{}
	s.request(5, h) // a held call's ask, then its SIGSTOP's report
	s.signalled(int(syscall.SIGSTOP))
	s.commandStopped(syscall.SIGSTOP)
	check("a held call's stop", 3, 1)
	s.done(false)
	answer = false
	s.commandStopped(syscall.SIGSTOP) // the client cannot be asked
	check("cannot ask", 4, 2)
}
