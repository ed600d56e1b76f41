//go:build linux

package nsnet

import (
	"os"
	"testing"
)

// On a host whose kernel config is readable, Available must agree with it; on this
// project's test machines (6.x with nft_tproxy built in) it must say yes.
func TestAvailable(t *testing.T) {
	ok, reason := Available()
	t.Logf("Available() = %v, %q", ok, reason)
	if reason == "" {
		t.Error("empty reason")
	}
	cfg, src := kernelConfig()
	if cfg == nil {
		t.Skip("no readable kernel config on this host")
	}
	if want := len(missingConfig(cfg)) == 0; ok != want {
		t.Errorf("Available() = %v, but %s says %v", ok, src, want)
	}
	if _, err := os.Stat("/proc/config.gz"); err == nil && !ok {
		t.Logf("this kernel lacks the transparent path: %s", reason)
	}
}

// Probe needs capabilities in its user namespace: as an ordinary user on the host it
// must fail with a reason, as root (or in a namespace) it must succeed here.
func TestProbe(t *testing.T) {
	err := Probe()
	t.Logf("Probe() = %v", err)
	if os.Getuid() == 0 {
		if ok, _ := Available(); ok && err != nil {
			t.Errorf("Probe as root on a capable kernel: %v", err)
		}
	} else if err == nil {
		t.Error("Probe succeeded without capabilities")
	}
}
