//go:build linux

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHomeViewsHidden: a host bind mount that shows the HOME at a second
// path (mount --bind $HOME /elsewhere) does not show it inside. The plan
// hides the HOME by its path with an empty tmpfs; each other mount of its
// file system that reaches it (found in /proc/self/mountinfo) is hidden
// the same way: one outside the workspace (a read-only place of the host's
// tree), one inside the workspace (a writable bind), and one that shows
// only a part of the HOME (its .ssh). Needs a mount namespace to bind in
// without touching the host's mounts: root only (unshare -m); as another
// user mount(2) needs a user namespace whose root runs jail as root, and
// fsrules.TestViews carries the computation.
func TestHomeViewsHidden(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to bind mounts in a private mount namespace; fsrules.TestViews covers the computation")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatalf("unshare(1) is needed: %v", err)
	}
	if !testHomeVisible {
		t.Skipf("the test HOME %s is under a place jail hides anyway", testHome)
	}
	secret := "HOMEVIEW-SECRET-" + filepath.Base(workspace(t))
	dir := filepath.Join(testHome, ".ssh-homeviews")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "id_test"), []byte(secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Outside the workspace, in the host's read-only tree: a sibling of
	// the test HOME (never a hidden place when testHomeVisible).
	out, err := os.MkdirTemp(filepath.Dir(testHome), "homeview-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(out) })
	os.Chmod(out, 0o755)
	part, err := os.MkdirTemp(filepath.Dir(testHome), "homeview-part-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(part) })
	os.Chmod(part, 0o755)
	for _, mode := range []string{"namespaces", "degraded"} {
		t.Run(mode, func(t *testing.T) {
			ws := workspace(t)
			in := filepath.Join(ws, "v")
			if err := os.Mkdir(in, 0o755); err != nil {
				t.Fatal(err)
			}
			// jail passes only its allowed environment: the paths are in
			// the script.
			reads := `cat "$HOME/.ssh-homeviews/id_test"; cat V1/.ssh-homeviews/id_test; cat V2/.ssh-homeviews/id_test; cat V3/id_test; ls -A V1 V2 V3; echo done`
			var flags string
			if mode == "degraded" {
				// Without a mount namespace Landlock is the wall: a view
				// inside the writable workspace is inside a writable
				// tree, which Landlock cannot mask (said at start, like
				// any mask there); the others are denied.
				reads = `cat "$HOME/.ssh-homeviews/id_test"; cat V1/.ssh-homeviews/id_test; cat V3/id_test; ls -A V1 V3; echo done`
				flags = "--x-degraded"
			}
			inner := strings.NewReplacer("V1", out, "V2", in, "V3", part).Replace(reads)
			// The mounts are made in a private mount namespace: the host's
			// table is untouched, and they go away with it.
			script := `set -e; mount --bind "$H" "$V1"; mount --bind "$H" "$V2"; mount --bind "$H/.ssh-homeviews" "$V3"; exec "$JAIL" --quiet $FLAGS -- /bin/sh -c "$INNER"`
			o := runOpts{dir: ws, env: []string{"H=" + testHome, "V1=" + out, "V2=" + in, "V3=" + part, "JAIL=" + jail(t), "INNER=" + inner, "FLAGS=" + flags}}
			r := runWith(t, o, "unshare", "-m", "--propagation", "private", "/bin/sh", "-c", script)
			if strings.Contains(r.stdout, secret) {
				t.Fatalf("a second mount of the HOME shows its files inside:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, "done") {
				t.Fatalf("the agent did not run: code %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestStateDirViewsHidden: jail's state directory outside the HOME
// ($XDG_STATE_HOME elsewhere), shown at a second path by a host bind
// mount, is not readable there inside (its trails, registry, records).
func TestStateDirViewsHidden(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to bind mounts in a private mount namespace; fsrules.TestViews covers the computation")
	}
	if !testHomeVisible {
		t.Skipf("the test HOME %s is under a place jail hides anyway", testHome)
	}
	mk := func(prefix string) string {
		d, err := os.MkdirTemp(filepath.Dir(testHome), prefix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		os.Chmod(d, 0o755)
		return d
	}
	state, view := mk("statehome-"), mk("stateview-")
	secret := "STATEVIEW-SECRET-" + filepath.Base(state)
	if err := os.MkdirAll(filepath.Join(state, "jail"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "jail", "marker"), []byte(secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"namespaces", "degraded"} {
		t.Run(mode, func(t *testing.T) {
			flags := ""
			if mode == "degraded" {
				flags = "--x-degraded"
			}
			inner := strings.NewReplacer("V", view).Replace(`cat V/marker; ls -A V; echo done`)
			script := `set -e; mount --bind "$S/jail" "$V"; exec "$JAIL" --quiet $FLAGS -- /bin/sh -c "$INNER"`
			o := runOpts{env: []string{"XDG_STATE_HOME=" + state, "S=" + state, "V=" + view, "JAIL=" + jail(t), "INNER=" + inner, "FLAGS=" + flags}}
			r := runWith(t, o, "unshare", "-m", "--propagation", "private", "/bin/sh", "-c", script)
			if strings.Contains(r.stdout, secret) || strings.Contains(r.stdout, "marker") {
				t.Fatalf("a second mount of the state directory shows it inside:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, "done") {
				t.Fatalf("the agent did not run: code %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}
