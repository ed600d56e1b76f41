//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A trusted project inside the agent's workspace, its directory swapped by
// the sandbox for a link to a directory of the agent's own that holds a
// copy of the trusted bytes: a record is found by its directory's
// identity, and the record's path reached the agent's directory through
// the link, so the copy was trusted there and became the workspace (the
// trusted project holding the current directory), its relative write path
// anchored where the agent chose: the trusted "../../shared" (mono's
// shared) became the one beside mono, outside it. Refused now: trust by
// identity only through a path with no symlink on it (trail17). Seen
// failing on main's binary (e413f85), as root and as jailtest: the user's
// next start in the project wrote the directory beside mono.
func TestTrustNotGivenThroughAPlantedLink(t *testing.T) {
	h := newHome(t)
	mono := workspace(t)
	fakeRepo(t, mono)
	svc := filepath.Join(mono, "a", "svc")
	outside := filepath.Join(filepath.Dir(mono), "shared")
	for _, d := range []string{svc, filepath.Join(mono, "shared"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(svc, ".jail.toml"), "write = [\"../../shared\"]\n")
	mustCode(t, run(t, runOpts{env: h.env, dir: svc}, "trust", "--yes", filepath.Join(svc, ".jail.toml")), 0)
	at := func(dir string) runOpts { return runOpts{dir: dir, env: append([]string{"PWD=" + dir}, h.env...)} }
	// As trusted: svc is the workspace, and its write path is mono's.
	mustCode(t, sh(t, at(svc), `echo ok > ../../shared/before`), 0)
	if _, err := os.Stat(filepath.Join(mono, "shared", "before")); err != nil {
		t.Fatalf("the trusted write path, before the swap: %v", err)
	}
	// The agent, in mono's sandbox.
	mustCode(t, sh(t, at(mono), `mv a/svc a/svc.old && mkdir z && cp a/svc.old/.jail.toml z/ && ln -s ../z a/svc`), 0)
	if l, err := os.Readlink(svc); err != nil || l != "../z" {
		t.Fatalf("the sandbox could not make the link: the test checks nothing (%q %v)", l, err)
	}
	// The user's next start in the project, by its usual path.
	r := sh(t, at(svc), `echo x > ../../shared/planted`)
	if _, err := os.Stat(filepath.Join(outside, "planted")); err == nil {
		t.Fatalf("ATTACK WORKED: a copy of a trusted file behind a planted link was trusted, and its write path made %s writable: %s", outside, r.stderr)
	}
	mustCode(t, r, 125)
	if !strings.Contains(r.stderr, "not trusted") {
		t.Errorf("refusal does not say the file is not trusted: %s", r.stderr)
	}
}
