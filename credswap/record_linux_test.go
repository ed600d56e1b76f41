package credswap

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
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

// TestRecoverRemovesStaleTmp: the ID.json.tmp of a start killed between
// its write and its rename (a copy of the user's credential files) goes at
// the next Recover once stale and unlocked; a fresh one (a start writing
// now) and a locked one stay.
func TestRecoverRemovesStaleTmp(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * staleTmp)
	stale := filepath.Join(dir, "dead.json.tmp")
	fresh := filepath.Join(dir, "new.json.tmp")
	locked := filepath.Join(dir, "live.json.tmp")
	for _, p := range []string{stale, fresh, locked} {
		if err := os.WriteFile(p, []byte(`{"snaps":[]}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.Chtimes(stale, old, old)
	os.Chtimes(locked, old, old)
	f, err := os.Open(locked)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	Recover(dir, "self")
	if _, err := os.Lstat(stale); err == nil {
		t.Errorf("%s left behind", stale)
	}
	for _, p := range []string{fresh, locked} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}
