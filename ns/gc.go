package ns

import (
	"runtime/debug"
	"sync"
	"time"
)

// setupHeapLimit bounds the heap while the collector is held (HoldGC): past
// it the collector runs as usual. A start's heap is a few MiB; a plan over
// a huge workspace can be far more, and then collects past this bound
// instead of growing unchecked.
const setupHeapLimit = 64 << 20

// gcResume is how long after release the collector resumes: turned on at
// once, it would collect the start's garbage at once (a full cycle, 10 to
// 35 ms of CPU here) while the agent starts, and a short command would
// pay for it; a long one pays once, a second in.
const gcResume = time.Second

// HoldGC turns the garbage collector off until gcResume after release is
// called, with a soft heap limit of setupHeapLimit (64 MiB) in its place: a
// sandbox's start allocates a few MiB once, and collecting it (a mark
// phase per 4 MiB on the critical path, with its assists and an extra
// thread) cost 5 to 30 ms of CPU per process here. The supervisor
// releases it when the agent has started, init after it forked the agent;
// a GOGC or GOMEMLIMIT the user set is restored then. release may be
// called more than once.
func HoldGC() (release func()) {
	limit := debug.SetMemoryLimit(-1)
	if limit > setupHeapLimit {
		debug.SetMemoryLimit(setupHeapLimit)
	}
	percent := debug.SetGCPercent(-1)
	var once sync.Once
	return func() {
		once.Do(func() {
			time.AfterFunc(gcResume, func() {
				debug.SetGCPercent(percent)
				debug.SetMemoryLimit(limit)
			})
		})
	}
}
