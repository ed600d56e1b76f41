package sandbox

import (
	"fmt"
	"sync"
	"time"

	"github.com/jail-sandbox/jail/procstat"
	"github.com/jail-sandbox/jail/session"
)

// This file: jail's urgent lines (a mask the host took away) for the
// screens that are not the Sink's: the client attached to a kept terminal
// (jail attach) and each jail exec client that asked (jail exec, -t or
// not: the command's output reaches the user's terminal too, and the user
// may be working in it while the mask is gone).

// urgentLines is every urgent line said so far (bounded: the first
// maxUrgent and a count of the rest), and who hears them besides the
// Sink. A listener that comes later is given those said before: a user
// who starts jail exec after the fall must hear of it too. The zero value
// is ready.
type urgentLines struct {
	mu      sync.Mutex
	lines   []string
	dropped int
	next    int
	subs    map[int]func(line string)
}

// say is the Sink's AlsoUrgent: line to every listener, kept for later
// ones. Listeners never block it (the mask watch calls it: review14c).
func (u *urgentLines) say(line string) {
	u.mu.Lock()
	if len(u.lines) < maxUrgent {
		u.lines = append(u.lines, line)
	} else {
		u.dropped++
	}
	subs := make([]func(string), 0, len(u.subs))
	for _, fn := range u.subs {
		subs = append(subs, fn)
	}
	u.mu.Unlock()
	for _, fn := range subs {
		fn(line)
	}
}

// listen adds fn, which gets each line said from now on, and returns the
// lines said before (a line said in between may come twice, never not at
// all) and the func that stops it.
func (u *urgentLines) listen(fn func(line string)) (soFar []string, stop func()) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.subs == nil {
		u.subs = map[int]func(string){}
	}
	id := u.next
	u.next++
	u.subs[id] = fn
	soFar = append([]string(nil), u.lines...)
	if u.dropped > 0 {
		soFar = append(soFar, fmt.Sprintf("jail: and %d more urgent notices: see jail logs or the audit trail", u.dropped))
	}
	return soFar, func() {
		u.mu.Lock()
		delete(u.subs, id)
		u.mu.Unlock()
	}
}

// execNotices is one jail exec client's urgent lines: queued (never
// blocking say), sent by a goroutine of their own between the started and
// the exit reply, each within a deadline (a client that does not read is
// given up: its command runs on, its exit is still sent).
type execNotices struct {
	c    *session.Conn
	mu   *sync.Mutex // the connection's sends, one at a time
	done chan struct{}
	stop func()

	qmu    sync.Mutex // q and closed: say may call add after stop
	q      chan session.Reply
	closed bool
}

// execQueue bounds the lines waiting for a slow exec client; more are
// dropped for it (the sandbox's log and trail have each).
const execQueue = 16

// noticeExec starts sending urgent lines to the exec client c, those said
// before first. mu guards c's sends. The returned func stops it, after
// the lines queued so far are sent (or the client gave up): call it before
// the exit reply, which must come last.
//
// With timely (the client asked for them, and hostPid is the command's
// first exec seen by the exec audit), the command's timely lines come too
// (timelyExecs): a server the exec'd command starts is named to its own
// client, not on the run's screen.
//
// first are timely lines said before any other (the notes on the
// command's arguments; the caller passes them to a client that asked).
func (r *runner) noticeExec(c *session.Conn, mu *sync.Mutex, hostPid int, timely bool, first []string) func() {
	n := &execNotices{c: c, mu: mu, q: make(chan session.Reply, execQueue), done: make(chan struct{})}
	for _, l := range first {
		n.addTimely(l)
	}
	soFar, stop := r.urgent.listen(n.add)
	n.stop = stop
	if timely && hostPid > 0 {
		unlisten := r.timelyExecs.listen(hostPid, n.addTimely)
		n.stop = func() { unlisten(); stop() }
	}
	go n.send(soFar)
	return n.end
}

func (n *execNotices) add(line string) {
	n.queue(session.Reply{OK: true, Event: session.EventNotice, Data: []byte(line)})
}

func (n *execNotices) addTimely(line string) {
	n.queue(session.Reply{OK: true, Event: session.EventTimely, Data: []byte(line)})
}

func (n *execNotices) queue(rep session.Reply) {
	n.qmu.Lock()
	defer n.qmu.Unlock()
	if n.closed {
		return
	}
	select {
	case n.q <- rep:
	default:
	}
}

func (n *execNotices) send(soFar []string) {
	defer close(n.done)
	gone := false
	one := func(rep session.Reply) {
		if gone {
			return
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		_ = n.c.Unix().SetWriteDeadline(time.Now().Add(5 * time.Second))
		if err := n.c.Send(rep); err != nil {
			gone = true
		}
		_ = n.c.Unix().SetWriteDeadline(time.Time{})
	}
	for _, line := range soFar {
		one(session.Reply{OK: true, Event: session.EventNotice, Data: []byte(line)})
	}
	for rep := range n.q {
		one(rep)
	}
}

// timelyExecs are the exec clients that take their command's timely
// lines, by the host pid of the command's first exec: the leader of its
// session (exec -t) or of its process group (without -t), which its
// processes keep unless they leave them. The zero value is ready.
type timelyExecs struct {
	mu sync.Mutex
	by map[int]func(line string)
}

// listen routes the timely lines of the processes of hostPid's session or
// process group to fn until the returned func is called.
func (t *timelyExecs) listen(hostPid int, fn func(line string)) func() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.by == nil {
		t.by = map[int]func(string){}
	}
	t.by[hostPid] = fn
	return func() {
		t.mu.Lock()
		delete(t.by, hostPid)
		t.mu.Unlock()
	}
}

// of returns the client that takes pid's timely lines (pid a host pid of
// the sandbox, its session and process group read from /proc), and the
// host pid it listens on; 0 and nil for the run's own command, a process
// that left its exec's session and group, or one gone.
func (t *timelyExecs) of(pid int) (int, func(line string)) {
	t.mu.Lock()
	empty := len(t.by) == 0
	t.mu.Unlock()
	if empty {
		return 0, nil
	}
	st, err := procstat.Read("", pid)
	if err != nil {
		return 0, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, leader := range []int{st.Session, st.Pgrp} {
		if fn := t.by[leader]; fn != nil && leader > 0 {
			return leader, fn
		}
	}
	return 0, nil
}

// end stops the lines and waits until those queued are sent.
func (n *execNotices) end() {
	n.stop()
	n.qmu.Lock()
	n.closed = true
	close(n.q)
	n.qmu.Unlock()
	<-n.done
}
