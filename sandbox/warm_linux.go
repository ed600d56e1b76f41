package sandbox

import (
	"encoding/json"
	"time"

	"github.com/jail-sandbox/jail/agentcfg"
	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/gitguard"
	"github.com/jail-sandbox/jail/procstat"
	"github.com/jail-sandbox/jail/sentinel"
)

// warmWalls makes, once the plan is known and while init waits for its
// spec (a core is then idle), what the walls and the start event would
// otherwise make at their first use, on the path from the spec to the go:
// encoding/json's encoders of the agent-config guard's record, the
// sentinel's run record, the registry entry and the start event (built by
// reflection over their types, once per process: 1-3 ms together; none
// of them with the generated encoders, package jsongen), the
// local time zone (the run record's and the registry entry's start time:
// a read and parse of /etc/localtime) and this process's start tick (a
// read of /proc/self/stat). Only caches of the process are filled, each
// safe to fill from any goroutine; a wall that comes first builds what it
// needs itself, as before (encoding/json makes each encoder once, the
// others wait for it).
func warmWalls() {
	agentcfg.Warm()
	if runRecordEncoder == nil || entryEncoder == nil { // without zjson_linux.go
		_, _ = json.Marshal(runRecord{Absent: []sentinel.Absent{{}}, Guard: &gitguard.Guard{}})
		_, _ = json.Marshal(Entry{})
	}
	audit.WarmEvents()
	_, _ = time.Now().Zone()
	procstat.SelfStartTick()
}
