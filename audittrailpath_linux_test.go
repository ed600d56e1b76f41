package jail_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/policy"
)

// Adversarial: a relative AuditFile (the Go API's; the CLI makes --audit
// absolute) is opened against the policy's Cwd, but the trail's path was
// kept as given: the registry, Sandbox.TrailPath and Events, `jail ps` and
// `jail audit ID` then opened it against their own directory. From the
// workspace, that is a file the agent wrote. Seen failing on main (ad705ff
// + auditwalk): TrailPath "trails/t.jsonl", and Events, called from the
// workspace, read the agent's ws/trails/t.jsonl (a forged line) instead of
// the trail in Cwd/trails.
func TestStartRelativeAuditFile(t *testing.T) {
	base, err := os.MkdirTemp("", "jail-api-relaudit")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755) // the agent (uid 65534 when root starts it) enters the workspace
	ws := filepath.Join(base, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	p := policy.Default()
	p.Cwd, p.Workspace, p.AuditFile = base, ws, "trails/t.jsonl"
	// The agent plants ws/trails/t.jsonl: where the relative path leads
	// from the workspace.
	p.Command = []string{"sh", "-c", `mkdir -p trails && printf '%s\n' '{"ts":"2026-01-01T00:00:00.000000000Z","seq":1,"type":"start","prev":"` + audit.GenesisPrev + `","id":"FORGED"}' > trails/t.jsonl`}
	sb, err := jail.Start(context.Background(), &p, jail.Options{LogPath: filepath.Join(base, "log")})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer sb.Close()
	code, err := sb.Wait(context.Background())
	if out, _ := os.ReadFile(sb.LogPath()); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	if _, err := os.Stat(filepath.Join(ws, "trails", "t.jsonl")); err != nil {
		t.Fatalf("the agent's file is not there, the test cannot tell: %v", err)
	}
	want := filepath.Join(base, "trails", "t.jsonl")
	if got := sb.TrailPath(); got != want {
		t.Errorf("TrailPath() = %q, want %q (absolute: the one place the trail is)", got, want)
	}
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	if err := os.Chdir(ws); err != nil { // a caller in the workspace
		t.Fatal(err)
	}
	evs, err := sb.Events()
	if err != nil || len(evs) == 0 {
		t.Fatalf("Events from the workspace: %d, %v", len(evs), err)
	}
	for _, ev := range evs {
		if strings.Contains(string(ev.Raw), `"id":"FORGED"`) {
			t.Fatalf("ATTACK WORKED: Events read the agent's file, not the trail: %s", ev.Raw)
		}
	}
	if last := evs[len(evs)-1]; last.Type != audit.TypeExit {
		t.Errorf("Events' last event is %q, want the trail's exit", last.Type)
	}
}
