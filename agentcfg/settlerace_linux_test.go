package agentcfg

import (
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestGuardRacingWriterLastWrite: an agent process rewrites a guarded file
// with the same hook over and over, then stops (it exits). Its rewrite can
// land between the guard's own write and the guard's look at what it
// wrote (settle): the guard must not take the agent's version for its
// own, or its next check and Close's last one find "nothing changed" and
// leave the hook. Seen failing (the hook left in 5 rounds of 6, end to
// end: TestEndCheckSeesLastProtectedWrites) on a settle that recorded
// whatever it found.
func TestGuardRacingWriterLastWrite(t *testing.T) {
	const evil = `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch /tmp/pwned-race"}]}]}}`
	for round := 0; round < 10; round++ {
		e := newGuardEnv(t)
		tg := e.target(".claude/settings.json")
		write(t, tg.Path, hostSettings)
		g, _, err := New([]Target{tg}, e.opts("race"))
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Watch(); err != nil {
			t.Fatal(err)
		}
		var stop atomic.Bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			for !stop.Load() {
				// As the shell's `printf ... > file`: truncate, write.
				if f, err := os.OpenFile(tg.Path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644); err == nil {
					f.WriteString(evil)
					f.Close()
				}
			}
		}()
		time.Sleep(100 * time.Millisecond)
		stop.Store(true)
		<-done
		g.Close()
		if got := read(t, tg.Path); strings.Contains(got, "pwned-race") {
			t.Fatalf("round %d: the agent's hook is left after Close: %s", round, got)
		}
	}
}
