//go:build linux

package kernelcheck

import (
	"os"
	"strings"
	"testing"
)

// Available must agree with the kernel config where it is readable (nsnet's
// TestAvailable checks it against a live Setup).
func TestAvailableAgreesWithConfig(t *testing.T) {
	ok, reason := Available()
	t.Logf("Available() = %v, %q", ok, reason)
	if reason == "" {
		t.Error("empty reason")
	}
	if cfg, src := kernelConfig(); cfg != nil {
		if want := len(missingConfig(cfg)) == 0; ok != want {
			t.Errorf("Available() = %v, but %s says %v (missing %v)", ok, src, want, missingConfig(cfg))
		}
	} else if strings.HasPrefix(reason, "unverified") {
		t.Errorf("no kernel config and no module list: Available() could not decide (%s)", reason)
	}
	if os.Getenv("CI") == "true" && !ok {
		t.Errorf("CI machines have the transparent path (6.x, nft_tproxy): %s", reason)
	}
}
