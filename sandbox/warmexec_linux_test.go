package sandbox

import (
	"testing"

	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/seccomp"
)

// The exec answer's warm-up runs the answer's steps over the supervisor's
// own process, off the start's path: it must record nothing (no exec event
// for a command nobody ran) and refuse nothing.
func TestWarmExecAnswerRecordsNothing(t *testing.T) {
	g, err := seccomp.NewGuard(nil, true, "/work", "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{pol: &policy.Policy{}, guard: g}
	r.warmExecAnswer()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.early) != 0 {
		t.Fatalf("the warm-up recorded %d events: %+v", len(r.early), r.early)
	}
}
