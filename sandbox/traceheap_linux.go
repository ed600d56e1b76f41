package sandbox

import (
	"runtime/metrics"

	"github.com/jail-sandbox/jail/notice"
)

// heapSamples are what traceHeap reports: the bytes the process allocated
// on its heap since it began (each fresh 4 KiB page a page fault; the start
// runs without a collection, ns.HoldGC, so they are touched once each), the
// number of those allocations, and the bytes of goroutine stacks.
var heapSamples = [...]string{
	"/gc/heap/allocs:bytes",
	"/gc/heap/allocs:objects",
	"/memory/classes/heap/stacks:bytes",
}

// traceHeap adds a JAIL_TRACE line saying how much the process has
// allocated by step (issue 16: the supervisor's allocation volume before
// the spec competes with init's start). A line of its own, so that the
// steps' lines keep their form.
func (r *runner) traceHeap(step string) {
	if !r.trace {
		return
	}
	var s [len(heapSamples)]metrics.Sample
	for i, n := range heapSamples {
		s[i].Name = n
	}
	metrics.Read(s[:])
	r.notes.Notef("trace", notice.Trace, "supervisor heap by %s: %d KiB in %d allocations, stacks %d KiB",
		step, s[0].Value.Uint64()>>10, s[1].Value.Uint64(), s[2].Value.Uint64()>>10)
}
