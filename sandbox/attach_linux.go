package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/notice"
	"github.com/jail-sandbox/jail/ptyrelay"
	"github.com/jail-sandbox/jail/session"
	"github.com/jail-sandbox/jail/termanswer"
)

// This file: the terminal a background sandbox keeps (jail run -d -t) and
// jail attach. The main command's pty comes from the sandbox's own devpts
// (init makes it, as for jail -- COMMAND on a terminal); its master stays
// with the supervisor, which reads it for the command's whole life. What
// it prints goes to the sandbox's log, and also to the one attached client,
// as bytes on the control connection: no fd ever crosses, so the client's
// terminal never reaches the sandbox (CVE-2017-5226) and a client that
// detaches or dies leaves the pty where it was. A second attach takes over:
// the first client is told and let go (a terminal left attached on a dead
// ssh session must not lock its user out). While no client is attached, the
// supervisor answers the queries a program asks its terminal as it starts
// (package termanswer): unanswered, a full-screen program waits, and a
// later attach shows a blank screen until the first key.

// keptTty is the pty master of a sandbox started with -t, and its client.
type keptTty struct {
	master *os.File
	log    io.Writer
	done   chan struct{} // the master reads EOF or EIO: the command's terminal is gone

	// busy counts the output chunks read and not yet handed on (drain).
	busy atomic.Int32

	mu     sync.Mutex
	client *attachClient
	// stoppedFor is the client the command stopped with (attachStop):
	// until its OpSuspended, or its going, the command stays stopped.
	stoppedFor *attachClient
	// urgent: jail's urgent lines so far (a mask that fell), sent to the
	// attached client at once and to each later one when it attaches: a
	// user who attaches after the fall must hear of it too. Bounded: the
	// first maxUrgent and a count of the rest.
	urgent  []string
	dropped int
}

// maxUrgent bounds the urgent lines a kept terminal holds for later
// clients (one per mask that fell: a handful).
const maxUrgent = 32

type attachClient struct {
	c        *session.Conn
	mu       sync.Mutex // one Send at a time
	gone     bool
	attached bool // told EventAttached: notices may follow
	suspends bool // it carries out the command's stops (EventSuspend)
}

// send writes one reply; a client that cannot take it within a few
// seconds is dropped (the pty, and the log, must not wait on it).
func (a *attachClient) send(rep session.Reply) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sendLocked(rep)
}

// sendAttached tells the client it is attached; from then on sendNotice
// sends.
func (a *attachClient) sendAttached() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	err := a.sendLocked(session.Reply{OK: true, Event: session.EventAttached})
	a.attached = err == nil
	return err
}

// sendNotice sends an urgent line once the client was told it is
// attached (its first reply must be EventAttached); before, the line is
// in urgentSoFar, which the client gets right after.
func (a *attachClient) sendNotice(line string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.attached {
		_ = a.sendLocked(session.Reply{OK: true, Event: session.EventNotice, Data: []byte(line)})
	}
}

// sendOutput relays the command's output once the client was told it is
// attached. The client is the output's receiver from the moment it takes
// over (handleAttach), a little before that event is sent; output sent in
// between came first, and the client, whose first reply must be
// EventAttached, gave up ("attach: "). What it misses there is in the log,
// and its first resize repaints the screen.
func (a *attachClient) sendOutput(p []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.attached {
		_ = a.sendLocked(session.Reply{OK: true, Event: session.EventOutput, Data: append([]byte(nil), p...)})
	}
}

func (a *attachClient) sendLocked(rep session.Reply) error {
	if a.gone {
		return errors.New("detached")
	}
	_ = a.c.Unix().SetWriteDeadline(time.Now().Add(5 * time.Second))
	err := a.c.Send(rep)
	if err != nil {
		a.gone = true
		a.c.Unix().Close()
	}
	return err
}

// keepTty starts reading the pty master: the log always gets the output,
// the attached client too.
func (r *runner) keepTty(master *os.File) {
	k := &keptTty{master: master, log: os.Stdout, done: make(chan struct{})}
	// A size until a client brings its own: programs that lay out their
	// screen must not see 0x0.
	_ = unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80})
	r.mu.Lock()
	r.kept = k
	r.ptyDone = k.done
	r.mu.Unlock()
	// The log gets urgent notices as any other (the Sink writes them
	// there); the attached client's screen, which is not the Sink's, gets
	// them through this (those said before the terminal was kept too).
	soFar, _ := r.urgent.listen(k.sayUrgent)
	for _, line := range soFar {
		k.sayUrgent(line)
	}
	// The answers to the queries made while nobody is attached, written by
	// a goroutine of their own: a program that does not read its input must
	// not stop the reading of its output (a full answer queue drops them).
	answers := make(chan []byte, 4)
	go func() {
		for {
			select {
			case a := <-answers:
				_, _ = master.Write(a)
			case <-k.done:
				return
			}
		}
	}()
	go func() {
		defer close(k.done)
		buf := make([]byte, 32<<10)
		var queries termanswer.Scanner
		for {
			n, err := master.Read(buf)
			if n > 0 {
				k.busy.Add(1)
				_, _ = k.log.Write(buf[:n])
				// Scanned always, so a query split across an attach is
				// still seen whole; answered only with no client there
				// (then its terminal answers, and only it).
				a := queries.Scan(buf[:n])
				if c := k.current(); c != nil {
					c.sendOutput(buf[:n])
				} else if len(a) > 0 {
					select {
					case answers <- a:
					default:
					}
				}
				k.busy.Add(-1)
			}
			if err != nil {
				return
			}
		}
	}()
}

// sayUrgent sends an urgent line to the attached client, and keeps it for
// later ones. A client that cannot take it within send's deadline is
// dropped, as for output.
func (k *keptTty) sayUrgent(line string) {
	k.mu.Lock()
	if len(k.urgent) < maxUrgent {
		k.urgent = append(k.urgent, line)
	} else {
		k.dropped++
	}
	c := k.client
	k.mu.Unlock()
	if c != nil {
		c.sendNotice(line)
	}
}

// urgentSoFar returns the urgent lines said so far, for a new client.
func (k *keptTty) urgentSoFar() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	lines := append([]string(nil), k.urgent...)
	if k.dropped > 0 {
		lines = append(lines, fmt.Sprintf("jail: and %d more urgent notices: see jail logs or the audit trail", k.dropped))
	}
	return lines
}

func (k *keptTty) current() *attachClient {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.client
}

// handleAttach relays the kept terminal to c until the client detaches,
// another takes over, or the command ends (then RunSession's endAttach
// sends the exit).
func (r *runner) handleAttach(c *session.Conn, who *audit.Requester, suspends bool) {
	r.mu.Lock()
	k := r.kept
	r.mu.Unlock()
	if k == nil {
		_ = c.Send(session.Reply{Error: "the sandbox keeps no terminal: start it with jail run -d -t --name NAME -- COMMAND to attach to it (jail exec -it runs another command on a terminal)"})
		return
	}
	select {
	case <-k.done:
		_ = c.Send(session.Reply{Error: "the sandbox's command has ended"})
		return
	default:
	}
	_ = c.Unix().SetDeadline(time.Time{})
	me := &attachClient{c: c, suspends: suspends}
	k.mu.Lock()
	old := k.client
	k.client = me
	k.mu.Unlock()
	// The command stopped with the client this one takes over from goes
	// on: the new one sees it run.
	r.attachStopEnded(k, old, "the command stopped with its jail attach, and another jail attach took over its terminal: continued it")
	if old != nil {
		_ = old.send(session.Reply{OK: true, Event: session.EventDetached, Error: "another jail attach took over the terminal"})
		old.mu.Lock()
		old.gone = true
		old.c.Unix().Close()
		old.mu.Unlock()
	}
	r.record(audit.Notice{Kind: "session", Severity: "info", Text: "terminal attached by " + describe(who)})
	if err := me.sendAttached(); err != nil {
		k.release(me)
		return
	}
	// What fell before this client was told it is attached (sayUrgent sends
	// it what falls from then on: a line said in between may come twice,
	// never not at all).
	for _, line := range k.urgentSoFar() {
		if err := me.send(session.Reply{OK: true, Event: session.EventNotice, Data: []byte(line)}); err != nil {
			k.release(me)
			return
		}
	}
	sized := false // this client's first resize, which repaints, is done
	for {
		var q session.Request
		fs, err := c.Recv(&q)
		closeAll(fs) // an attach carries bytes only, never an fd
		if err != nil {
			break // detached: the key, or the client went away
		}
		switch q.Op {
		case session.OpInput:
			if len(q.Data) > 0 && k.current() == me {
				_, _ = k.master.Write(q.Data)
			}
		case session.OpResize:
			if q.Rows > 0 && q.Cols > 0 && k.current() == me {
				k.resize(q.Rows, q.Cols, !sized)
				sized = true
			}
		case session.OpSuspended:
			why := ""
			if q.Declined {
				why = "the command stopped and no shell could resume its jail attach either: continued it"
			}
			r.attachStopEnded(k, me, why)
		}
	}
	r.attachStopEnded(k, me, "the command stopped with its jail attach, which went away: continued it")
	if k.release(me) {
		r.record(audit.Notice{Kind: "session", Severity: "info", Text: "terminal detached by " + describe(who)})
	}
}

// resize gives the kept terminal the client's size. At an attach's first
// resize (repaint) the program is told the window changed even when the
// size is the one it has: the kernel sends SIGWINCH only on a change, and
// a full-screen program that drew while nobody was attached would leave
// the new client a blank screen until something redraws it. So the size
// goes one row off first, and back after a pause long enough for the
// program to have read the first one (a SIGWINCH read after both would
// see no change, and some programs then skip the repaint).
func (k *keptTty) resize(rows, cols uint16, repaint bool) {
	fd := int(k.master.Fd())
	if repaint {
		if cur, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ); err == nil && cur.Row == rows && cur.Col == cols {
			off := rows + 1
			if rows > 1 {
				off = rows - 1
			}
			_ = unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: off, Col: cols})
			time.Sleep(repaintPause)
		}
	}
	_ = unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
}

// repaintPause is how long the one-row-off size of an attach's repaint
// stands.
const repaintPause = 60 * time.Millisecond

// release lets go of client a if it is still the attached one.
func (k *keptTty) release(a *attachClient) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.client != a {
		return false
	}
	k.client = nil
	return true
}

// endAttach tells the attached client, if any, how the command ended.
func (r *runner) endAttach(code int) {
	r.mu.Lock()
	k := r.kept
	r.mu.Unlock()
	if k == nil {
		return
	}
	if c := k.current(); c != nil {
		_ = c.send(session.Reply{OK: true, Event: session.EventExit, Code: code})
		c.mu.Lock()
		c.gone = true
		c.c.Unix().Close()
		c.mu.Unlock()
	}
}

func describe(who *audit.Requester) string {
	if who == nil {
		return "?"
	}
	return fmt.Sprintf("pid %d, uid %d", who.PID, who.UID)
}

// attachStop follows the command's stop in a background sandbox, which
// no shell can resume: where the attached client carries out stops, it
// is told (EventSuspend) to stop itself as a job of its own shell, after
// the command's last output; the command stays stopped until the client
// is continued (its OpSuspended) or goes away. false: no such client,
// and the caller continues the command at once, as before.
func (r *runner) attachStop(sig syscall.Signal) bool {
	r.mu.Lock()
	k := r.kept
	r.mu.Unlock()
	if k == nil {
		return false
	}
	a := k.current()
	if a == nil || !a.suspends {
		return false
	}
	// What the command printed before it stopped (leaving its screen)
	// reaches the client before it gives its terminal back.
	ptyrelay.DrainPty(k.master, func() bool { return k.busy.Load() != 0 }, 500*time.Millisecond)
	k.mu.Lock()
	if k.client != a {
		k.mu.Unlock()
		return false
	}
	k.stoppedFor = a
	k.mu.Unlock()
	r.record(audit.Signal{Signal: unix.SignalName(sig), Number: int(sig), From: "sandbox", To: "supervisor"})
	if err := a.send(session.Reply{OK: true, Event: session.EventSuspend}); err != nil {
		k.mu.Lock()
		if k.stoppedFor == a {
			k.stoppedFor = nil
		}
		k.mu.Unlock()
		return false
	}
	return true
}

// attachStopEnded continues the command stopped with client a (nil: none)
// once a is continued (why "": its OpSuspended), or declined or went away
// (why is the notice that says so).
func (r *runner) attachStopEnded(k *keptTty, a *attachClient, why string) {
	if a == nil {
		return
	}
	k.mu.Lock()
	mine := k.stoppedFor == a
	if mine {
		k.stoppedFor = nil
	}
	k.mu.Unlock()
	if !mine {
		return
	}
	if why != "" {
		// Grouped by what was said: once each, then counted (as the
		// stops nobody could resume).
		r.say(notice.Notice{Kind: "job", Severity: notice.Warning, Group: why, Text: why})
		r.record(audit.Signal{Signal: "SIGCONT", Number: int(syscall.SIGCONT), From: "supervisor", To: "agent", Forwarded: true})
	} else {
		r.record(audit.Signal{Signal: "SIGCONT", Number: int(syscall.SIGCONT), From: "user", To: "agent", Forwarded: true})
	}
	r.signalAgent(syscall.SIGCONT, true)
	// Full-screen programs redraw on it (the size may be the same).
	r.signalAgent(syscall.SIGWINCH, true)
}
