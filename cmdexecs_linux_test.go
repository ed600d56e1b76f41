package jail_test

import (
	"context"
	"testing"

	"github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/policy"
)

// TestCmdDoneNotRunning: once Run has returned, the sandbox no longer
// counts the command among those running (Inspect's Execs, jail ps): the
// supervisor took it off before it told the client it exited. It sent the
// exit first and took the command off after, so an Inspect right after Run
// could count a command that had ended (seen in CI: a flaky
// TestCmdContextEndsStart, "1 commands run", as jailtest).
func TestCmdDoneNotRunning(t *testing.T) {
	p := policy.Default()
	sb, err := jail.Start(context.Background(), &p, jail.Options{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer sb.Close()
	for i := 0; i < 200; i++ {
		if err := sb.Command("/bin/true").Run(); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		in, err := sb.Inspect()
		if err != nil {
			t.Fatalf("Inspect: %v", err)
		}
		if in.Execs != 0 {
			t.Fatalf("run %d: Run returned, yet %d commands counted running", i, in.Execs)
		}
	}
}
