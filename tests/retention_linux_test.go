package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Retention runs at most once an hour (a stamp in jail's state directory,
// which the sandbox cannot see): a stale trail put there just after a pass
// stays until the stamp is an hour old, then goes at the next start; new
// bounds apply at once.
func TestAuditRetentionInterval(t *testing.T) {
	env, dir := stateEnv(t)
	if out, code := jailOut(t, env, "--", "true"); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	stamp := filepath.Join(filepath.Dir(dir), "audit-retention") // beside audit/: it holds trails only
	if _, err := os.Stat(stamp); err != nil {
		t.Fatalf("no retention stamp after the first start: %v", err)
	}
	stale := func(name string) string {
		at := time.Now().Add(-90 * 24 * time.Hour)
		p := filepath.Join(dir, at.UTC().Format("20060102T150405Z")+"-"+name+".jsonl")
		if err := os.WriteFile(p, []byte(strings.Repeat("x", 100)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, at, at)
		return p
	}
	gone := func(p string) bool { _, err := os.Stat(p); return os.IsNotExist(err) }

	a := stale("stalea")
	if out, code := jailOut(t, env, "--", "true"); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if gone(a) {
		t.Errorf("retention ran again within the hour: %s removed", filepath.Base(a))
	}
	// An hour later (the stamp made older), the next start prunes.
	old := time.Now().Add(-61 * time.Minute)
	os.Chtimes(stamp, old, old)
	if out, code := jailOut(t, env, "--", "true"); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if !gone(a) {
		t.Errorf("stamp an hour old: %s still there", filepath.Base(a))
	}
	// Tightened bounds are not held back by a fresh stamp.
	b := stale("staleb")
	if out, code := jailOut(t, env, "--audit-max-age", "2000h", "--", "true"); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if !gone(b) {
		t.Errorf("new --audit-max-age: %s still there", filepath.Base(b))
	}
}
