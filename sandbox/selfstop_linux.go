package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/procstat"
	"github.com/jail-sandbox/jail/seccomp"
)

// This file: a jail exec -t command that stops itself. Such a command
// leads its pty's session (setsid, the pty its controlling terminal), so
// its process group has no parent in its session (init is in another):
// an orphaned group, whose SIGTSTP the kernel discards. The terminal's
// Ctrl-Z is taken by jail exec itself (ptyrelay.StopKeyReader), but a
// program that reads the key as a byte in raw mode and then stops itself
// (vim, Claude Code: leave the screen, kill(0, SIGTSTP)) was not stopped:
// it went on, or waited for a SIGCONT that never came. The exec audit's
// filter holds every SIGTSTP sent by kill, tkill or tgkill (seccomp:
// Handlers.OnSignal); one a command's process sends to itself or its own
// group, where that group is the session leader's and takes SIGTSTP's
// default action, is the stop the kernel would discard. The supervisor
// keeps the call waiting and asks the command's jail exec to do what the
// kernel would have done for a job: stop the command (SIGSTOP, which ends
// the call's wait: it restarts at SIGCONT), give the terminal back and
// stop itself; at fg it takes the terminal again and continues the
// command. Every other held SIGTSTP goes on at once, as the kernel runs
// it.

// selfStops are the running exec -t commands whose clients carry out
// their stops, by the command's host pid (its session's id).
type selfStops struct {
	mu   sync.Mutex
	by   map[int]*selfStop
	byID map[int]*selfStop // the same, by exec ID (execStopped)
}

// selfStop is one command's stop in hand.
type selfStop struct {
	// ask sends the client EventSuspend; false when it cannot be sent.
	ask func() bool
	// onAsk records the stop and the signal that made it (the trail).
	onAsk func(sig syscall.Signal)
	// cont continues the command (SIGCONT to its group): one that stopped
	// (execStopped) and whose client did not stop with it.
	cont func()
	id   int // its exec ID

	mu      sync.Mutex
	held    heldCall // the call waiting, until the client's SIGSTOP
	heldTid int      // its thread (host tid)
	// restartTid is the thread whose call the client's SIGSTOP
	// interrupted: its next one, the call restarted at SIGCONT, goes on.
	restartTid int
	asked      bool      // EventSuspend sent, OpSuspended not yet come
	stopped    bool      // the client's SIGSTOP came while asked
	doneAt     time.Time // the last OpSuspended
	timer      *time.Timer
	// fromStop: the ask was for the command's own stop (execStopped),
	// not a held call: a client that declines has it continued.
	fromStop bool
	// byClient: the client stopped the command of its own accord (the
	// key, its own SIGTSTP), until its SIGCONT: that stop is its.
	byClient bool
}

// heldCall is a call the exec audit's filter holds (*seccomp.Held).
type heldCall interface{ Continue() error }

// selfStopAsk bounds how long a call waits for a client that was asked
// and neither stopped the command nor answered (a client stuck, or one
// that stopped without a shell to resume it and declined late): then the
// call goes on, and the kernel discards it, as without jail exec's help.
const selfStopAsk = 10 * time.Second

// selfStopRestart bounds how long after a stop ended the call it
// interrupted is awaited, restarted at SIGCONT, to go on (the kernel
// discards it) instead of stopping the command a second time. A call
// that did not restart (EINTR: a SIGCONT handler without SA_RESTART)
// leaves the wait to this bound.
const selfStopRestart = time.Second

func (s *selfStops) add(hostPid int, st *selfStop) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by == nil {
		s.by, s.byID = map[int]*selfStop{}, map[int]*selfStop{}
	}
	s.by[hostPid] = st
	s.byID[st.id] = st
}

// remove forgets the command's stops (its end, or its client gone): a
// call still held goes on.
func (s *selfStops) remove(hostPid int) {
	s.mu.Lock()
	st := s.by[hostPid]
	delete(s.by, hostPid)
	if st != nil {
		delete(s.byID, st.id)
	}
	s.mu.Unlock()
	if st != nil {
		st.release()
	}
}

func (s *selfStops) none() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.by) == 0
}

// execStopped follows exec id's command that stopped (a shell's suspend
// builtin, a SIGSTOP from inside): where its client carries out stops,
// the client stops with it and continues it at fg. A stop the client made
// itself, or made for a held call, is already its.
func (s *selfStops) execStopped(id int, sig syscall.Signal) {
	s.mu.Lock()
	st := s.byID[id]
	s.mu.Unlock()
	if st != nil {
		st.commandStopped(sig)
	}
}

func (s *selfStops) of(session int) *selfStop {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.by[session]
}

// onSignal answers a SIGTSTP held by the exec audit's filter: the stop of
// a command whose client carries it out, or on at once.
func (r *runner) onSignal(ev seccomp.SignalEvent, h *seccomp.Held) {
	// No exec -t command's client carries out stops (the run's own agent
	// stopping, in init's session): on at once, /proc unread.
	if r.stops.none() {
		_ = h.Continue()
		return
	}
	// Waiting after the reads: the ids read were the caller's (a caller
	// killed meanwhile could have had its pid taken by another process).
	if st := r.stops.of(selfStopSession(ev)); st != nil && h.Waiting() {
		st.request(ev.Pid, h)
		return
	}
	_ = h.Continue()
}

// selfStopSession is the host pid of the session whose leader's group the
// call would stop, where the kernel would discard that stop: the calling
// thread's own process, or its own group, the group being the session
// leader's (orphaned: its parent is init, in another session), and the
// caller taking SIGTSTP's default action (ignored, nothing happens;
// caught, its handler runs: the kernel delivers those). 0 otherwise, or
// when the caller's /proc cannot be read (it went on).
func selfStopSession(ev seccomp.SignalEvent) int {
	if ev.Signal != int(syscall.SIGTSTP) || ev.Pid <= 0 {
		return 0
	}
	proc := "/proc/" + strconv.Itoa(ev.Pid)
	b, err := os.ReadFile(proc + "/stat")
	if err != nil {
		return 0
	}
	st, err := procstat.Parse(b)
	if err != nil || st.Pgrp != st.Session || st.Session <= 0 {
		return 0
	}
	status, err := os.ReadFile(proc + "/status")
	if err != nil {
		return 0
	}
	if dfl, ok := procstat.SignalDefault(status, int(syscall.SIGTSTP)); !dfl || !ok {
		return 0
	}
	// The caller's own ids as it sees them (the innermost of each
	// NS line): the call's numbers are in its pid namespace.
	tid, ok1 := innermostNS(status, "NSpid")
	tgid, ok2 := innermostNS(status, "NStgid")
	pgid, ok3 := innermostNS(status, "NSpgid")
	if !ok1 || !ok2 || !ok3 {
		return 0
	}
	if !aimsAtSelf(ev, tid, tgid, pgid) {
		return 0
	}
	return st.Session
}

// aimsAtSelf tells whether the call sends its signal to the caller (tid,
// of process tgid) or to the caller's own process group (pgid), the ids
// as the caller sees them.
func aimsAtSelf(ev seccomp.SignalEvent, tid, tgid, pgid int) bool {
	switch ev.Call {
	case "kill":
		return ev.Target == 0 || ev.Target == tgid || ev.Target == -pgid
	case "tkill":
		return ev.Thread == tid
	case "tgkill":
		return ev.Target == tgid && ev.Thread == tid
	}
	return false
}

// request takes the command's held SIGTSTP, made by thread tid.
func (s *selfStop) request(tid int, h heldCall) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.restartTid == tid && (s.asked || time.Since(s.doneAt) < selfStopRestart):
		// The call the client's SIGSTOP interrupted, restarted at its
		// SIGCONT: the command was stopped and has been continued. On,
		// the kernel discards it.
		s.restartTid = 0
		_ = h.Continue()
	case s.asked && !s.stopped && tid == s.heldTid:
		// A signal ended the held call's wait before the client's stop
		// (a SIGWINCH, a SIGCHLD) and the call came again: this one
		// waits instead (the old one's answer finds nothing).
		if s.held != nil {
			_ = s.held.Continue()
		}
		s.held, s.heldTid = h, tid
	case s.asked:
		// Another thread's, while the stop is carried out: on (the
		// client's SIGSTOP stops it too).
		_ = h.Continue()
	default:
		if !s.ask() {
			_ = h.Continue()
			return
		}
		if s.onAsk != nil {
			s.onAsk(syscall.SIGTSTP)
		}
		s.asked, s.stopped, s.held, s.heldTid, s.restartTid = true, false, h, tid, 0
		s.timer = time.AfterFunc(selfStopAsk, s.expire)
	}
}

// commandStopped asks the client to stop with the command, stopped of
// its own (not by the client, nor for an ask in hand).
func (s *selfStop) commandStopped(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.asked || s.byClient {
		return
	}
	if !s.ask() {
		s.cont()
		return
	}
	if s.onAsk != nil {
		s.onAsk(sig)
	}
	s.asked, s.stopped, s.fromStop = true, false, true
	s.timer = time.AfterFunc(selfStopAsk, s.expire)
}

// signalled notes a signal the client sends the command: its SIGSTOP,
// once asked, ends the held call's wait (the kernel drops the
// notification; the call restarts at SIGCONT); otherwise it is the
// client's own stop (the key) until its SIGCONT.
func (s *selfStop) signalled(sig int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case sig == int(syscall.SIGSTOP) && s.asked:
		if s.held != nil {
			s.restartTid = s.heldTid
		}
		s.stopped, s.held = true, nil
	case sig == int(syscall.SIGSTOP):
		s.byClient = true
	case sig == int(syscall.SIGCONT):
		s.byClient = false
	}
}

// done is the client's OpSuspended: a call still held (the client
// declined: no shell could resume it) goes on, and so does a command
// that stopped of its own whose client declined.
func (s *selfStop) done(declined bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fromStop && declined {
		s.cont()
	}
	s.asked, s.stopped, s.fromStop, s.doneAt = false, false, false, time.Now()
	s.stopTimer()
	s.letGo()
}

// expire lets a call go on whose client neither stopped the command nor
// answered in time.
func (s *selfStop) expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.asked && !s.stopped {
		if s.fromStop {
			s.cont()
		}
		s.asked, s.fromStop, s.doneAt = false, false, time.Now()
		s.letGo()
	}
}

// release lets a held call go on: the command ended or its client went.
func (s *selfStop) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopTimer()
	s.letGo()
}

// letGo lets the held call go on (s.mu held).
func (s *selfStop) letGo() {
	if s.held != nil {
		_ = s.held.Continue()
		s.held = nil
	}
}

func (s *selfStop) stopTimer() {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}

// selfStopRecord is the trail's line for exec id's own stop.
func (r *runner) selfStopRecord(id int) func(sig syscall.Signal) {
	return func(sig syscall.Signal) {
		name := unix.SignalName(sig)
		r.record(audit.Signal{Signal: name, Number: int(sig), From: "sandbox", To: "supervisor"})
		r.record(audit.Notice{Kind: "session", Severity: "info", Text: fmt.Sprintf("exec %d stopped itself (%s): its jail exec stops it, as a shell's job", id, name)})
	}
}
