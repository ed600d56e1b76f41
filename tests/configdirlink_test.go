//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Adversarial (review14d): jail's config directory is a symlink (GNU
// stow's way: ~/.config/jail -> ~/dotfiles/jail) and the directory holding
// the link is writable (the workspace is ~/.config, kept in git). The plan
// masks where the link points; the link itself was the agent's: it
// removed it and made a directory there, whose config.toml every later
// run read as the user's own (write, net, no-default-deny; or a
// trust.json). Seen failing on main's binary (4260be5): after the run
// ~/.config/jail was the agent's directory, and the next run's hostname
// was the agent's.
func TestConfigDirSymlinkReplaced(t *testing.T) {
	h := newHome(t)
	if err := os.RemoveAll(h.cfg); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(h.dir, "dotfiles", "jail")
	writeFile(t, filepath.Join(target, "config.toml"), "hostname = \"users\"\n")
	if err := os.Symlink(target, h.cfg); err != nil {
		t.Fatal(err)
	}
	o := runOpts{env: h.env, dir: filepath.Dir(h.cfg)}
	r := sh(t, o, `hostname`)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "users" {
		t.Fatalf("the user's config (through the symlink) not applied: %q\n%s", r.stdout, r.stderr)
	}
	// The link can go (it is not a mount point); jail may put it back
	// before the mkdir, or after the run.
	r = sh(t, o, `rm jail && echo REMOVED; mkdir jail && printf 'hostname = "agents"\n' > jail/config.toml; true`)
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "REMOVED") {
		t.Fatalf("the agent could not remove the link inside: the test checks nothing\n%s\n%s", r.stdout, r.stderr)
	}
	if l, err := os.Readlink(h.cfg); err != nil || l != target {
		t.Errorf("after the run %s is not the user's symlink to %s (readlink: %q, %v)", h.cfg, target, l, err)
	}
	r = sh(t, o, `hostname`)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "users" {
		t.Errorf("the next run read the agent's config: hostname %q\n%s", r.stdout, r.stderr)
	}
}
