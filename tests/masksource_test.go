//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMaskSourcesCoveredByDevPath: init binds its masks from an empty
// file and directory it makes in its own /dev; a read path at /dev
// itself covers them with the host's /dev before the masks are bound.
// The workspace's .env must still never be readable: either it is masked
// or the sandbox does not start. Seen failing (the agent printed the
// secret, exit 0) as an ordinary user on a build whose mask took the
// bind's ENOENT, the source's here, for "nothing there to hide"
// (initmounts2's maskByHint). Started by root, the start fails earlier
// (/dev takes no idmapped mount): the secret is not shown either way.
func TestMaskSourcesCoveredByDevPath(t *testing.T) {
	ws := workspace(t)
	if err := os.WriteFile(filepath.Join(ws, ".env"), []byte("TOPSECRET=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// --net host: no /etc/resolv.conf of the sandbox's, whose file in
	// init's /dev would fail the start after the masks and hide the hole.
	r := sh(t, runOpts{dir: ws}, `cat .env; echo END`, "--net", "host", "-r", "/dev")
	if strings.Contains(r.stdout, "TOPSECRET") {
		t.Fatalf("the workspace's .env was readable with a read path at /dev (exit %d):\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r.code == 0 && !strings.Contains(r.stdout, "END") {
		t.Fatalf("the agent did not run to its end (exit 0):\n%s\n%s", r.stdout, r.stderr)
	}
}
