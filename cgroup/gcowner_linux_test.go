package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// CollectStale removes only the caller's own stale groups: a stale group of
// another owner is reported Foreign and left as it is (the kernel would
// refuse a user; root would act on a name that user chose).
func TestCollectStaleOnlyOwn(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a directory of another owner") // cgroup's tests run as root in CI
	}
	root := t.TempDir()
	base := filepath.Join(root, "pids")
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(base, "cgroup.procs"), nil, 0o644)
	// A dead supervisor: a reaped child's pid, and start tick 1, which no
	// process that could have its pid now has.
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	dead := c.Process.Pid
	own := filepath.Join(base, "deleg", jailName(dead, "own"))
	other := filepath.Join(base, "deleg", jailName(dead, "other"))
	for _, d := range []string{own, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(other, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	got := map[string]Stale{}
	for _, s := range CollectStale(Options{Root: root}) {
		got[s.Path] = s
	}
	if s, ok := got[own]; !ok || s.Err != nil || s.Foreign {
		t.Errorf("own stale group: %+v (found %v), want removed", s, ok)
	}
	if _, err := os.Stat(own); err == nil {
		t.Errorf("own stale group %s is still there", own)
	}
	if s, ok := got[other]; !ok || !s.Foreign || s.Err != nil {
		t.Errorf("another owner's stale group: %+v (found %v), want Foreign", s, ok)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another owner's stale group was touched: %v", err)
	}
}

func jailName(pid int, tag string) string { return fmt.Sprintf("jail-%d-t1-%s", pid, tag) }
