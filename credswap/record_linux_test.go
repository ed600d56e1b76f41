package credswap

import (
	"os"
	"path/filepath"
	"testing"
)

// Recover settles only dead runs' records (unlocked), ignores entries that
// are not one of Files, and removes an unreadable record (said).
func TestRecoverRecords(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	p := filepath.Join(home, ".claude/.credentials.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	start := []byte(`{"claudeAiOauth":{"accessToken":"u","expiresAt":9000000000000}}`)
	if err := os.WriteFile(p, start, 0o600); err != nil {
		t.Fatal(err)
	}
	snaps := Take(home)
	live, err := Keep(dir, "live", snaps)
	if err != nil {
		t.Fatal(err)
	}
	evil := []byte(`{"claudeAiOauth":{"accessToken":"E","expiresAt":9000000000000}}`)
	if err := os.WriteFile(p, evil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := Recover(dir, "self"); len(got) != 0 {
		t.Fatalf("Recover settled a live run's record: %+v", got)
	}
	if b, _ := os.ReadFile(p); string(b) != string(evil) {
		t.Fatalf("a live run's file was put back: %s", b)
	}
	// The run dies: its lock goes with its descriptor.
	live.beat.Stop()
	live.f.Close()
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A record naming a file that is not a credential file: not written.
	other := filepath.Join(home, "notes")
	forged := `{"id":"f","snaps":[{"agent":"claude","path":"notes","kind":"claude","target":"` + other + `","data":"eA=="}]}`
	if err := os.WriteFile(filepath.Join(dir, "f.json"), []byte(forged), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := Recover(dir, "self")
	var errs, changes int
	for _, d := range got {
		if d.Err != nil {
			errs++
		}
		changes += len(d.Changes)
	}
	if errs != 1 || changes != 1 {
		t.Fatalf("Recover: %d errors, %d changes (%+v), want 1 and 1", errs, changes, got)
	}
	if b, _ := os.ReadFile(p); string(b) != string(start) {
		t.Errorf("the dead run's swap stayed: %s", b)
	}
	if b, _ := os.ReadFile(other); string(b) != "mine" {
		t.Errorf("a forged record's target was written: %s", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("records left: %v", left)
	}
}
