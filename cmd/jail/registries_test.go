package main

import (
	"slices"
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
