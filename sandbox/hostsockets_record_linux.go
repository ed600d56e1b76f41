package sandbox

import "github.com/jail-sandbox/jail/procstat"

// processLive reports whether the start pid, tick names still runs (its
// supervisor: a writer of the far-socket record).
func processLive(pid int, tick uint64) bool { return supervisorAlive(pid, tick) }

func selfStartTick() uint64 { return procstat.SelfStartTick() }
