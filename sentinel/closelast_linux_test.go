package sentinel

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/inotifytest"
)

// TestStopRemovesWatchesClosesLast: Stop removes every watch and ends the
// watch loop but keeps the descriptor, without a watch, until Close (or
// the close CloseLater returns): the kernel frees the removed watches'
// marks beside the exit check, and the close no longer waits for that
// (a close with watches left: 5-19 ms). The IN_IGNORED events of the
// removals re-arm nothing. Seen failing on the old Stop, which closed the
// descriptor with its watches.
func TestStopRemovesWatchesClosesLast(t *testing.T) {
	_, s, fd, done := startWatching(t)
	if n, open := inotifytest.Watches(fd); !open || n < 2 {
		t.Fatalf("before Stop: %d watches (open %v), want 2 or more", n, open)
	}
	s.Stop()
	select {
	case <-done:
	default:
		t.Fatal("Stop returned before the watch loop ended")
	}
	time.Sleep(20 * time.Millisecond) // the removals' IN_IGNORED, were anything to read them
	if n, open := inotifytest.Watches(fd); !open || n != 0 {
		t.Fatalf("after Stop: descriptor open %v with %d watches, want open with none (the close comes last)", open, n)
	}
	if n, _ := s.Watches(); n != 0 {
		t.Fatalf("after Stop: the sentinel counts %d watches", n)
	}
	s.CheckAbsent("exit")
	closeWatch := s.CloseLater()
	if n, open := inotifytest.Watches(fd); !open || n != 0 {
		t.Fatalf("after CloseLater: descriptor open %v with %d watches, want open with none", open, n)
	}
	t0 := time.Now()
	closeWatch()
	t.Logf("close without watches: %v", time.Since(t0))
	closeWatch() // a second call does nothing
	if _, open := inotifytest.Watches(fd); open {
		t.Fatal("the close CloseLater returned left the inotify descriptor open")
	}
}

// TestLastWriteBeforeStop: an absent path made right before Stop, whose
// event the watch loop may never have read, is moved by the exit check
// all the same, every time, with a manifest line.
func TestLastWriteBeforeStop(t *testing.T) {
	h := newHarness(t)
	p := filepath.Join(h.root, ".mcp.json")
	for i := 0; i < 50; i++ {
		s := New(Config{Dir: h.qdir, Notify: h.notify, Roots: []string{h.root}, Absent: []Absent{{Path: p, Rule: "t"}}})
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		mkfile(t, p, "x")
		s.Stop()
		s.CheckAbsent("exit")
		s.Close()
		if _, err := os.Lstat(p); err == nil {
			t.Fatalf("round %d: %s made right before Stop is left", i, p)
		}
	}
	n := 0
	for _, e := range manifest(t, h.qdir) {
		if e.Path == p {
			n++
		}
	}
	if n != 50 {
		t.Fatalf("the manifest has %d lines for %s, want 50", n, p)
	}
}

// TestUnwatchRemovesAtOnce: Unwatch (the run's end, first thing on init's
// exit message) has removed every watch when it returns, keeps the
// descriptor, and the watch loop then ends on its own; Stop after it waits
// for that loop, and the exit check still moves what was made before.
// Seen failing with an Unwatch that left the removals to a goroutine (as
// the end's `go Stop()` did): 2 watches left when it returned.
func TestUnwatchRemovesAtOnce(t *testing.T) {
	h, s, fd, done := startWatching(t)
	if n, open := inotifytest.Watches(fd); !open || n < 2 {
		t.Fatalf("before Unwatch: %d watches (open %v), want 2 or more", n, open)
	}
	inotifytest.Unwatched(t, fd, done, s.Unwatch)
	p := filepath.Join(h.root, ".mcp.json")
	if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	s.CheckAbsent("exit")
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Fatalf("%s made after Unwatch is still there after the exit check (err %v)", p, err)
	}
	s.Close()
	if _, open := inotifytest.Watches(fd); open {
		t.Fatal("Close left the inotify descriptor open")
	}
}

// startWatching starts a sentinel watching a root and a directory in it
// (two watches or more) with two absent paths, and returns its descriptor
// and its watch loop's end.
func startWatching(t *testing.T) (*harness, *Sentinel, int, chan struct{}) {
	t.Helper()
	h := newHarness(t)
	sub := filepath.Join(h.root, "sub")
	os.MkdirAll(sub, 0o755)
	s := New(Config{Dir: h.qdir, Notify: h.notify, Roots: []string{h.root},
		Absent:  []Absent{{Path: filepath.Join(h.root, ".mcp.json"), Rule: "t"}, {Path: filepath.Join(sub, "x", "y"), Rule: "t"}},
		Observe: []string{h.root, sub},
		Inspect: func(string, []string) ([]Item, []string) { return nil, nil }})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return h, s, int(s.file.Fd()), s.done
}
