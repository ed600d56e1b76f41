//go:build linux

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRootfulMountsStayInside: a sandbox started by root mounts nothing
// in the host's mount namespace, where the host's mounts are shared (as
// systemd makes / and every mount below it). Started by root, the
// supervisor clones each bind source in the host's namespace (an idmapped
// open_tree clone): a clone of a shared mount joins its peer group, so
// every mask, pin and read-only bind init then made inside the workspace
// was propagated to the host's mount and stayed there after the run: on
// main, `mount --make-rshared /; jail -- true` left the workspace's .env
// masked on the host (an empty file to the user's own tools) until
// unmounted. The host here is a private mount namespace whose mounts are
// made shared, its peer groups its own. Seen failing on main (the .env
// mask and the .git pins in the namespace's table after the run).
func TestRootfulMountsStayInside(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a rootful start only: a user's start clones its bind sources in its own mount namespace, made private first")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatalf("unshare(1) is needed: %v", err)
	}
	ws := workspace(t)
	if err := os.WriteFile(filepath.Join(ws, ".env"), []byte("TOPSECRET=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The namespace starts private (no peer of the real host's mounts),
	// then its own mounts are made shared, as on a systemd host.
	script := `set -e; mount --make-rshared /; "$JAIL" --quiet -- /bin/sh -c 'cat .env 2>/dev/null || echo masked inside'; echo after; grep -e jail- -e "$WS" /proc/self/mountinfo || true; cat "$WS/.env"`
	o := runOpts{dir: ws, env: []string{"JAIL=" + jail(t), "WS=" + ws}}
	r := runWith(t, o, "unshare", "-m", "--propagation", "private", "/bin/sh", "-c", script)
	if r.code != 0 || !strings.Contains(r.stdout, "masked inside\nafter\n") {
		t.Fatalf("the run did not go as planned: code %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	_, after, _ := strings.Cut(r.stdout, "after\n")
	if after != "TOPSECRET=1\n" {
		t.Errorf("the sandbox's mounts are in the host's mount table after the run (want only the .env's content):\n%s\nstderr:\n%s", after, r.stderr)
	}
}
