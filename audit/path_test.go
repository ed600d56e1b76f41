package audit

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestDefaultPath(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 8, time.FixedZone("X", 3600))
	tests := []struct {
		name, dir, id, want string
		err                 error
	}{
		{"plain", "/x/state/jail/audit", "ab12", "/x/state/jail/audit/20260304T040607Z-ab12.jsonl", nil},
		{"relative dir", "rel/audit", "ab12", "", nil},
		{"id with slash", "/x", "../../etc/x", "", ErrBadID},
		{"dot id", "/x", ".hidden", "", ErrBadID},
		{"empty id", "/x", "", "", ErrBadID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DefaultPath(tt.dir, now, tt.id)
			if tt.want == "" && tt.err == nil && err == nil {
				t.Errorf("DefaultPath(%q) = %q, want an error", tt.dir, got)
			}
			if got != tt.want || (tt.err != nil && !errors.Is(err, tt.err)) {
				t.Errorf("DefaultPath = %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
		})
	}
	if id := NewID(); !validID(id) || len(id) != 12 || id == NewID() {
		t.Errorf("NewID = %q", id)
	}
}

// Adversarial: the trail inside a writable path is refused, also through a
// symlinked directory and for a file not yet created.
func TestCheckPlacement(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "work")
	os.MkdirAll(filepath.Join(ws, "sub"), 0o755)
	outside := filepath.Join(root, "state")
	os.MkdirAll(outside, 0o700)
	link := filepath.Join(outside, "ln")
	os.Symlink(ws, link)
	tests := []struct {
		name, path string
		bad        bool
	}{
		{"outside", filepath.Join(outside, "a.jsonl"), false},
		{"sibling with common prefix", filepath.Join(root, "workx", "a.jsonl"), false},
		{"inside", filepath.Join(ws, "a.jsonl"), true},
		{"deep and not yet created", filepath.Join(ws, "sub", "new", "a.jsonl"), true},
		{"via symlink", filepath.Join(link, "a.jsonl"), true},
		{"dotdot", filepath.Join(ws, "sub", "..", "a.jsonl"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPlacement(tt.path, []string{"/nonexistent/other", ws}, nil)
			if errors.Is(err, ErrWritableBySandbox) != tt.bad {
				t.Errorf("CheckPlacement(%s) = %v, want bad=%v", tt.path, err, tt.bad)
			}
		})
	}
	if err := CheckPlacement(filepath.Join(outside, "a"), []string{"/"}, nil); !errors.Is(err, ErrWritableBySandbox) {
		t.Errorf("writable / not caught: %v", err)
	}
	// Inside a writable path but under a directory the sandbox cannot reach
	// (jail's masked state directory): fine. Next to it: still refused.
	hidden := filepath.Join(ws, "state", "jail")
	if err := CheckPlacement(filepath.Join(hidden, "audit", "a.jsonl"), []string{ws}, []string{hidden}); err != nil {
		t.Errorf("trail in a masked directory refused: %v", err)
	}
	if err := CheckPlacement(filepath.Join(ws, "state", "jailx", "a.jsonl"), []string{ws}, []string{hidden}); !errors.Is(err, ErrWritableBySandbox) {
		t.Errorf("trail beside the masked directory not caught: %v", err)
	}
}
