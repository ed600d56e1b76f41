package jail_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/policy"
)

// TestStartRefusesCwdThroughPlantedLink: a Cwd given to the Go API through
// a symlink in a git work tree that leads out of it is refused as the
// shell's $PWD is (cwdlink): the caller's choice, but possibly a path a user
// typed, and a sandbox run in that tree could have pointed the link at
// another project. With Workspace set, the caller chose. Seen failing on
// main (a34609b): the sandbox started with the other project as its
// writable workspace and the command wrote there.
func TestStartRefusesCwdThroughPlantedLink(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(root, 0o755)
	p, victim := filepath.Join(root, "p"), filepath.Join(root, "victim")
	for _, d := range []string{filepath.Join(p, ".git"), victim} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(p, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(p, "out")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	start := func(ws string) (*jail.Sandbox, error) {
		pol := policy.Default() // no command: an idle sandbox
		pol.Cwd, pol.Workspace = link, ws
		return jail.Start(context.Background(), &pol, jail.Options{})
	}
	write := func(sb *jail.Sandbox) error {
		return sb.Command("/bin/sh", "-c", "echo x > "+victim+"/planted").Run()
	}
	sb, err := start("")
	if err == nil {
		write(sb)
		sb.Stop()
		sb.Close()
		t.Fatal("Start with Cwd through a planted link: no error")
	}
	for _, w := range []string{"symlink " + link, victim, "--workspace " + victim} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal lacks %q: %v", w, err)
		}
	}
	if _, err := os.Stat(filepath.Join(victim, "planted")); err == nil {
		t.Fatal("the command wrote into the link's target")
	}
	// Workspace set: the caller's choice; the command starts there.
	sb, err = start(victim)
	if err != nil {
		t.Fatalf("Start with Workspace: %v", err)
	}
	defer sb.Close()
	defer sb.Stop()
	if err := write(sb); err != nil {
		t.Fatalf("the command: %v", err)
	}
	if _, err := os.Stat(filepath.Join(victim, "planted")); err != nil {
		t.Errorf("with Workspace the command did not write: %v", err)
	}
}
