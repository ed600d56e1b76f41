//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A symlink in the workspace that a sandboxed command pointed elsewhere does
// not choose what the next run's --write grants: --write through it is
// refused, naming the link and its target, unless the target is given
// itself (trustfollow). Seen failing on main's binary (7c2873e), as root and
// as jailtest: the second run bound the victim directory writable and the
// command wrote into it.
func TestWriteThroughRetargetedLink(t *testing.T) {
	ws := workspace(t)
	victim := workspace(t)
	o := runOpts{dir: ws}
	// An earlier run's command points a link in its workspace elsewhere.
	mustCode(t, sh(t, o, `ln -s `+victim+` ob`), 0)
	if l, err := os.Readlink(filepath.Join(ws, "ob")); err != nil || l != victim {
		t.Fatalf("the sandbox could not make the link: the test checks nothing (%q %v)", l, err)
	}
	r := sh(t, o, `echo x > ob/planted`, "--write", "ob")
	if _, err := os.Stat(filepath.Join(victim, "planted")); err == nil {
		t.Fatalf("--write through a link in the workspace granted its target: %s", r.stderr)
	}
	mustCode(t, r, 125)
	for _, w := range []string{"ob", filepath.Join(ws, "ob"), victim, "can point elsewhere"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("refusal lacks %q: %s", w, r.stderr)
		}
	}
	if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("not one line: %q", r.stderr)
	}
	// Given itself, the target is the user's choice; the link works at its
	// own path.
	r = sh(t, o, `echo x > ob/planted && echo ok`, "--write", "ob", "--write", victim)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "ok" {
		t.Fatalf("target given: %q %s", r.stdout, r.stderr)
	}
}
