package jail_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/policy"
)

// TestStartRefusesHomeAtDev: Start refuses a HOME at or below /dev (here
// the host's /dev/shm) as the plan does, before it makes the sandbox's log
// directory there (the state directory's run/, without a runtime
// directory) or anything else. Seen failing without Start's early check:
// the refusal came from the supervisor, after .local/state/jail/run and
// the log were made in the HOME.
func TestStartRefusesHomeAtDev(t *testing.T) {
	home, err := os.MkdirTemp("/dev/shm", "jail-api-home-")
	if err != nil {
		t.Fatalf("a directory in /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	for k, v := range map[string]string{"HOME": home, "XDG_STATE_HOME": "", "XDG_CONFIG_HOME": "", "XDG_CACHE_HOME": "", "XDG_RUNTIME_DIR": ""} {
		t.Setenv(k, v)
	}
	p := policy.Default()
	p.Command = []string{"true"}
	sb, err := jail.Start(context.Background(), &p, jail.Options{})
	if err == nil {
		sb.Close()
		t.Fatal("Start with HOME in /dev/shm: no error")
	}
	if !strings.Contains(err.Error(), "HOME") || !strings.Contains(err.Error(), "/dev inside is the sandbox's own") {
		t.Errorf("Start with HOME in /dev/shm: %v, want the HOME refused", err)
	}
	if ents, _ := os.ReadDir(home); len(ents) > 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left in the HOME: %v", names)
	}
}
