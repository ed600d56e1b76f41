package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/ns"
)

// TestHostSocketMasks: each host socket the mounts leave visible is masked
// at the place its path leads to; vanished, non-socket
// and hidden ones are not, nor one the user named as a read or write path.
func TestHostSocketMasks(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(rel string) string {
		p := filepath.Join(d, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return p
	}
	visible := mk("var/lib/db/db.sock")
	spaced := mk("srv/my dir/a b.sock")
	hidden := mk("run/dbus/bus")
	inMasked := mk("state/run/ctl.sock")
	inBind := mk("run/ws/lsp.sock")  // under the hidden run, but in a bind shown again
	granted := mk("run/docker.sock") // --write /run/docker.sock: the user named it
	// A link from a hidden place to a visible one: the socket was bound as
	// run/link/x.sock, its inode is at var/lib/real/x.sock.
	mk("var/lib/real/x.sock")
	if err := os.Symlink(filepath.Join(d, "var/lib/real"), filepath.Join(d, "run/link")); err != nil {
		t.Fatal(err)
	}
	// The reverse: a visible-looking path that leads into the hidden run.
	if err := os.Symlink(filepath.Join(d, "run"), filepath.Join(d, "varrun")); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(d, "var/lib/db/notasocket")
	os.WriteFile(plain, nil, 0o644)

	list := []string{visible, spaced, hidden, inMasked, inBind, filepath.Join(d, "run/link/x.sock"),
		filepath.Join(d, "varrun/dbus/bus"), granted, plain, filepath.Join(d, "gone.sock"), filepath.Join(d, "gone/x.sock"), visible}
	old := boundSockets
	boundSockets = func() ([]string, error) { return list, nil }
	t.Cleanup(func() { boundSockets = old })

	mounts := []ns.Mount{
		{Kind: ns.KindTmpfs, Path: filepath.Join(d, "run"), Dir: true},
		{Kind: ns.KindBind, Path: filepath.Join(d, "run/ws"), Dir: true},
		{Kind: ns.KindBind, Path: granted},
		{Kind: ns.KindMask, Path: filepath.Join(d, "state"), Dir: true},
	}
	var got []string
	for _, m := range hostSocketMasks(mounts) {
		if m.Kind != ns.KindMask || m.Dir {
			t.Errorf("%s: kind %s dir %v, want a file mask", m.Path, m.Kind, m.Dir)
		}
		got = append(got, m.Path)
	}
	want := []string{visible, spaced, inBind, filepath.Join(d, "var/lib/real/x.sock")}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("masks:\n got %q\nwant %q", got, want)
	}
}

// TestDegradedRulesSkipHostSockets: a plan made before the run fell back to
// degraded mode keeps its host socket masks out of the Landlock cover, which
// would list their directories (other runs' records come and go there:
// TestHostsDegradedForced failed with "stat ...run/X.json: no such file");
// seccomp refuses socket(AF_UNIX) there instead.
func TestDegradedRulesSkipHostSockets(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mounts := []ns.Mount{{Kind: ns.KindMask, Path: filepath.Join(d, "x.sock"), Why: whyHostSocket}}
	r, _, err := degradedRules(mounts, landlock.Rules{}, filepath.Join(d, "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(d, "x.sock")
	for _, p := range r.ReadExec {
		if p == sock || strings.HasPrefix(sock, strings.TrimSuffix(p, "/")+"/") {
			return // its tree is read whole: nothing on the way was listed
		}
	}
	t.Errorf("the cover went down to the host socket's mask %s (listing each directory on the way): %q", sock, r.ReadExec)
}
