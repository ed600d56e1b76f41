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

// The same for the workspace the user names: a run with --write DATA lets
// its command point a link in DATA at another directory; the next run with
// the same --write and --workspace DATA/link would make that directory the
// writable workspace. Refused, naming the link, unless the target is given
// itself (review14f). Seen failing on main's binary (703b0bf), as root and
// as jailtest: the second run wrote into the victim directory.
func TestWorkspaceThroughRetargetedLink(t *testing.T) {
	ws := workspace(t)
	data := workspace(t)
	victim := workspace(t)
	o := runOpts{dir: ws}
	mustCode(t, sh(t, o, `ln -s `+victim+` `+data+`/proj`, "--write", data), 0)
	if l, err := os.Readlink(filepath.Join(data, "proj")); err != nil || l != victim {
		t.Fatalf("the sandbox could not make the link: the test checks nothing (%q %v)", l, err)
	}
	link := filepath.Join(data, "proj")
	r := sh(t, o, `echo x > `+victim+`/planted`, "--write", data, "--workspace", link)
	if _, err := os.Stat(filepath.Join(victim, "planted")); err == nil {
		t.Fatalf("--workspace through a link in a write path made its target writable: %s", r.stderr)
	}
	mustCode(t, r, 125)
	for _, w := range []string{link, victim, "can point elsewhere"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("refusal lacks %q: %s", w, r.stderr)
		}
	}
	// Without the write path that holds the link, the link is still one
	// an earlier run's command could have made (prevwrite): refused too.
	r = sh(t, o, `echo x > `+victim+`/planted`, "--workspace", link)
	mustCode(t, r, 125)
	if !strings.Contains(r.stderr, "earlier run") {
		t.Errorf("refusal lacks the earlier run: %s", r.stderr)
	}
	// A link the user made in a tree no run could write is the user's:
	// the workspace is its target, writable.
	mine := workspace(t)
	if err := os.Symlink(victim, filepath.Join(mine, "proj")); err != nil {
		t.Fatal(err)
	}
	r = sh(t, o, `echo x > `+victim+`/planted && echo ok`, "--workspace", filepath.Join(mine, "proj"))
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "ok" {
		t.Fatalf("link in no write path: %q %s", r.stdout, r.stderr)
	}
}
