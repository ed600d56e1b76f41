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
		name, xdg, home, id, want string
		err                       error
	}{
		{"xdg", "/x/state", "/home/u", "ab12", "/x/state/jail/audit/20260304T040607Z-ab12.jsonl", nil},
		{"home fallback", "", "/home/u", "ab12", "/home/u/.local/state/jail/audit/20260304T040607Z-ab12.jsonl", nil},
		{"relative xdg ignored", "rel/state", "/home/u", "ab12", "/home/u/.local/state/jail/audit/20260304T040607Z-ab12.jsonl", nil},
		{"no home", "", "", "ab12", "", ErrNoStateDir},
		{"id with slash", "/x", "/h", "../../etc/x", "", ErrBadID},
		{"dot id", "/x", "/h", ".hidden", "", ErrBadID},
		{"empty id", "/x", "/h", "", "", ErrBadID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", tt.xdg)
			t.Setenv("HOME", tt.home)
			got, err := DefaultPath(now, tt.id)
			if got != tt.want || !errors.Is(err, tt.err) {
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
			err := CheckPlacement(tt.path, []string{"/nonexistent/other", ws})
			if errors.Is(err, ErrWritableBySandbox) != tt.bad {
				t.Errorf("CheckPlacement(%s) = %v, want bad=%v", tt.path, err, tt.bad)
			}
		})
	}
	if err := CheckPlacement(filepath.Join(outside, "a"), []string{"/"}); !errors.Is(err, ErrWritableBySandbox) {
		t.Errorf("writable / not caught: %v", err)
	}
}
