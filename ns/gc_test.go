package ns

import (
	"runtime/debug"
	"testing"
	"time"
)

// HoldGC turns the collector off, with a heap limit, and gives back the
// settings it found gcResume after release (not at once: the start's
// garbage would be collected while the agent starts).
func TestHoldGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 40))
	release := HoldGC()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("held: GC percent %d, want -1 (off)", p)
	}
	if l := debug.SetMemoryLimit(-1); l != setupHeapLimit {
		t.Errorf("held: memory limit %d, want %d", l, setupHeapLimit)
	}
	release()
	release() // twice is harmless
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("just released: GC percent %d, want still -1", p)
	}
	time.Sleep(gcResume + 200*time.Millisecond)
	if p := debug.SetGCPercent(-1); p != 150 {
		t.Errorf("resumed: GC percent %d, want 150 (as found)", p)
	}
	debug.SetGCPercent(150)
	if l := debug.SetMemoryLimit(-1); l != 1<<40 {
		t.Errorf("resumed: memory limit %d, want 1<<40 (as found)", l)
	}
}
