package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLeanInitImports holds the lean init to what init needs: the point of
// the program is what it does not link. A new import of netproxy (HTTP,
// TLS), of the supervisor or of the CLI's packages fails here.
func TestLeanInitImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	banned := map[string]bool{
		"net/http": true, "crypto/tls": true, "crypto/x509": true,
		"github.com/jail-sandbox/jail":          true,
		"github.com/jail-sandbox/jail/netproxy": true,
		"github.com/jail-sandbox/jail/sandbox":  true,
		"github.com/jail-sandbox/jail/policy":   true,
		"github.com/jail-sandbox/jail/config":   true,
		"github.com/jail-sandbox/jail/audit":    true,
	}
	for _, d := range deps {
		if banned[d] {
			t.Errorf("the lean init links %s", d)
		}
	}
	if len(deps) > 140 {
		t.Errorf("the lean init links %d packages, budget 140 (jail links about 260)", len(deps))
	}
}
