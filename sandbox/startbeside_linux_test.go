package sandbox

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/policy"
)

// The start event is written beside the go (recordStartBeside): init's
// report does not wait for the start event's policy, still being made on
// the spare goroutine (under an agent's profile it was not ready in 6
// starts of 10, and the go waited 1-5 ms for it). What the run records
// meanwhile is held and follows the start event in order, and the end's
// recordStart returns only once the event is written, so the exit event
// is the trail's last line. Seen failing with handleFiles' recordStart as
// it was (the report waited for the policy), and with the end's
// recordStart not waiting (the exit held behind a start never written).
func TestStartWrittenBesideTheGo(t *testing.T) {
	pc := make(chan any, 1)
	r := &runner{pol: &policy.Policy{}, plan: &Plan{}, id: "beside", startPolicy: pc}
	path, w := testTrail(t, r)

	said := make(chan struct{})
	go func() {
		r.recordStartBeside(map[string]string{"landlock.abi": "7"})
		close(said)
	}()
	select {
	case <-said:
	case <-time.After(5 * time.Second):
		t.Fatal("init's report waited for the start event's policy: the go comes only once it is made")
	}
	// The agent runs: its exec (the exec server's, recordRun) and a
	// refusal come before the start event is written.
	r.recordRun(audit.Exec{PID: 2, Path: "/bin/true", Argv: []string{"true"}, Decision: audit.DecisionAllow})
	r.record(audit.Deny{Layer: "guard-rail", What: "exec", Target: "/tmp/x", Reason: "blocked"})
	go func() {
		time.Sleep(100 * time.Millisecond)
		pc <- audit.PrepareMarshalled([]byte(`{"policy":{"net":"none"}}`))
	}()
	// The end: what it records comes after the start event.
	r.recordStart(nil)
	r.mu.Lock()
	in := r.startRecorded
	r.mu.Unlock()
	if !in {
		t.Fatal("the end's recordStart returned before the start event was written")
	}
	r.record(audit.Exit{Code: 0, Reason: "exited"})
	data := closedTrail(t, w, path)
	var types []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev struct {
			Type   string          `json:"type"`
			Policy json.RawMessage `json:"policy"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		types = append(types, ev.Type)
		if ev.Type == "start" && string(ev.Policy) != `{"policy":{"net":"none"}}` {
			t.Errorf("the start event's policy: %s", ev.Policy)
		}
	}
	if got := strings.Join(types, " "); !strings.HasPrefix(got, "start exec deny") || !strings.HasSuffix(got, "exit") {
		t.Errorf("the trail's events: %s; want start, exec, deny, ..., exit", got)
	}
	if _, err := audit.Verify(strings.NewReader(string(data))); err != nil {
		t.Errorf("the trail does not verify: %v", err)
	}
}
