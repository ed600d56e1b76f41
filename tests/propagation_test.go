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
// unmounted, and a cache mounted in a writable bind (-w ~/.cache --cache
// ~/.cache/go-build) replaced the host's go-build cache with the one the
// agent had written. The host here is a private mount namespace whose
// mounts are made shared, its peer groups its own. Seen failing on main
// (the .env mask and the .git binds in the namespace's table after the
// run; the host's go-build cache listing the agent's file).
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

	// A cache (jail's own directory, which the agent writes) mounted at
	// a tool's path inside a writable bind: propagated, it was the host's
	// ~/.cache/go-build after the run, with what the agent put there, for
	// the user's next build outside the sandbox.
	if !testHomeVisible {
		t.Skipf("the test HOME %s is under a place jail hides anyway", testHome)
	}
	home, err := os.MkdirTemp(filepath.Dir(testHome), "propagation-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	os.Chmod(home, 0o755)
	if err := os.MkdirAll(filepath.Join(home, ".cache", "go-build"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".cache", "go-build", "host-entry"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	script = `set -e; mount --make-rshared /; "$JAIL" --quiet -w "$HOME/.cache" --cache '~/.cache/go-build' -- /bin/sh -c 'echo x > "$HOME/.cache/go-build/planted"'; echo after; ls "$HOME/.cache/go-build"`
	o = runOpts{dir: ws, env: []string{"JAIL=" + jail(t), "HOME=" + home, "XDG_CACHE_HOME=", "XDG_STATE_HOME=", "XDG_CONFIG_HOME="}}
	r = runWith(t, o, "unshare", "-m", "--propagation", "private", "/bin/sh", "-c", script)
	if _, after, _ = strings.Cut(r.stdout, "after\n"); r.code != 0 || after != "host-entry\n" {
		t.Errorf("after a run with a cache in a writable bind, the host's ~/.cache/go-build lists %q (want its own host-entry): code %d\nstderr:\n%s", after, r.code, r.stderr)
	}
}
