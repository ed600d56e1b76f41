package sandbox

import (
	"testing"

	"github.com/jail-sandbox/jail/ns"
)

// A command that ends at once can be reaped, and its end sent by init's
// wait loop, before init's exec handler has sent its start: the two are
// sent by different goroutines of init. jail exec must still report the
// command's own exit code. (Seen in CI: exec 39 of TestSessionExecMany,
// `exit 4`, reported 0, the empty code of the start message taken as the
// end.)
func TestExecWaitEitherOrder(t *testing.T) {
	start := execMsg{m: ns.Message{Type: ns.MsgExecStarted, ID: 1, Pid: 42}}
	end := execMsg{m: ns.Message{Type: ns.MsgExecExit, ID: 1, Code: 4}}
	for _, exitFirst := range []bool{false, true} {
		ch := make(chan execMsg, 2) // as execs.add makes it
		if exitFirst {
			ch <- end
			ch <- start
		} else {
			ch <- start
			ch <- end
		}
		w := execWaiter{ch: ch}
		s, ok := w.started()
		if !ok || s.m.Type != ns.MsgExecStarted || s.m.Pid != 42 {
			t.Errorf("exit first %v: started() = %+v, %v; want the start (pid 42)", exitFirst, s.m, ok)
		}
		e, ok := w.exit()
		if !ok || e.m.Type != ns.MsgExecExit || e.m.Code != 4 {
			t.Errorf("exit first %v: exit() = %+v, %v; want the end (code 4)", exitFirst, e.m, ok)
		}
	}
	// init gone (the channel closed, execs.end) before the start, with or
	// without an early end: no start, and no made-up end.
	for _, early := range []bool{false, true} {
		ch := make(chan execMsg, 2)
		if early {
			ch <- end
		}
		close(ch)
		w := execWaiter{ch: ch}
		if s, ok := w.started(); ok {
			t.Errorf("early end %v, init gone: started() = %+v, true; want false", early, s.m)
		}
	}
}
