//go:build linux

package nsnet

import (
	"os"
	"testing"

	"github.com/jail-sandbox/jail/netproxy/nsnet/kernelcheck"
)

// kernelcheck.Available (static facts, for `jail doctor`) must agree with
// what Setup really does on this kernel: the live answer is a Setup in a
// fresh user+net namespace, which reaches ModeTProxy exactly when the
// transparent path works (kernelcheck's own test checks it against the
// kernel config). On this project's test machines (6.x, nft_tproxy built
// in) both say yes.
func TestAvailable(t *testing.T) {
	ok, reason := kernelcheck.Available()
	t.Logf("Available() = %v, %q", ok, reason)
	if reason == "" {
		t.Error("empty reason")
	}
	ch := startChild(t, "tproxy", nil)
	live := ch.res.Mode == ModeTProxy
	ch.close()
	if ok != live {
		t.Errorf("Available() = %v (%s), but Setup in a fresh namespace gives mode %q (%s)", ok, reason, ch.res.Mode, ch.res.Reason)
	}
	if os.Getenv("CI") == "true" && !ok {
		t.Errorf("CI machines have the transparent path (6.x, nft_tproxy): %s", reason)
	}
}

// Probe needs capabilities in its user namespace: as an ordinary user on the host it
// must fail with a reason, as root (or in a namespace) it must succeed here.
func TestProbe(t *testing.T) {
	err := Probe()
	t.Logf("Probe() = %v", err)
	if os.Getuid() == 0 {
		if ok, _ := kernelcheck.Available(); ok && err != nil {
			t.Errorf("Probe as root on a capable kernel: %v", err)
		}
	} else if err == nil {
		t.Error("Probe succeeded without capabilities")
	}
}
