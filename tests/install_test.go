//go:build linux

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// make install puts the binary, with its version stamped, the man page and
// the three completion scripts under PREFIX (in DESTDIR), and they work.
func TestMakeInstall(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	if _, err := os.Stat(filepath.Join(root, "Makefile")); err != nil {
		t.Skipf("not in the repository (a copied test binary): %v", err)
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	// The build uses the Go caches of the user running the test. CI's
	// unprivileged pass runs this binary in root's checkout, whose module
	// cache it cannot read: the root pass proves make install there.
	env := os.Environ()
	if mc, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
		if _, err := os.ReadDir(strings.TrimSpace(string(mc))); err != nil {
			t.Skipf("the module cache is not readable by this user (%v): make install needs it", err)
		}
	}
	if gc, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		if unix.Access(strings.TrimSpace(string(gc)), unix.W_OK) != nil {
			env = append(env, "GOCACHE="+t.TempDir())
		}
	}
	dest := t.TempDir()
	bin := t.TempDir()
	cmd := exec.Command("make", "install", "DESTDIR="+dest, "PREFIX=/opt/jailtest", "VERSION=v9.9.9-test", "BIN="+filepath.Join(bin, "jail"))
	cmd.Dir = root
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	prefix := filepath.Join(dest, "opt", "jailtest")
	for _, f := range []string{"bin/jail", "share/man/man1/jail.1", "share/bash-completion/completions/jail", "share/zsh/site-functions/_jail", "share/fish/vendor_completions.d/jail.fish"} {
		fi, err := os.Stat(filepath.Join(prefix, f))
		if err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	out, err := exec.Command(filepath.Join(prefix, "bin", "jail"), "version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "jail v9.9.9-test" {
		t.Errorf("installed jail version: %q %v", out, err)
	}
	if out, err := exec.Command("bash", "-n", filepath.Join(prefix, "share/bash-completion/completions/jail")).CombinedOutput(); err != nil {
		t.Errorf("bash completion: %v %s", err, out)
	}
}
