//go:build linux

package tests

// Adversarial (review14a): /proc/keys and /proc/key-users list every key
// the reader's uid may view. In a user's start the agent's uid is the
// user's, so a fresh /proc showed the descriptions of the user's own keys
// (keyctl, which would read their payloads, is refused by seccomp).

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestProcKeysMasked(t *testing.T) {
	desc := fmt.Sprintf("jail-test-key-%d", os.Getpid())
	// The process keyring: gone with this process, never inherited by
	// jail (fork gives children none); /proc/keys shows it to every task
	// of this uid all the same.
	id, err := unix.AddKey("user", desc, []byte("payload"), unix.KEY_SPEC_PROCESS_KEYRING)
	if err != nil {
		if inCI() {
			t.Fatalf("add_key: %v", err)
		}
		t.Skipf("add_key: %v", err)
	}
	defer unix.KeyctlInt(unix.KEYCTL_REVOKE, id, 0, 0, 0)
	host, err := os.ReadFile("/proc/keys")
	if err != nil || !strings.Contains(string(host), desc) {
		t.Fatalf("control: the host's /proc/keys does not show the key (%v)", err)
	}
	r := sh(t, runOpts{}, `cat /proc/keys /proc/key-users; echo END; grep -E ' /proc/(keys|key-users) ' /proc/self/mountinfo | wc -l`)
	mustCode(t, r, 0)
	if strings.Contains(r.stdout, desc) {
		t.Errorf("the user's key is listed inside:\n%s", r.stdout)
	}
	// As root the agent's uid is nobody's, which views no key of root's:
	// the mounts show the masks are there all the same.
	if !strings.Contains(r.stdout, "END\n2\n") {
		t.Errorf("/proc/keys and /proc/key-users are not both masked:\n%s%s", r.stdout, r.stderr)
	}
}
