//go:build linux

package tests

// End-to-end test of the hard-link check of the home's protected
// directories when they hold many files (a browser profile, Python's user
// site, ~/.ssh with many keys): complete, whatever their size.
//
// HOME and XDG_STATE_HOME point into temp directories: the real home is never
// touched.

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestHomeLinksManyFiles: ~/.ssh holds 10,001 other files and a key that
// the walk reaches last, which an earlier run (home writable, protections
// lifted) hard-linked into a project. A run in the project, with the home
// not shown, cannot read the key through the link. The check used to stop
// after 10,000 entries per home, silently: the key was readable.
func TestHomeLinksManyFiles(t *testing.T) {
	home, env := pfHome(t)
	sshFiles(t, home, 10_001)
	key := fsSecrets(t, home, ".ssh/many/zz_key") // after every f*: the last one walked
	proj := workspace(t)
	if err := os.Link(filepath.Join(home, ".ssh/many/zz_key"), filepath.Join(proj, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	attack := `cat notes.txt; true`
	r := sh(t, runOpts{dir: proj, env: env}, attack)
	mustCode(t, r, 0)
	if l := fsLeaks(r.stdout+r.stderr, key); len(l) > 0 {
		t.Errorf("read %v through a hard link in the workspace", l)
	}
	c := sh(t, runOpts{dir: proj, env: env}, attack, "--no-default-deny")
	mustCode(t, c, 0)
	if len(fsLeaks(c.stdout, key)) != 1 {
		t.Fatalf("control (--no-default-deny): the attack is broken\n%s%s", c.stdout, c.stderr)
	}
}

// TestHomeLinksBetweenRuns: a start may skip reading the home's protected
// directories when an earlier start's record shows nothing changed there
// (fsrules, homelinks.go). A hard link made between two runs from the
// workspace to an existing protected file, with the directory's mtime put
// back, changes no protected directory: the run after it must still find
// the link.
func TestHomeLinksBetweenRuns(t *testing.T) {
	home, env := pfHome(t)
	sshFiles(t, home, 2_000)
	key := fsSecrets(t, home, ".ssh/many/f01000")
	proj := workspace(t)
	fsWrite(t, proj, "a/x.go", "package a\n", 0o644)
	time.Sleep(1100 * time.Millisecond) // nothing changed within the last second is recorded
	for range 2 {
		mustCode(t, sh(t, runOpts{dir: proj, env: env}, `true`), 0)
	}
	a := filepath.Join(proj, "a")
	fi, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(home, ".ssh/many/f01000"), filepath.Join(a, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(a, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	attack := `cat a/notes.txt; true`
	r := sh(t, runOpts{dir: proj, env: env}, attack)
	mustCode(t, r, 0)
	if l := fsLeaks(r.stdout+r.stderr, key); len(l) > 0 {
		t.Errorf("read %v through a hard link made between two runs", l)
	}
	c := sh(t, runOpts{dir: proj, env: env}, attack, "--no-default-deny")
	mustCode(t, c, 0)
	if len(fsLeaks(c.stdout, key)) != 1 {
		t.Fatalf("control (--no-default-deny): the attack is broken\n%s%s", c.stdout, c.stderr)
	}
}

// sshFiles makes ~/.ssh/many (0700) with n empty private files f00000,
// f00001... in it: a protected home directory with many files.
func sshFiles(t *testing.T, home string, n int) {
	t.Helper()
	many := filepath.Join(home, ".ssh", "many")
	if err := os.MkdirAll(many, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(many, fmt.Sprintf("f%05d", i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
