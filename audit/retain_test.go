package audit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mkTrail writes a default-named trail of size bytes, last written at mod.
func mkTrail(t *testing.T, dir string, start time.Time, id string, size int, mod time.Time) string {
	t.Helper()
	p, err := DefaultPath(dir, start, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Repeat("x", size)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mod, mod); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLatestAndFindID(t *testing.T) {
	dir := t.TempDir()
	if _, err := Latest(dir); !errors.Is(err, ErrNoTrail) {
		t.Fatalf("empty dir: %v", err)
	}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	a := mkTrail(t, dir, now.Add(-2*time.Hour), "aaaa11112222", 10, now)
	b := mkTrail(t, dir, now.Add(-1*time.Hour), "aaaa33334444", 10, now.Add(-3*time.Hour)) // written long ago, started later
	os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600)
	os.WriteFile(filepath.Join(dir, "29991231T000000Z-zz.jsonl.tmp"), nil, 0o600)
	if got, _ := Latest(dir); got != b {
		t.Fatalf("Latest = %s, want %s (the latest start)", got, b)
	}
	for _, tc := range []struct {
		id, want string
		ok       bool
	}{
		{"aaaa11112222", a, true},
		{"aaaa3333", b, true},
		{"aaaa", "", false}, // ambiguous
		{"aaa", "", false},  // too short for a prefix
		{"../x", "", false},
		{"ffff", "", false},
	} {
		got, err := FindID(dir, tc.id)
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("FindID(%q) = %q, %v", tc.id, got, err)
		}
	}
}

func TestPrune(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	setup := func(t *testing.T) (string, []string) {
		dir := t.TempDir()
		var ps []string
		for i := 0; i < 5; i++ { // 40, 30, 20, 10, 0 days old; 100 bytes each
			at := now.Add(-time.Duration(40-10*i) * day)
			ps = append(ps, mkTrail(t, dir, at, "id"+string(rune('a'+i)), 100, at))
		}
		return dir, ps
	}
	left := func(dir string) int { ts, _ := ListDir(dir); return len(ts) }

	t.Run("age", func(t *testing.T) {
		dir, ps := setup(t)
		rm, err := Prune(dir, Retention{MaxAge: 25 * day}, now, nil)
		if err != nil || len(rm) != 2 || rm[0] != ps[0] || rm[1] != ps[1] {
			t.Fatalf("removed %v, %v", rm, err)
		}
	})
	t.Run("total", func(t *testing.T) {
		dir, ps := setup(t)
		rm, _ := Prune(dir, Retention{MaxTotal: 250}, now, nil)
		if len(rm) != 3 || rm[0] != ps[0] || left(dir) != 2 {
			t.Fatalf("removed %v", rm)
		}
	})
	t.Run("keep and newest", func(t *testing.T) {
		dir, ps := setup(t)
		rm, _ := Prune(dir, Retention{MaxAge: time.Nanosecond, MaxTotal: 1}, now, []string{ps[1]})
		if len(rm) != 3 || left(dir) != 2 {
			t.Fatalf("removed %v", rm)
		}
		for _, p := range []string{ps[1], ps[4]} {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s was removed: %v", p, err)
			}
		}
	})
	t.Run("live writer", func(t *testing.T) {
		dir, _ := setup(t)
		// An old trail still being written: its writer's lock keeps it.
		p, _ := DefaultPath(dir, now.Add(-100*day), "livewriter")
		w, err := Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		w.Record(Exit{Code: 0, Reason: "exited"})
		w.Sync()
		os.Chtimes(p, now.Add(-100*day), now.Add(-100*day))
		rm, _ := Prune(dir, Retention{MaxAge: day, MaxTotal: 1}, now, nil)
		for _, r := range rm {
			if r == p {
				t.Fatal("removed a trail its writer still holds")
			}
		}
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
		if len(rm) != 4 {
			t.Fatalf("removed %d, want 4 (all but the live and the newest)", len(rm))
		}
		w.Close()
		if rm, _ := Prune(dir, Retention{MaxAge: day}, now, nil); len(rm) != 1 || rm[0] != p {
			t.Fatalf("after its writer closed: removed %v", rm)
		}
	})
	t.Run("none", func(t *testing.T) {
		dir, _ := setup(t)
		if rm, _ := Prune(dir, Retention{}, now, nil); len(rm) != 0 {
			t.Fatalf("zero retention removed %v", rm)
		}
		if rm, err := Prune(filepath.Join(dir, "missing"), Retention{MaxAge: 1}, now, nil); rm != nil || err != nil {
			t.Fatalf("missing dir: %v %v", rm, err)
		}
	})
}

// Retention runs at most once per interval: the stamp a prune leaves
// makes the next starts skip it, until the interval has passed, the
// stamp is from the future, or the bounds asked for have changed.
func TestPruneDue(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	r := Retention{MaxAge: 30 * 24 * time.Hour, MaxTotal: 1 << 30}
	stamp := filepath.Join(t.TempDir(), "audit-retention")
	if !PruneDue(stamp, r, now, time.Hour) {
		t.Fatal("no stamp yet: due")
	}
	if err := MarkPruned(stamp, r, now); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		r    Retention
		at   time.Time
		due  bool
	}{
		{"just pruned", r, now, false},
		{"within the interval", r, now.Add(59 * time.Minute), false},
		{"interval passed", r, now.Add(61 * time.Minute), true},
		{"stamp from the future", r, now.Add(-2 * time.Minute), true},
		{"another max-age", Retention{MaxAge: time.Hour, MaxTotal: r.MaxTotal}, now.Add(time.Minute), true},
		{"another max-total", Retention{MaxAge: r.MaxAge, MaxTotal: 1}, now.Add(time.Minute), true},
	} {
		if got := PruneDue(stamp, tc.r, tc.at, time.Hour); got != tc.due {
			t.Errorf("%s: due=%v, want %v", tc.name, got, tc.due)
		}
	}
	// A symlink planted at the stamp's name is not a stamp, and is
	// replaced, not written through.
	d2 := t.TempDir()
	s2 := filepath.Join(d2, "audit-retention")
	target := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(target, []byte("keep"), 0o600)
	os.Symlink(target, s2)
	if !PruneDue(s2, r, now, time.Hour) {
		t.Error("a symlink is not a stamp: due")
	}
	if err := MarkPruned(s2, r, now); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("symlink target written: %q", b)
	}
	if fi, err := os.Lstat(s2); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("stamp after MarkPruned over a symlink: %v %v", fi, err)
	}
	if PruneDue(s2, r, now, time.Hour) {
		t.Error("just stamped: not due")
	}
	if ents, _ := os.ReadDir(d2); len(ents) != 1 {
		t.Errorf("MarkPruned left %d entries beside the stamp, want none", len(ents)-1)
	}
}
