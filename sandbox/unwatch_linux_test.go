package sandbox

import (
	"testing"
	"time"

	"github.com/jail-sandbox/jail/ns"
)

// TestExitMessageUnwatchesFirst: the message reader removes the walls'
// watches (r.unwatch) as soon as it reads init's exit message, before the
// main loop hears of it (exitCh): the descriptors' close at the run's end
// waits for fsnotify's reaper for as long as the removals came late. A
// second exit message does neither again. Seen failing with the reader
// leaving the removals to the main loop (stopServers): unwatch not called
// when exitCh closed.
func TestExitMessageUnwatchesFirst(t *testing.T) {
	r, ini := pairedRunner(t)
	calls := make(chan bool, 4) // each call: was exitCh still open?
	r.unwatch = func() {
		select {
		case <-r.exitCh:
			calls <- false
		default:
			calls <- true
		}
	}
	done := make(chan struct{})
	go r.readMessages(done)
	defer func() {
		r.sb.Conn.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("readMessages did not end with its socket closed")
		}
	}()
	if err := ini.Send(ns.Message{Type: ns.MsgExit, Code: 3}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.exitCh:
	case <-time.After(5 * time.Second):
		t.Fatal("exitCh not closed after init's exit message")
	}
	select {
	case before := <-calls:
		if !before {
			t.Fatal("the watches were removed after exitCh closed, want before")
		}
	default:
		t.Fatal("exitCh closed but the watches were not removed")
	}
	if err := ini.Send(ns.Message{Type: ns.MsgExit, Code: 4}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if len(calls) != 0 {
		t.Fatal("a second exit message removed the watches again")
	}
}
