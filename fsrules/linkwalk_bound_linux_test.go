package fsrules

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestLinkedSocketsBounded: a directory of many names is read only up to
// the bound, and the walk says it stopped (the far socket search's
// entries bound: an agent's huge directory must not slow every start).
func TestLinkedSocketsBounded(t *testing.T) {
	d := t.TempDir()
	sub := filepath.Join(d, "a")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		if err := os.WriteFile(filepath.Join(sub, "f"+strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		max      int
		wantOver bool
	}{{0, false}, {1000, false}, {50, true}, {1, true}} {
		n, over := LinkedSocketsBounded(d, nil, true, tc.max, func(string, uint64, uint64) {})
		if over != tc.wantOver {
			t.Errorf("max %d: over %v, want %v", tc.max, over, tc.wantOver)
		}
		if tc.max > 0 && n > tc.max+1 {
			t.Errorf("max %d: read %d entries, past the bound", tc.max, n)
		}
		if tc.max == 0 && n != 502 {
			t.Errorf("no bound: read %d entries, want 502", n)
		}
	}
}
