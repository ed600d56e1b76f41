package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A run may not widen the next run's view: symlinks in a writable tree
// (an absolute PATH entry in the workspace, as direnv's PATH_add makes,
// in a data place) are the agent's to make, so programRoots does not follow
// them to show another data place's directory; nor a system PATH symlink
// whose chain passes through the workspace (/usr/bin/x -> ws/y, which the
// agent replaces with a link to /srv/other). The controls: the host's own
// link is followed, and without the writable root the same links are.
func TestProgramRootsIgnoreWritableLinks(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := filepath.Join(root, "srv")
	ws, other, sys := filepath.Join(srv, "ws"), filepath.Join(srv, "other"), filepath.Join(root, "usr/bin")
	for _, d := range []string{ws + "/bin", other + "/app", other + "/lib", sys, srv + "/tools/bin"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{other + "/app/data.txt", other + "/lib/data.txt", srv + "/tools/bin/tool"} {
		if err := os.WriteFile(f, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Planted by an earlier run in its workspace.
	must(os.Symlink(other+"/app/data.txt", ws+"/bin/x"))
	must(os.Symlink(other+"/lib/data.txt", ws+"/y"))
	// The host's own: a system link into the workspace (whose target the
	// agent chose), and one straight to a tool (the control).
	must(os.Symlink(ws+"/y", sys+"/via-ws"))
	must(os.Symlink(srv+"/tools/bin/tool", sys+"/tool"))
	places := []string{srv}
	path := ws + "/bin:" + sys
	got := programRoots(places, nil, []string{ws}, path, nil, ws, nil)
	for _, d := range []string{other + "/app", other + "/lib"} {
		if slices.Contains(got, d) {
			t.Errorf("a symlink the sandbox could plant shows %s: %q", d, got)
		}
	}
	if !slices.Contains(got, srv+"/tools") {
		t.Errorf("control: the host's own link to %s/tools is not followed: %q", srv, got)
	}
	// Control: with no writable root the same links lead there.
	got = programRoots(places, nil, nil, path, nil, ws, nil)
	for _, d := range []string{other + "/app", other + "/lib"} {
		if !slices.Contains(got, d) {
			t.Errorf("control: with no writable root the links do not lead to %s: %q", d, got)
		}
	}
}
