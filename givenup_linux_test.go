package jail

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/session"
)

// TestStartGivenUpConfirmed: a start whose context ends before the
// supervisor answers says so (a request on the connection) and returns
// only once the supervisor confirms (EventGivenUp), bounded by
// givenUpWait. A fake supervisor stands in: it never answers the start,
// and confirms 300 ms after the request. Seen failing before the
// confirmation existed: Start closed the connection and returned at the
// context's end, and a caller that let a stopped init go at once had the
// command run a moment (TestCmdContextEndsStart, once in a CI run:
// "killed" where "not run" was due).
func TestStartGivenUpConfirmed(t *testing.T) {
	t.Chdir(t.TempDir()) // the socket's name stays short
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: "ctl", Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const confirmAfter = 300 * time.Millisecond
	type seen struct {
		req       session.Request
		confirmed time.Time
		err       error
	}
	got := make(chan seen, 1)
	go func() {
		u, err := ln.AcceptUnix()
		if err != nil {
			got <- seen{err: err}
			return
		}
		c := session.NewConn(u)
		defer c.Close()
		var start session.Request
		fds, err := c.Recv(&start)
		for _, f := range fds {
			f.Close()
		}
		if err != nil || start.Op != session.OpExec {
			got <- seen{err: errors.Join(err, errors.New("no exec request first"))}
			return
		}
		var q session.Request
		if _, err := c.Recv(&q); err != nil {
			got <- seen{err: err} // the client went away without a word
			return
		}
		time.Sleep(confirmAfter)
		at := time.Now()
		_ = c.Send(session.Reply{Event: session.EventGivenUp})
		got <- seen{req: q, confirmed: at}
		var rest session.Request
		_, _ = c.Recv(&rest) // until the client closes
	}()
	sb := &Sandbox{info: session.Info{Control: "ctl"}}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	cmd := sb.CommandContext(ctx, "/bin/true")
	err = cmd.Start()
	returned := time.Now()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start: %v, want the context's error", err)
	}
	s := <-got
	if s.err != nil {
		t.Fatalf("the supervisor was not told the start was given up: %v", s.err)
	}
	if s.req.Op != session.OpSignal {
		t.Errorf("the give-up request is %q, want %q (a kill, should the start have been answered)", s.req.Op, session.OpSignal)
	}
	if returned.Before(s.confirmed) {
		t.Errorf("Start returned %s before the supervisor confirmed the start was given up", s.confirmed.Sub(returned).Round(time.Millisecond))
	}
}

// TestStartGivenUpBounded: a supervisor that never confirms holds Start
// no longer than givenUpWait past the context's end.
func TestStartGivenUpBounded(t *testing.T) {
	t.Chdir(t.TempDir())
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: "ctl", Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		u, err := ln.AcceptUnix()
		if err != nil {
			return
		}
		c := session.NewConn(u)
		defer c.Close()
		for {
			var q session.Request
			if _, err := c.Recv(&q); err != nil {
				return // reads, never answers
			}
		}
	}()
	sb := &Sandbox{info: session.Info{Control: "ctl"}}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = sb.CommandContext(ctx, "/bin/true").Start()
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start: %v, want the context's error", err)
	}
	if took > 100*time.Millisecond+givenUpWait+time.Second {
		t.Errorf("Start took %s with a supervisor that never confirms (bound %s past the context)", took.Round(time.Millisecond), givenUpWait)
	}
}
