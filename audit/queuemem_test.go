package audit

import (
	"path/filepath"
	"runtime"
	"testing"
)

// A trail's queue costs a pointer a slot until events fill it, not a whole
// item: a channel's buffer is made whole when the channel is, and
// QueueSize items made 2.3 MiB at every start (one object, placed where
// the supervisor's later heap would have gone: issue 16, the heap window
// of package prefault). Seen failing with the queue of items (2,376 KiB
// allocated by Create).
func TestCreateQueueIsSmall(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w, err := Create(filepath.Join(t.TempDir(), "x.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	defer w.Close()
	if kib := (after.TotalAlloc - before.TotalAlloc) >> 10; kib > 512 {
		t.Errorf("Create allocated %d KiB, want at most 512 (the queue's %d slots at a pointer each)", kib, QueueSize)
	}
}
