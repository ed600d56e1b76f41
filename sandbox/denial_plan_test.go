package sandbox

import (
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/denials"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
)

// TestPlanDenialRecord: every plan on a host with /run carries the record
// of denials as the last mount (after the /run tmpfs it lives in) and names
// it in $JAIL_DENIALS, overriding a value the user set.
func TestPlanDenialRecord(t *testing.T) {
	f := newFixture(t)
	p := f.policy(func(p *policy.Policy) { p.SetEnv = []string{denials.Env + "=/tmp/fake"} })
	plan, err := BuildPlan(p, f.env)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(plan.Mounts, func(m ns.Mount) bool { return m.Kind == ns.KindRecord })
	if i < 0 {
		t.Fatalf("no record mount: %+v (notes %q)", plan.Mounts, plan.Notes)
	}
	m := plan.Mounts[i]
	run := slices.IndexFunc(plan.Mounts, func(m ns.Mount) bool { return m.Path == "/run" && m.Kind == ns.KindTmpfs })
	if m.Path != denials.Dir || m.File != denials.File || m.Size < denials.DefaultBudget || run < 0 || run > i {
		t.Errorf("record mount %+v at %d, /run tmpfs at %d", m, i, run)
	}
	var vals []string
	for _, kv := range plan.Env {
		if v, ok := strings.CutPrefix(kv, denials.Env+"="); ok {
			vals = append(vals, v)
		}
	}
	if !slices.Equal(vals, []string{denials.Path}) {
		t.Errorf("%s in the plan's environment: %q, want only %s", denials.Env, vals, denials.Path)
	}
}

// TestDenialRecordConflict: a plan mount at or under /run/jail, or no /run
// tmpfs at all, means no record (and a note), never a mount over the user's.
func TestDenialRecordConflict(t *testing.T) {
	run := ns.Mount{Kind: ns.KindTmpfs, Path: "/run", Dir: true}
	for _, tt := range []struct {
		name   string
		mounts []ns.Mount
		ok     bool
	}{
		{"plain", []ns.Mount{run}, true},
		{"no /run tmpfs", nil, false},
		{"a bind at /run/jail", []ns.Mount{run, {Kind: ns.KindBind, Path: "/run/jail"}}, false},
		{"a bind under /run/jail", []ns.Mount{run, {Kind: ns.KindROBind, Path: "/run/jail/x"}}, false},
		{"a bind elsewhere in /run", []ns.Mount{run, {Kind: ns.KindBind, Path: "/run/user/1000"}}, true},
		// A read or write path at /run itself covers the private tmpfs:
		// init's mkdir of /run/jail failed the start on the host's tree.
		{"a read path at /run", []ns.Mount{run, {Kind: ns.KindROBind, Path: "/run"}}, false},
		{"a write path at /run", []ns.Mount{run, {Kind: ns.KindBind, Path: "/run"}}, false},
	} {
		m, why := denialRecord(tt.mounts)
		if (m != nil) != tt.ok || (m == nil) == (why == "") {
			t.Errorf("%s: mount %+v, why %q", tt.name, m, why)
		}
	}
}

// TestPlanConnectPorts: with --no-local-tcp, Landlock keeps TCP closed under
// --net none except jail's refusal ports; otherwise (the default) it has
// no TCP rule.
func TestPlanConnectPorts(t *testing.T) {
	f := newFixture(t)
	for _, tt := range []struct {
		name string
		mod  func(p *policy.Policy)
		deny bool
		want []uint16
	}{
		{"none with --no-local-tcp", func(p *policy.Policy) { p.Net, p.NoLocalTCP = policy.NetNone, true }, true, []uint16{80, 443, 22}},
		{"none", func(p *policy.Policy) { p.Net = policy.NetNone }, false, nil},
		{"none with --allow-local-tcp", func(p *policy.Policy) { p.Net, p.AllowLocalTCP = policy.NetNone, true }, false, nil},
		{"allow", func(p *policy.Policy) { p.Net, p.AllowDomain = policy.NetAllow, []string{"a.example"} }, false, nil},
	} {
		plan, err := BuildPlan(f.policy(tt.mod), f.env)
		if err != nil {
			t.Fatal(err)
		}
		if plan.Landlock.DenyTCP != tt.deny || !slices.Equal(plan.Landlock.ConnectTCP, tt.want) {
			t.Errorf("%s: deny %v connect %v", tt.name, plan.Landlock.DenyTCP, plan.Landlock.ConnectTCP)
		}
	}
}
