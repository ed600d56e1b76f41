package jail_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/policy"
)

// trail16: a command that ends at once (true) had its start and its end
// ready for the supervisor's loop at the same moment, whenever the loop
// came to them late (its own setup, a loaded machine); select took either,
// and taking the end first never told the starter the sandbox had
// started: Start returned "the sandbox ended before it was ready (exit
// 0)" for a run that started and exited 0 (TestStartRelativeAuditFile's
// flake under load). Seen failing on main (e4c1d18) under the load of
// three parallel test runs: some of 20 Starts failed so.
func TestStartShortCommandIsReady(t *testing.T) {
	base, err := os.MkdirTemp("", "jail-api-shortready")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	ws := filepath.Join(base, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		p := policy.Default()
		p.Cwd, p.Workspace = ws, ws
		p.AuditFile = filepath.Join(base, "trails", "t"+string(rune('a'+i))+".jsonl")
		p.Command = []string{"true"}
		sb, err := jail.Start(context.Background(), &p, jail.Options{LogPath: filepath.Join(base, "log")})
		if err != nil {
			t.Fatalf("Start %d of a command that ends at once: %v", i, err)
		}
		code, err := sb.Wait(context.Background())
		sb.Close()
		if err != nil || code != 0 {
			t.Fatalf("run %d: exit %d, %v", i, code, err)
		}
	}
}
