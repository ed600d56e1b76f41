package sandbox

import (
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/jobstop"
	"github.com/jail-sandbox/jail/notice"
	"github.com/jail-sandbox/jail/ns"
)

// This file: job control. The agent runs as the foreground job of the
// sandbox's pty, so Ctrl-Z (a byte the relay passes on) stops it there, or
// it stops itself (an agent's own suspend key). init sees the stop
// (WUNTRACED) and tells the supervisor, which does what a shell's job does:
// gives the terminal back and stops itself, so the user's shell gets its
// prompt; on SIGCONT (fg) it takes the terminal again (raw), passes the
// size on and continues the agent, which redraws (SIGWINCH).

func (r *runner) agentStarted() bool {
	select {
	case <-r.startedCh:
		return true
	default:
		return false
	}
}

// signalAgent asks init to send a job-control signal to the agent (group:
// to its process group).
func (r *runner) signalAgent(sig syscall.Signal, group bool) {
	if r.sb == nil {
		return
	}
	_ = r.sb.Conn.Send(ns.Message{Type: ns.MsgSignal, Signal: int(sig), Group: group})
}

// suspend follows the agent's stop: terminal back, jail stopped as a job
// of the user's shell, and after fg (or bg) the terminal taken again and
// the agent continued. When no shell could resume jail, the agent is
// continued at once instead: a stop nobody can end would hang the run.
func (r *runner) suspend(sig syscall.Signal, interactive bool) {
	name := unix.SignalName(sig)
	if !jobstop.Resumable() {
		if r.attachStop(sig) {
			return // the attached client stops with it (jail attach)
		}
		r.record(audit.Signal{Signal: "SIGCONT", Number: int(syscall.SIGCONT), From: "supervisor", To: "agent", Forwarded: true})
		r.signalAgent(syscall.SIGCONT, true)
		r.say(notice.Notice{Kind: "job", Severity: notice.Warning, Group: "continued",
			Text: fmt.Sprintf("the command stopped (%s) and jail is not a job of a shell that could resume it: continued it", name)})
		return
	}
	r.record(audit.Signal{Signal: name, Number: int(sig), From: "sandbox", To: "supervisor"})
	r.mu.Lock()
	rl := r.relay
	r.mu.Unlock()
	r.holdSandbox()
	if rl != nil {
		// The agent's last bytes (leaving its screen, the cursor shown)
		// reach the terminal before the shell has it again.
		rl.Drain(500 * time.Millisecond)
		rl.Restore()
	}
	jobstop.Stop(r.contCh)
	r.resume(interactive)
}

// holdWait bounds the wait for init's answer to MsgHold.
const holdWait = 2 * time.Second

// holdSandbox has init stop every process of the sandbox before jail
// stops itself. Stopped, the supervisor watches nothing and its records
// age: a live run's records are touched every few seconds, and a run
// killed while stopped is taken to have ended a few beats after the last
// touch (credswap puts back only what changed before then; later changes
// are the user's own). A process the agent moved out of its process group
// (setsid), which the terminal's stop does not reach, went on writing
// meanwhile: a credential file it changed after the last beat was kept as
// the user's (suspendswap). Execs already waited for the stopped
// supervisor's answer; now nothing of the sandbox runs at all. Said in
// the trail; a hold init does not confirm is said on the terminal too.
func (r *runner) holdSandbox() {
	if r.sb == nil {
		return
	}
	for len(r.heldCh) > 0 {
		<-r.heldCh // an answer to an earlier hold that came too late
	}
	if err := r.sb.Conn.Send(ns.Message{Type: ns.MsgHold}); err != nil {
		r.notef("could not hold the sandbox's processes while jail is stopped: %v", err)
		return
	}
	r.held = true // released at resume even when the answer comes late
	select {
	case <-r.heldCh:
		r.record(audit.Signal{Signal: "SIGSTOP", Number: int(syscall.SIGSTOP), From: "supervisor", To: "sandbox", Forwarded: true})
	case <-time.After(holdWait):
		r.say(notice.Notice{Kind: "job", Severity: notice.Warning, Group: "hold",
			Text: "the sandbox's init did not confirm that its processes are stopped while jail is stopped: some may run on"})
	}
}

// resume takes the terminal again after jail was continued (fg or bg) and
// continues the agent.
func (r *runner) resume(interactive bool) {
	r.mu.Lock()
	rl := r.relay
	r.mu.Unlock()
	if rl != nil {
		// From the background (bg) this stops jail again (SIGTTOU) until
		// fg, as any full-screen program does.
		if err := rl.Raw(); err != nil {
			r.notef("terminal: %v", err)
		}
	}
	r.resizePty()
	if r.sb != nil && r.held {
		// What holdSandbox stopped goes on first, then the agent.
		r.held = false
		r.record(audit.Signal{Signal: "SIGCONT", Number: int(syscall.SIGCONT), From: "supervisor", To: "sandbox", Forwarded: true})
		_ = r.sb.Conn.Send(ns.Message{Type: ns.MsgRelease})
	}
	r.record(audit.Signal{Signal: "SIGCONT", Number: int(syscall.SIGCONT), From: "user", To: "agent", Forwarded: true})
	r.signalAgent(syscall.SIGCONT, true)
	if rl != nil && interactive {
		// The size may not have changed (then the kernel sends no
		// SIGWINCH): full-screen programs redraw on this one.
		r.signalAgent(syscall.SIGWINCH, true)
	}
}
