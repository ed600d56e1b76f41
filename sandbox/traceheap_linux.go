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
// Asked for apart (JAIL_TRACE_HEAP=1 beside JAIL_TRACE=1): the figures
// come from runtime.ReadMemStats, a stop of the world that took 0.2-2.5
// ms at each of the four steps here, which the steps' own times would
// count. Not from package runtime/metrics, which reads them without one:
// its init builds the description of every metric before main in every
// jail process, traced or not (tests' initsBanned).
func (r *runner) traceHeap(step string) {
	if !r.traceHeapOn {
		return
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	r.notes.Notef("trace", notice.Trace, "supervisor heap by %s: %d KiB in %d allocations, stacks %d KiB",
		step, m.TotalAlloc>>10, m.Mallocs, m.StackInuse>>10)
}
