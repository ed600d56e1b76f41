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
