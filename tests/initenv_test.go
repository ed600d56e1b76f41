//go:build linux

package tests

import (
	"strings"
	"testing"
)

// TestInitEnvNotTheAgents: init is started with GOMAXPROCS=1 in its own
// environment (ns' initEnv); none of it reaches the agent, whose
// environment is the spec's, and the agent cannot read init's.
func TestInitEnvNotTheAgents(t *testing.T) {
	r := sh(t, runOpts{env: refusalEnv(t)}, `env | grep '^GOMAXPROCS=' ; cat /proc/1/environ 2>/dev/null | tr '\0' '\n' | grep -c . ; true`)
	mustCode(t, r, 0)
	if got := strings.TrimSpace(r.stdout); got != "0" {
		t.Errorf("the agent sees init's environment or GOMAXPROCS: %q", got)
	}
}
