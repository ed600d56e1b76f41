//go:build linux

package tests

// Agents reach for `sudo apt-get install` when a tool is missing; inside
// jail sudo cannot work (no_new_privs, nosuid mounts, no capabilities), and
// its own words send the user the wrong way: "you may need to adjust the
// container configuration to disable the flag" as a user, "/etc/sudo.conf
// is owned by uid 65534, should be 0" when root started jail (session 40,
// trying it as a user would). jail now says, once a program, why it cannot
// work and what to do instead. Stand-ins beside the test HOME, in the
// host's read-only tree, are what the sandbox runs: set-user-ID or not,
// named like sudo or not.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrivilegeProgramNamed(t *testing.T) {
	if !testHomeVisible {
		t.Skipf("the test HOME %s is under a place jail hides anyway: the stand-ins beside it would be hidden too", testHome)
	}
	dir, err := os.MkdirTemp(filepath.Dir(testHome), "privexec-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	for _, f := range []struct {
		rel  string
		mode os.FileMode
	}{
		{"setid/sudo", 0o755 | os.ModeSetuid},
		{"setid/su", 0o755 | os.ModeSetuid},
		{"setid/other", 0o755 | os.ModeSetuid},
		{"shim/sudo", 0o755}, // an image's sudo that runs the command itself
	} {
		p := filepath.Join(dir, f.rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		// After the write: a write clears the set-id bits.
		if err := os.Chmod(p, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	const said = "cannot work inside the sandbox, whatever it says next: nothing there can raise privileges"
	for _, c := range []struct {
		name   string
		script string
		want   []string // the programs named
	}{
		{"sudo twice, su once", "sudo -n true; sudo apt-get install jq; su -c true; exit 3", []string{"sudo", "su"}},
		{"a set-id program of another name", "other; exit 3", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, runOpts{env: []string{"PATH=" + filepath.Join(dir, "setid") + ":/usr/bin:/bin"}}, "--", "sh", "-c", c.script)
			mustCode(t, r, 3)
			if n := strings.Count(r.stderr, said); n != len(c.want) {
				t.Errorf("said %d times, want %d\nstderr:\n%s", n, len(c.want), r.stderr)
			}
			for _, p := range c.want {
				if !strings.Contains(r.stderr, "jail: "+p+" "+said) {
					t.Errorf("%s not named\nstderr:\n%s", p, r.stderr)
				}
			}
		})
	}
	t.Run("a shim", func(t *testing.T) {
		r := run(t, runOpts{env: []string{"PATH=" + filepath.Join(dir, "shim") + ":/usr/bin:/bin"}}, "--", "sudo", "true")
		mustCode(t, r, 3)
		if strings.Contains(r.stderr, said) {
			t.Errorf("a sudo without the set-user-ID bit is named\nstderr:\n%s", r.stderr)
		}
	})
}
