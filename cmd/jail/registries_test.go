package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/config"
	"github.com/jail-sandbox/jail/policy"
)

func TestAddProgramArgs(t *testing.T) {
	res := &config.Result{Args: []config.ProgramArgs{{Program: "codex", Args: []string{"-c", "k=v"}}}}
	for _, c := range []struct {
		cmd, want []string
	}{
		{[]string{"codex"}, []string{"codex", "-c", "k=v"}},
		{[]string{"/opt/x/bin/codex", "exec", "hi"}, []string{"/opt/x/bin/codex", "-c", "k=v", "exec", "hi"}},
		{[]string{"sh", "-c", "codex"}, []string{"sh", "-c", "codex"}}, // another program: nothing added
		{[]string{"codex-other"}, []string{"codex-other"}},
		{nil, nil},
	} {
		var p policy.Policy
		if got := addProgramArgs(slices.Clone(c.cmd), res, &p); !slices.Equal(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.cmd, got, c.want)
		}
	}
}

// A program that refuses an option given twice (codex --sandbox): the
// profile's arguments are left out when the user's own set the same, and
// --dry-run says so.
func TestAddProgramArgsUnless(t *testing.T) {
	res := &config.Result{Args: []config.ProgramArgs{{Program: "codex", Args: []string{"--sandbox", "danger-full-access"},
		Unless: []string{"--sandbox", "-s", "sandbox_mode="}, Source: config.Source{Profile: "codex"}}}}
	add := []string{"codex", "--sandbox", "danger-full-access"}
	for _, c := range []struct {
		cmd, want []string
	}{
		{[]string{"codex"}, add},
		{[]string{"codex", "exec", "fix the -s flag"}, append(slices.Clone(add), "exec", "fix the -s flag")},
		{[]string{"codex", "--sandbox", "read-only"}, []string{"codex", "--sandbox", "read-only"}},
		{[]string{"codex", "--sandbox=read-only"}, []string{"codex", "--sandbox=read-only"}},
		{[]string{"codex", "exec", "-s", "read-only", "hi"}, []string{"codex", "exec", "-s", "read-only", "hi"}},
		{[]string{"codex", "-c", `sandbox_mode="read-only"`}, []string{"codex", "-c", `sandbox_mode="read-only"`}},
		{[]string{"sandbox_mode=x", "--sandbox"}, []string{"sandbox_mode=x", "--sandbox"}}, // another program
	} {
		var p policy.Policy
		if got := addProgramArgs(slices.Clone(c.cmd), res, &p); !slices.Equal(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.cmd, got, c.want)
		}
	}
	p := policy.Policy{DryRun: true}
	addProgramArgs([]string{"codex", "-s", "read-only"}, res, &p)
	if len(p.Notices) != 1 || !strings.Contains(p.Notices[0], "without --sandbox danger-full-access") || !strings.Contains(p.Notices[0], "-s") {
		t.Errorf("--dry-run notices: %q, want one saying the profile's arguments were left out for -s", p.Notices)
	}
}

func TestSetsEnv(t *testing.T) {
	p := &policy.Policy{Env: []string{"NPM_CONFIG_REGISTRY"}, SetEnv: []string{"npm_config_@a:registry=x"}}
	if setsEnv(p, nil, "npm_config_registry") {
		t.Errorf("a passed variable the host does not set counts as set")
	}
	if !setsEnv(p, []string{"NPM_CONFIG_REGISTRY=https://r.test/"}, "npm_config_registry") {
		t.Errorf("a passed variable the host sets does not count")
	}
	if !setsEnv(p, nil, "NPM_CONFIG_@A:REGISTRY") {
		t.Errorf("a --setenv of the name (another case) does not count")
	}
}
