package agentcfg

import (
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/inotifytest"
)

// TestStopWatchingClosesLast: StopWatching removes every watch and ends
// the watch loop but keeps the descriptor, without a watch, until Close
// (or the close CloseLater returns): the kernel frees the marks beside the
// last checks, and the close no longer waits for that. The removals'
// IN_IGNORED events re-arm nothing, and Close's last check still puts
// back what the agent wrote after the watch stopped. Seen failing on the
// old StopWatching, which closed the descriptor with its watches.
func TestStopWatchingClosesLast(t *testing.T) {
	e := newGuardEnv(t)
	tg := e.target(".claude/settings.json")
	write(t, tg.Path, hostSettings)
	g, _, err := New([]Target{tg}, e.opts("cl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Watch(); err != nil {
		t.Fatal(err)
	}
	fd := g.w.fd
	if n, open := inotifytest.Watches(fd); !open || n < 1 {
		t.Fatalf("before StopWatching: %d watches (open %v)", n, open)
	}
	g.StopWatching()
	time.Sleep(20 * time.Millisecond) // the removals' IN_IGNORED, were anything to read them
	if n, open := inotifytest.Watches(fd); !open || n != 0 {
		t.Fatalf("after StopWatching: descriptor open %v with %d watches, want open with none (the close comes last)", open, n)
	}
	write(t, tg.Path, `{"model": "b", "hooks": {}}`)
	closeWatch := g.CloseLater()
	want := `{"model": "b", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}`
	if got := read(t, tg.Path); got != want {
		t.Fatalf("after CloseLater: %q, want %q (the last check)", got, want)
	}
	if n, open := inotifytest.Watches(fd); !open || n != 0 {
		t.Fatalf("after CloseLater: descriptor open %v with %d watches, want open with none", open, n)
	}
	closeWatch()
	closeWatch() // a second call does nothing
	if _, open := inotifytest.Watches(fd); open {
		t.Fatal("the close CloseLater returned left the inotify descriptor open")
	}
	g.Close() // after CloseLater: nothing more
}

// TestUnwatchRemovesAtOnce: Guard.Unwatch (the run's end, first thing on
// init's exit message) has removed every watch when it returns, keeps the
// descriptor, and the watch loop ends on its own; the last check (Close)
// still puts the host's hook back. Seen failing with an Unwatch that left
// the removals to a goroutine (as the end's `go StopWatching()` did): the
// watch still there when it returned.
func TestUnwatchRemovesAtOnce(t *testing.T) {
	e := newGuardEnv(t)
	tg := e.target(".claude/settings.json")
	write(t, tg.Path, hostSettings)
	g, _, err := New([]Target{tg}, e.opts("uw"))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Watch(); err != nil {
		t.Fatal(err)
	}
	fd, done := g.w.fd, g.w.done
	if n, open := inotifytest.Watches(fd); !open || n < 1 {
		t.Fatalf("before Unwatch: %d watches (open %v)", n, open)
	}
	inotifytest.Unwatched(t, fd, done, g.Unwatch)
	write(t, tg.Path, `{"model": "b", "hooks": {}}`)
	g.Close()
	want := `{"model": "b", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}`
	if got := read(t, tg.Path); got != want {
		t.Fatalf("after Close: %q, want %q (the last check)", got, want)
	}
	if _, open := inotifytest.Watches(fd); open {
		t.Fatal("Close left the inotify descriptor open")
	}
}
