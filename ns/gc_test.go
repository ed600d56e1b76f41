package ns

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// HoldGC raises GOGC and gives back the setting it found gcResume after
// release (not at once: the start's garbage would be collected while the
// agent starts).
func TestHoldGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	release := HoldGC()
	if p := debug.SetGCPercent(holdPercent); p != holdPercent {
		t.Errorf("held: GC percent %d, want %d", p, holdPercent)
	}
	release()
	release() // twice is harmless
	if p := debug.SetGCPercent(holdPercent); p != holdPercent {
		t.Errorf("just released: GC percent %d, want still %d", p, holdPercent)
	}
	time.Sleep(gcResume + 200*time.Millisecond)
	if p := debug.SetGCPercent(-1); p != 150 {
		t.Errorf("resumed: GC percent %d, want 150 (as found)", p)
	}
	// A user's GOGC=off, or one less eager than the hold, is kept.
	for _, user := range []int{-1, 1000} {
		debug.SetGCPercent(user)
		release := HoldGC()
		if p := debug.SetGCPercent(user); p != user {
			t.Errorf("user's GOGC %d: held at %d", user, p)
		}
		release()
	}
}

// A start's allocation (a few MiB) runs no collection while held; a plan
// whose live heap grows large (a cold walk of a huge workspace) collects
// a few times, in proportion, not again and again: the collector off
// with a 64 MiB soft limit made it cycle continuously once its live heap
// neared the limit.
func TestHoldGCCycles(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	runtime.GC()
	cycles := func() uint32 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.NumGC
	}
	release := HoldGC()
	defer release()
	n0 := cycles()
	var sink [][]byte
	for i := 0; i < 4<<10; i++ { // 4 MiB of garbage: a start
		sink = append(sink[:0], make([]byte, 1<<10))
	}
	if n := cycles() - n0; n != 0 {
		t.Errorf("a start's 4 MiB ran %d collections while held", n)
	}
	// 80 MiB kept (more than the old limit) and 160 MiB of garbage.
	var live [][]byte
	n0 = cycles()
	for i := 0; i < 240; i++ {
		b := make([]byte, 1<<20)
		if i%3 == 0 {
			live = append(live, b)
		} else {
			sink = append(sink[:0], b)
		}
	}
	runtime.KeepAlive(live)
	n := cycles() - n0
	t.Logf("%d collections for 80 MiB kept and 160 MiB of garbage", n)
	if n > 8 {
		t.Errorf("a growing plan ran %d collections while held, want a few", n)
	}
}
