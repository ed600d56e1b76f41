package sandbox

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/netproxy"
	"github.com/jail-sandbox/jail/notice"
	"github.com/jail-sandbox/jail/policy"
)

// testTrail gives r a trail of the smallest size in a temporary file, and
// quiet notices recorded in it: the trail's path and its writer.
func testTrail(t *testing.T, r *runner) (string, *audit.Writer) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trail.jsonl")
	w, err := audit.CreateOptions(path, audit.Options{MaxBytes: policy.MinAuditMaxSize})
	if err != nil {
		t.Fatal(err)
	}
	r.trail = w
	r.notes = notice.New(io.Discard, notice.Options{Quiet: true, Record: r.recordNotice})
	return path, w
}

// closedTrail closes the trail w writes at path and returns its bytes.
func closedTrail(t *testing.T, w *audit.Writer, path string) []byte {
	t.Helper()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// trail17: Ending is marked when the exit check starts (endCheck), while
// the servers are still shutting down (stopServers waits for them in the
// background): a refusal the egress proxy decides after that -- a
// connection the agent opened and sent its request on just before it
// exited, read from the socket's buffer -- was recorded as an end event,
// and its notice took the end room's notice part. An agent that kept its
// 20 refusal notices for the end (refused nothing while it ran) filled
// that part with them, and jail's own end lines (the exit check's "moved
// ... out of the tree") were counted, not written. What the run's servers
// record stays the run's: it never reaches the end's room. Seen failing
// on main's code: 2 of the 6 end notices written.
func TestLateRefusalsKeepOutOfTheEndRoom(t *testing.T) {
	r := &runner{pol: &policy.Policy{}, startRecorded: true}
	path, w := testTrail(t, r)
	r.record(audit.Start{Schema: audit.SchemaVersion, ID: "late"})
	// The agent spends every part of the budget it reaches while it runs.
	for i := 0; w.Stats().Budget == 0; i++ {
		r.record(audit.Exec{PID: i, Path: "/bin/true", Argv: []string{"true"}, Decision: audit.DecisionAllow})
	}
	for i := range 3000 {
		r.record(audit.Deny{Layer: "guard-rail", What: "exec", Target: fmt.Sprintf("/tmp/x%d", i), Reason: "blocked"})
		r.record(audit.Quarantine{Phase: "run", Path: fmt.Sprintf("/w/r%d/.envrc", i), Rule: "absent", Reason: "loaded by direnv", Action: "moved"})
		r.record(audit.Signal{Signal: "SIGCONT", Number: 18, From: "supervisor", To: "agent"})
		r.record(audit.Unmasked{Path: fmt.Sprintf("/run/user/1/s%d", i), Kind: "mask", Rule: "socket", How: "deleted", Action: "reported"})
	}
	r.trailEnding()
	// The proxy's late refusals, each of a name of its own (the notices'
	// first 20 of a kind are said).
	for i := range 30 {
		r.recordNet(netproxy.Event{Type: "tcp", Decision: "deny", Name: fmt.Sprintf("exfil-%02d.attacker.example", i), Port: 443,
			Reason: "not in the allowlist: a name the agent chose to make this notice as long as it can be"})
	}
	// The exit check's own lines.
	var want []string
	for i := range 6 {
		p := fmt.Sprintf("/w/proj/sub%d/.envrc", i)
		r.record(audit.Quarantine{Phase: "exit", Path: p, Rule: "absent", Reason: "left by the agent", Action: "moved"})
		r.notef("moved %s out of the tree: left by the agent", p)
		want = append(want, "moved "+p)
	}
	r.record(audit.Exit{Code: 0, Reason: "exited"})
	data := closedTrail(t, w, path)
	n := 0
	for _, s := range want {
		if bytes.Contains(data, []byte(s)) {
			n++
		}
	}
	if n != len(want) {
		t.Errorf("ATTACK WORKED: %d of %d end notices written after late refusals (%d net-refused notices in the trail)",
			n, len(want), bytes.Count(data, []byte(`"kind":"net-refused"`)))
	}
}
