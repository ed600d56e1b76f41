package sandbox

import "time"

// MainStarted is when the process's main began (cmd/jail sets it): the
// origin of JAIL_TRACE's clock, so that the trace covers flags and config
// too.
var MainStarted time.Time
