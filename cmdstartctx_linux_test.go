package jail_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/internal/proctest"
	"github.com/jail-sandbox/jail/policy"
)

// TestCmdContextEndsStart: a context that ends while Start waits for init
// to start the command (init stopped from the host) ends the wait: Start
// returns the context's error at once, and the command never runs, not even
// once init serves again, though it ignores SIGHUP: with the exec audit
// its exec is refused, without it it is killed as it starts. Seen failing on
// ae4c49f: Start ignored the context and waited out the supervisor's
// 15 s deadline, with the exec audit and without.
func TestCmdContextEndsStart(t *testing.T) {
	for _, noAudit := range []bool{false, true} {
		t.Run(fmt.Sprintf("no-exec-audit=%v", noAudit), func(t *testing.T) {
			p := policy.Default()
			p.NoExecAudit = noAudit
			sb, err := jail.Start(context.Background(), &p, jail.Options{})
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			defer sb.Close()
			in, err := sb.Inspect()
			if err != nil || in.InitPid <= 0 {
				t.Fatalf("Inspect: %v %+v", err, in)
			}
			resume := proctest.Hold(t, in.InitPid)
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			cmd := sb.CommandContext(ctx, "/bin/sh", "-c", `trap "" HUP INT TERM; sleep 0.5; echo ran > /tmp/ran; sleep 30`)
			start := time.Now()
			err = cmd.Start()
			took := time.Since(start)
			if !errors.Is(err, context.DeadlineExceeded) || took > 3*time.Second {
				t.Fatalf("Start with init stopped and a context of 500 ms: %v after %s, want the context's error at its end", err, took.Round(time.Millisecond))
			}
			resume()
			check := sb.Command("/bin/sh", "-c", "sleep 1; test ! -e /tmp/ran")
			if err := check.Run(); err != nil {
				t.Errorf("the command whose start was given up ran once init came back (%v)", err)
			}
			if in, err := sb.Inspect(); err != nil || in.Execs != 0 {
				t.Errorf("after the given-up start: %d commands run (%v)", in.Execs, err)
			}
			// The trail says what became of it: with the exec audit its
			// exec was refused; without, it was killed as it started.
			sb.Close()
			b, err := os.ReadFile(in.Audit)
			if err != nil {
				t.Fatal(err)
			}
			want := "given up by its client before its start was answered: not run"
			if noAudit {
				want = "given up by its client before its start was answered: killed"
			}
			if !strings.Contains(string(b), want) {
				t.Errorf("the trail does not say %q:\n%s", want, b)
			}
		})
	}
}
