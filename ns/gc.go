package ns

import (
	"runtime/debug"
	"sync"
	"time"
)

// holdPercent is GOGC during the start (HoldGC): the first collection comes
// at a heap of 4 MiB x holdPercent/100 (the runtime's minimum goal), 16 MiB,
// which a sandbox's start (a few MiB allocated once) does not reach; a plan
// over a huge workspace (a cold walk of 280,000 files) collects every time
// its heap grows fivefold, amortized. The collector fully off with a soft
// memory limit instead made such a walk collect again and again once its
// live heap neared the limit (the cold walk's x4 became x8).
const holdPercent = 400

// gcResume is how long after release the collector resumes: turned on at
// once, it would collect the start's garbage at once (a full cycle, 10 to
// 35 ms of CPU here) while the agent starts, and a short command would
// pay for it; a long one pays once, a second in.
const gcResume = time.Second

// gcMu orders the changes of GOGC made after the start: HoldGC's resume and
// reportChild's window with the collector off.
var gcMu sync.Mutex

// HoldGC holds the garbage collector back until gcResume after release is
// called: GOGC is holdPercent (unless the user's is higher), so a start's
// few MiB of allocation runs no cycle (one, with its assists and an extra
// thread, cost 5 to 30 ms of CPU per process here) while a large plan
// still collects in proportion. The supervisor releases it when the agent
// has started, init after it forked the agent; the GOGC the user set is
// restored then. release may be called more than once.
func HoldGC() (release func()) {
	percent := debug.SetGCPercent(holdPercent)
	if percent < 0 || percent > holdPercent {
		debug.SetGCPercent(percent) // off, or already less eager: the user's
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			time.AfterFunc(gcResume, func() {
				gcMu.Lock() // not inside a collector-off window (reportChild)
				defer gcMu.Unlock()
				debug.SetGCPercent(percent)
			})
		})
	}
}
