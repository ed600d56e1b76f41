package rtstart

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Mono is CLOCK_MONOTONIC (ns.MonotonicNS's clock) at this test binary's
// package init: before now, and within its run.
func TestMonoIsMonotonicAtInit(t *testing.T) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	clock := ts.Nano()
	if Mono <= 0 || Mono > clock || clock-Mono > int64(time.Minute) {
		t.Fatalf("Mono %d, CLOCK_MONOTONIC now %d: want a time shortly before now", Mono, clock)
	}
	if n := now(); n < clock {
		t.Fatalf("now() %d after CLOCK_MONOTONIC %d", n, clock)
	}
}
