package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The end of a run: Sync (the run's events on disk, started early), Flush
// (what came after, written), the exit event (fsynced, as the issue asks
// of kill and exit), Close. Flush writes without an fsync, and Close adds
// no fsync for a file the exit event's already covered: one fsync per step
// that wrote something, and the trail complete and on disk at the end.
func TestFlushWritesAndCloseSkipsRedundantFsync(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "trail.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	w.Record(Exec{PID: 1, Path: "/bin/true", Argv: []string{"true"}, Decision: DecisionAllow})
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Written != 1 || st.Synced != 1 || st.Fsyncs != 1 {
		t.Fatalf("after Sync: %+v, want 1 line written and fsynced by 1 fsync", st)
	}
	w.Record(Exec{PID: 2, Path: "/bin/false", Argv: []string{"false"}, Decision: DecisionAllow})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Written != 2 || st.Synced != 1 || st.Fsyncs != 1 {
		t.Fatalf("after Flush: %+v, want 2 lines written, the second not fsynced, no new fsync", st)
	}
	w.Record(Exit{Code: 0, Reason: "exited"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	if st.Written != 3 || st.Synced != 3 {
		t.Fatalf("after Close: %+v, want every line written and fsynced", st)
	}
	if st.Fsyncs != 2 {
		t.Errorf("after Close: %d fsyncs, want 2 (Sync, the exit event; Close's own has nothing left to sync)", st.Fsyncs)
	}
	if err := w.Flush(); err != ErrClosed {
		t.Errorf("Flush after Close: %v, want ErrClosed", err)
	}
}

// A Sync with nothing written since the last fsync makes none; one after a
// new line does.
func TestSyncOnlyWhatIsDirty(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "trail.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Fsyncs != 0 {
		t.Errorf("Sync of an empty trail: %d fsyncs, want 0 (nothing written)", st.Fsyncs)
	}
	w.Record(Exec{PID: 1, Path: "/bin/true", Argv: []string{"true"}, Decision: DecisionAllow})
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Fsyncs != 1 || st.Synced != 1 {
		t.Errorf("Sync after a line: %+v, want it fsynced", st)
	}
}

// The run's end writes its exit event with RecordWritten and awaits its
// fsync only at the very end (Close), doing the rest of its end
// meanwhile: RecordWritten returns once the line is in the file, before
// that event's fsync, and Close waits for the fsync.
func TestRecordWrittenDoesNotWaitForTheFsync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trail.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	inFsync, release := make(chan struct{}), make(chan struct{})
	w.beforeFsync = func() {
		close(inFsync)
		<-release
	}
	written := make(chan error, 1)
	go func() { written <- w.RecordWritten(Exit{Code: 3, Reason: "exited"}) }()
	<-inFsync
	select {
	case err := <-written:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("RecordWritten waited for the exit event's fsync")
	}
	if st := w.Stats(); st.Written != 1 || st.Synced != 0 {
		t.Errorf("after RecordWritten, the fsync held: %+v, want the exit event written, not yet synced", st)
	}
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), `"type":"exit"`) {
		t.Errorf("after RecordWritten the file holds %q (%v), want the exit event", b, err)
	}
	closed := make(chan error, 1)
	go func() { closed <- w.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned before the exit event's fsync")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Written != 1 || st.Synced != 1 || st.Fsyncs != 1 {
		t.Errorf("after Close: %+v, want the exit event written and fsynced once", st)
	}
	if err := w.RecordWritten(Exit{}); err == nil {
		t.Error("RecordWritten after Close: no error")
	}
}
