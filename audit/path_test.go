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

// Adversarial: a name on the trail's path that the sandbox can write can
// be changed by the agent after the check. A symlink in the workspace that
// leads out of it (ws/out -> outside): the trail is written outside, then
// the agent points ws/out at a copy of its own making in the workspace,
// and `jail audit --verify ws/out/t.jsonl` checks the forgery. A ".." out
// of a workspace directory (ws/sub/../../outside): the agent swaps ws/sub
// for a link and chooses where the ".." leads. And a ".." after a link is
// the link target's parent, not text to clean: outside/ln/../t.jsonl with
// ln -> ws/sub is ws/t.jsonl. Seen failing on main's CheckPlacement (all
// three accepted: it cleaned the path as text and looked only where the
// path led).
func TestCheckPlacementOnTheWay(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "work")
	outside := filepath.Join(root, "state")
	for _, d := range []string{filepath.Join(ws, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for l, target := range map[string]string{
		filepath.Join(ws, "out"):     outside,
		filepath.Join(outside, "ln"): filepath.Join(ws, "sub"),
		filepath.Join(outside, "me"): outside,
	} {
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name, path string
		bad        bool
	}{
		{"a link in the workspace leading out", filepath.Join(ws, "out", "t.jsonl"), true},
		{"a link in the workspace, to a directory to be made", filepath.Join(ws, "out", "new", "t.jsonl"), true},
		{"dotdot out of a workspace directory", ws + "/sub/../../state/t.jsonl", true},
		{"dotdot after a link into the workspace", outside + "/ln/../t.jsonl", true},
		{"a link outside leading outside", filepath.Join(outside, "me", "t.jsonl"), false},
		{"dotdot after a link outside, staying outside", outside + "/me/../state/t.jsonl", false},
	} {
		err := CheckPlacement(tt.path, []string{ws}, nil)
		if errors.Is(err, ErrWritableBySandbox) != tt.bad {
			t.Errorf("%s: CheckPlacement(%s) = %v, want refused=%v", tt.name, tt.path, err, tt.bad)
		}
	}
}
