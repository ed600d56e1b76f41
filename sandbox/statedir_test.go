package sandbox

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
)

// jail's state directory is masked wherever a visible path contains it,
// the directories between a writable root and it are pinned, and a bind
// naming it or a path in it is refused (issue 10, class 8).
func TestPlanStateDir(t *testing.T) {
	f := newFixture(t)
	f.mkdir(t, "xdg/state/jail/audit", "ro/state")
	xdgIn := filepath.Join(f.ws, "xdg", "state")
	tests := []struct {
		name   string
		env    []string
		mod    func(*policy.Policy)
		mask   string // "" = no mask expected
		pins   []string
		refuse string // substring of the error
	}{
		{"default, under the hidden HOME", nil, nil, "", nil, ""},
		{"XDG_STATE_HOME in the workspace", []string{"XDG_STATE_HOME=" + xdgIn}, nil,
			filepath.Join(xdgIn, "jail"), []string{filepath.Join(f.ws, "xdg"), xdgIn}, ""},
		{"HOME made writable", nil, func(p *policy.Policy) { p.Write, p.AllowWritableHome = []string{f.home}, true },
			filepath.Join(f.home, ".local", "state", "jail"), nil, ""},
		{"--read covers it", []string{"XDG_STATE_HOME=" + filepath.Join(f.ws, "ro", "state")}, func(p *policy.Policy) {
			p.ReadOnly = true
		}, filepath.Join(f.ws, "ro", "state", "jail"), nil, ""},
		{"XDG_STATE_HOME in the host root view", []string{"XDG_STATE_HOME=/var/lib/jail-test-nonexistent"}, nil,
			"/var/lib/jail-test-nonexistent/jail", nil, ""},
		{"--write names it", []string{"XDG_STATE_HOME=" + xdgIn}, func(p *policy.Policy) {
			p.Workspace, p.AllowWritableHome = f.home, true
			p.Write = []string{filepath.Join(xdgIn, "jail")}
		}, "", nil, `write "` + filepath.Join(xdgIn, "jail") + `": it is, or lies in, jail's state directory`},
		{"--read names a path in it", []string{"XDG_STATE_HOME=" + xdgIn}, func(p *policy.Policy) {
			p.Workspace, p.AllowWritableHome = f.home, true
			p.Read = []string{filepath.Join(xdgIn, "jail", "audit")}
		}, "", nil, `read "`},
		{"workspace inside it", []string{"XDG_STATE_HOME=" + xdgIn}, func(p *policy.Policy) {
			p.Workspace = filepath.Join(xdgIn, "jail", "audit")
		}, "", nil, "workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append(append([]string{}, f.env...), tt.env...)
			plan, err := BuildPlan(f.policy(tt.mod), env)
			if tt.refuse != "" {
				if err == nil || !errors.Is(err, policy.ErrInvalid) || !strings.Contains(err.Error(), tt.refuse) {
					t.Fatalf("BuildPlan: %v, want a refusal naming %q", err, tt.refuse)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var masks []string
			pins := map[string]bool{}
			for _, m := range plan.Mounts {
				if m.Kind == ns.KindMask && strings.Contains(m.Why, "state directory") {
					masks = append(masks, m.Path)
					if !m.Dir {
						t.Errorf("state dir mask is not a directory mask: %+v", m)
					}
				}
				if m.Kind == ns.KindPin {
					pins[m.Path] = true
				}
			}
			if tt.mask == "" {
				if len(masks) != 0 || plan.StateDirMasked {
					t.Errorf("unexpected state dir mask %v", masks)
				}
				return
			}
			if len(masks) != 1 || masks[0] != tt.mask || !plan.StateDirMasked || plan.StateDir != tt.mask {
				t.Errorf("state dir masks %v (plan %q, masked %v), want [%s]", masks, plan.StateDir, plan.StateDirMasked, tt.mask)
			}
			for _, p := range tt.pins {
				if !pins[p] {
					t.Errorf("%s is not pinned (pins %v)", p, pins)
				}
			}
		})
	}
}
