package sandbox

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/policy"
)

// TestPlanRefusesOwnPlaces: a workspace, read, write or cache path at or
// below /dev, /proc or /sys (init's own), a read of the root, and a HOME
// there are refused when the plan is made, by one FieldError naming the
// option and the value as given: before, the start failed in init ("bind
// /etc/shadow: no such file or directory", "idmapped mount of /dev:
// invalid argument", "readdirent /proc/...") or went on with a bind that
// init's /proc or /sys covered. Seen failing on main (BuildPlan returned a
// plan for each) before refuseOwnPlaces.
func TestPlanRefusesOwnPlaces(t *testing.T) {
	f := newFixture(t)
	for _, tt := range []struct {
		name     string
		mod      func(p *policy.Policy)
		home     string
		key, val string
	}{
		{"read /dev", func(p *policy.Policy) { p.Read = []string{"/dev"} }, "", "read", "/dev"},
		{"write /dev", func(p *policy.Policy) { p.Write = []string{"/dev"} }, "", "write", "/dev"},
		{"read /dev/null", func(p *policy.Policy) { p.Read = []string{"/dev/null"} }, "", "read", "/dev/null"},
		{"read /proc/self (a link)", func(p *policy.Policy) { p.Read = []string{"/proc/self"} }, "", "read", "/proc/self"},
		{"read /sys", func(p *policy.Policy) { p.Read = []string{"/sys"} }, "", "read", "/sys"},
		{"read /", func(p *policy.Policy) { p.Read = []string{"/"} }, "", "read", "/"},
		{"workspace /proc", func(p *policy.Policy) { p.Workspace = "/proc" }, "", "workspace", "/proc"},
		{"workspace / read-only", func(p *policy.Policy) { p.Workspace, p.ReadOnly = "/", true }, "", "workspace", "/"},
		{"cache /dev/x", func(p *policy.Policy) { p.Cache = []string{"/dev/x"}; p.DryRun = true }, "", "cache", "/dev/x"},
		{"cache /sys/x", func(p *policy.Policy) { p.Cache = []string{"x:/sys/x"}; p.DryRun = true }, "", "cache", "x:/sys/x"},
		{"HOME /dev", nil, "/dev", "HOME", "/dev"},
	} {
		env := f.env
		if tt.home != "" {
			env = slices.Clone(f.env)
			env[slices.Index(env, "HOME="+f.home)] = "HOME=" + tt.home
		}
		_, err := BuildPlan(f.policy(tt.mod), env)
		var fe *policy.FieldError
		if !errors.As(err, &fe) || !errors.Is(err, policy.ErrInvalid) {
			t.Errorf("%s: %v, want a FieldError", tt.name, err)
			continue
		}
		if fe.Key != tt.key || fe.Value != tt.val || !strings.Contains(fe.Reason, "nothing can be bound") && !strings.Contains(fe.Reason, "cannot be at or below") || strings.Contains(fe.Error(), "\n") {
			t.Errorf("%s: %q, want %s %q and why", tt.name, fe, tt.key, tt.val)
		}
	}
}

// TestOwnPlacesDegradedAndNeighbours: degraded mode (no mount namespace:
// the paths become Landlock rules) keeps them, and a path that only
// begins like one of init's places is not refused.
func TestOwnPlacesDegradedAndNeighbours(t *testing.T) {
	f := newFixture(t)
	p := f.policy(func(p *policy.Policy) { p.Read = []string{"/dev/null"} })
	if _, err := planChecked(p, f.env, nil, nil, true); err != nil {
		t.Errorf("degraded plan with read /dev/null: %v", err)
	}
	if _, err := BuildPlan(p, f.env); err == nil {
		t.Errorf("the same plan with namespaces was not refused")
	}
	for _, path := range []string{"/devices", "/dev-x/y", "/procfs", "/system", "/sysroot/dev", "/usr/proc"} {
		if _, ok := ownPlace(path); ok {
			t.Errorf("%s taken for one of init's places", path)
		}
	}
	for _, path := range []string{"/dev", "/dev/shm/x", "/proc", "/proc/1/root", "/sys", "/sys/fs/cgroup"} {
		if _, ok := ownPlace(path); !ok {
			t.Errorf("%s not taken for one of init's places", path)
		}
	}
}
