//go:build linux

package tests

import (
	"strings"
	"testing"
)

// An older Landlock ABI (simulated) still keeps the filesystem wall: /run is
// a writable tmpfs as far as the mounts go, and only Landlock refuses the
// write. What the older ABI lacks is said on stderr, and --require-landlock
// fails closed.
func TestLandlockDowngrade(t *testing.T) {
	for _, abi := range []string{"1", "3", "5"} {
		r := sh(t, runOpts{}, `echo x > /run/probe 2>/dev/null && echo WROTE; exit 0`, "--x-landlock-max-abi", abi)
		mustCode(t, r, 0)
		if strings.Contains(r.stdout, "WROTE") {
			t.Fatalf("ABI %s: a write outside the Landlock read-write list worked", abi)
		}
		if !strings.Contains(r.stderr, "landlock ABI "+abi+": not enforced") || !strings.Contains(r.stderr, "scope") {
			t.Fatalf("ABI %s: the missing features are not reported: %q", abi, r.stderr)
		}
	}
	// Control: the kernel's own ABI reports nothing missing.
	r := sh(t, runOpts{}, `true`)
	if strings.Contains(r.stderr, "not enforced") {
		t.Fatalf("full ABI reports missing features: %q", r.stderr)
	}
	r = run(t, runOpts{}, "--x-landlock-max-abi", "3", "--require-landlock", "4", "--", "/bin/sh", "-c", "echo RAN")
	mustCode(t, r, 125)
	if strings.Contains(r.stdout, "RAN") || !strings.Contains(r.stderr, "require-landlock") {
		t.Fatalf("--require-landlock above the ABI: %q %q", r.stdout, r.stderr)
	}
}
