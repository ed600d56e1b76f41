package sandbox

import (
	"runtime"

	"github.com/jail-sandbox/jail/notice"
)

// traceHeap adds a JAIL_TRACE line saying how much the process has
// allocated by step (issue 16: the supervisor's allocation volume before
// the spec competes with init's start): the bytes allocated on its heap
// since it began (each fresh 4 KiB page a page fault; the start runs
// without a collection, ns.HoldGC, so they are touched once each), the
// number of those allocations, and the bytes of goroutine stacks. A line
// of its own, so that the steps' lines keep their form.
//
// From runtime.ReadMemStats (a stop of the world, under JAIL_TRACE only),
// not package runtime/metrics: that package's init builds the description
// of every metric before main in every jail process, traced or not
// (tests' initsBanned).
func (r *runner) traceHeap(step string) {
	if !r.trace {
		return
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	r.notes.Notef("trace", notice.Trace, "supervisor heap by %s: %d KiB in %d allocations, stacks %d KiB",
		step, m.TotalAlloc>>10, m.Mallocs, m.StackInuse>>10)
}
