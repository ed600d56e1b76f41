package agentcfg

import (
	"os"
	"sync"
	"testing"
)

// TestStopWatchingLeavesTheLastCheck: the watch stopped ahead of Close
// (beside other work, twice and concurrently with Close) no longer reacts,
// and Close still checks every target: what the agent changed after the
// watch stopped is put back, and the record is removed. Seen failing with
// Close skipping its checks once the watch was stopped.
func TestStopWatchingLeavesTheLastCheck(t *testing.T) {
	e := newGuardEnv(t)
	tg := e.target(".claude/settings.json")
	write(t, tg.Path, hostSettings)
	g, _, err := New([]Target{tg}, e.opts("sw"))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Watch(); err != nil {
		t.Fatal(err)
	}
	g.StopWatching()
	write(t, tg.Path, `{"model": "b", "hooks": {}}`)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); g.StopWatching() }()
	go func() { defer wg.Done(); g.Close() }()
	wg.Wait()
	want := `{"model": "b", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}`
	if got := read(t, tg.Path); got != want {
		t.Fatalf("after Close: %q, want %q (events %+v)", got, want, e.evs())
	}
	if g.record != "" {
		if _, err := os.Stat(g.record); !os.IsNotExist(err) {
			t.Fatalf("record %s left after Close: %v", g.record, err)
		}
	}
}
