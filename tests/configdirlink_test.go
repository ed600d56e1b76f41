//go:build linux

package tests

import (
	"os"
	"os/exec"
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

// TestConfigDirLinkDirLeft (session 19): jail's config directory is a
// link that passes a directory of the workspace and leaves it
// (~/.config/jail -> b/../../dotfiles/jail, the workspace ~/.config). The
// link was guarded and where it leads masked, but not b: the agent swapped
// b for a link of its own (b -> evil/x/y), the link's text unchanged, and
// every later run read evil/dotfiles/jail/config.toml as the user's. A
// normal run pins b; a degraded one (no mounts) refuses to start, naming
// the flag.
func TestConfigDirLinkDirLeft(t *testing.T) {
	dirLeftModes(t, func(t *testing.T, flags []string) {
		h := newHome(t)
		if err := os.RemoveAll(h.cfg); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(h.dir, "dotfiles", "jail", "config.toml"), "hostname = \"users\"\n")
		mkdirs(t, filepath.Join(h.dir, ".config", "b"))
		symlink(t, "b/../../dotfiles/jail", h.cfg)
		o := runOpts{env: h.env, dir: filepath.Dir(h.cfg)}
		r := sh(t, o, `mkdir -p evil/x/y evil/dotfiles/jail && printf 'hostname = "agents"\n' > evil/dotfiles/jail/config.toml
mv b b.old 2>/dev/null || rm -rf b 2>/dev/null
ln -s evil/x/y b 2>/dev/null
exit 0`, flags...)
		pinnedOrRefused(t, r, flags, filepath.Join(h.dir, ".config", "b"))
		if b, _ := os.ReadFile(filepath.Join(h.cfg, "config.toml")); !strings.Contains(string(b), "users") {
			t.Errorf("after the run %s/config.toml is the agent's: %q\nstderr:\n%s", h.cfg, b, r.stderr)
		}
	})
}

// TestGitHooksPathLinkDirLeft (session 19): the user's global
// core.hooksPath is a link that passes a directory of the workspace and
// leaves it (ws/hl -> b/../hooks). gitLinks guarded the link and the mount
// held hooks/, not b: the agent swapped b for a link of its own
// (b -> evil/x) and the host's next `git commit` ran evil/hooks/pre-commit.
func TestGitHooksPathLinkDirLeft(t *testing.T) {
	dirLeftModes(t, func(t *testing.T, flags []string) {
		home, ws := workspace(t), workspace(t)
		mkdirs(t, filepath.Join(ws, "b"))
		mkdirs(t, filepath.Join(ws, "hooks"))
		symlink(t, "b/../hooks", filepath.Join(ws, "hl"))
		env := []string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"), "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
		git := func(args ...string) string {
			c := exec.Command("git", args...)
			c.Dir, c.Env = ws, append(os.Environ(), env...)
			out, _ := c.CombinedOutput()
			return string(out)
		}
		git("init", "-q", ".")
		git("config", "--global", "core.hooksPath", filepath.Join(ws, "hl"))
		r := sh(t, runOpts{dir: ws, env: env}, `mkdir -p evil/x evil/hooks && printf '#!/bin/sh\necho PWNED\n' > evil/hooks/pre-commit && chmod +x evil/hooks/pre-commit
mv b b.old 2>/dev/null || rm -rf b 2>/dev/null
ln -s evil/x b 2>/dev/null
exit 0`, flags...)
		pinnedOrRefused(t, r, flags, filepath.Join(ws, "b")+" and leaves it")
		if out := git("-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "--allow-empty", "-m", "x"); strings.Contains(out, "PWNED") {
			t.Errorf("the host's git commit ran the agent's hook through %s: %s\nstderr:\n%s", filepath.Join(ws, "hl"), out, r.stderr)
		}
	})
}
