package sandbox

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// goNow's goroutine runs before its caller goes on, even with no other
// thread free to take it (one P, the caller busy): a plain go statement's
// goroutine would wait for the caller's preemption (10 ms and more), as
// init's clone did at the start's beginning.
func TestGoNowRunsAtOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// The scheduler takes from the global queue (where the caller goes)
	// first one time in 61: one trial may lose, three in a row do not.
	var waited []time.Duration
	for trial := 0; trial < 3; trial++ {
		var ran atomic.Bool
		goNow(func() { ran.Store(true) })
		t0 := time.Now()
		for !ran.Load() && time.Since(t0) < 100*time.Millisecond {
			// busy, as the supervisor is with its check and plan
		}
		d := time.Since(t0)
		if d < 2*time.Millisecond {
			return
		}
		waited = append(waited, d)
	}
	t.Fatalf("goNow's goroutine ran only after its caller was preempted: waited %v", waited)
}
