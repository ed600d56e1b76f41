package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoDefaultDenyAt: --no-default-deny-at lifts the built-in protections
// in the tree it names and nowhere else: a repository's test key and test
// .env read inside, its real key and .env beside them still hidden, git's
// hooks still read-only; the first run without it names the test data it
// hides and the lift. Seen failing before the option (an unknown flag;
// the fixtures hidden without it, as they still are, and nothing said).
func TestNoDefaultDenyAt(t *testing.T) {
	ws := workspace(t)
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	files := map[string]string{
		"testdata/server.key":   "-----BEGIN PRIVATE KEY-----\nfixture-key\n",
		"testdata/env/.env":     "FIXTURE=fixture-env\n",
		"testdata/creds.json":   "{}\n",
		"keys/real.pem":         "-----BEGIN PRIVATE KEY-----\nsecret-key\n",
		".env":                  "TOKEN=secret-env\n",
		".git/hooks/pre-commit": "#!/bin/sh\n",
	}
	for name, body := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := "cat testdata/server.key testdata/env/.env keys/real.pem .env 2>&1; echo x >> .git/hooks/pre-commit || echo hooks-read-only"

	// Without the option the fixtures are hidden (the test can fail),
	// and the first run says so, once, with the lift that shows them.
	r := sh(t, runOpts{dir: ws}, read)
	if strings.Contains(r.stdout, "fixture") {
		t.Fatalf("the fixtures were readable without --no-default-deny-at: %q", r.stdout)
	}
	if strings.Count(r.stderr, "--no-default-deny-at testdata shows that tree") != 1 {
		t.Errorf("the first run did not name the test data it hides and the lift, once:\n%s", r.stderr)
	}
	if r = sh(t, runOpts{dir: ws}, read); strings.Contains(r.stderr, "test data") {
		t.Errorf("the second run said the test data again:\n%s", r.stderr)
	}

	for _, lift := range []string{"testdata", filepath.Join(ws, "testdata")} {
		r = sh(t, runOpts{dir: ws}, read, "--no-default-deny-at", lift)
		mustCode(t, r, 0)
		for _, want := range []string{"fixture-key", "fixture-env", "hooks-read-only"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("--no-default-deny-at %s: %q missing inside:\n%s%s", lift, want, r.stdout, r.stderr)
			}
		}
		if strings.Contains(r.stdout, "secret") {
			t.Errorf("--no-default-deny-at %s showed a protected file outside it:\n%s", lift, r.stdout)
		}
	}

	// --dry-run names the lifted tree.
	r = run(t, runOpts{dir: ws}, "--dry-run", "--no-default-deny-at", "testdata", "--", "true")
	if !strings.Contains(r.stdout+r.stderr, "lifted     "+filepath.Join(ws, "testdata")+"  (") {
		t.Errorf("--dry-run does not name the lifted tree:\n%s%s", r.stdout, r.stderr)
	}

	// A lift through a symlink in the workspace (a command in an earlier
	// run could have pointed it at the real keys) is refused, naming it.
	if err := os.Symlink("keys", filepath.Join(ws, "fixtures")); err != nil {
		t.Fatal(err)
	}
	r = sh(t, runOpts{dir: ws}, "cat fixtures/real.pem", "--no-default-deny-at", "fixtures")
	if r.code != 125 || strings.Contains(r.stdout, "secret") || !strings.Contains(r.stderr, "--no-default-deny-at fixtures") || !strings.Contains(r.stderr, filepath.Join(ws, "fixtures")) {
		t.Errorf("a lift through a symlink in the workspace: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	for _, c := range []struct{ lift, want string }{
		{".git/hooks", "--allow-git-config"},   // git's: its own switch
		{"nowhere", "no such file"},            // a typo lifts nothing
		{"/usr/share", "not in the workspace"}, // not walked: nothing to lift
		{"testdata/env/.env", ""},              // fine on its own
	} {
		r = sh(t, runOpts{dir: ws}, "true", "--no-default-deny-at", c.lift)
		if c.want == "" {
			mustCode(t, r, 0)
			continue
		}
		if r.code != 125 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("--no-default-deny-at %s: exit %d, want 125 in one line saying %q:\n%s", c.lift, r.code, c.want, r.stderr)
		}
	}

	// A lift with nothing to lift says so at start, once, and the run goes on.
	if err := os.Mkdir(filepath.Join(ws, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	r = sh(t, runOpts{dir: ws}, "echo ran", "--no-default-deny-at", "docs")
	if r.code != 0 || !strings.Contains(r.stdout, "ran") || strings.Count(r.stderr, "nothing lifted") != 1 || !strings.Contains(r.stderr, filepath.Join(ws, "docs")) {
		t.Errorf("--no-default-deny-at of a tree with nothing protected: exit %d, want 0 and one line saying nothing was lifted:\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A read path of a file a built-in hides is a conflict that names the
	// lift; with the lift it is shown.
	key := filepath.Join(ws, "keys", "real.pem")
	r = sh(t, runOpts{dir: ws}, "true", "-r", key)
	if r.code != 125 || !strings.Contains(r.stderr, "--no-default-deny-at") {
		t.Errorf("-r of a hidden key: exit %d, want 125 naming --no-default-deny-at:\n%s", r.code, r.stderr)
	}
	r = sh(t, runOpts{dir: ws}, "cat "+key, "-r", key, "--no-default-deny-at", key)
	if r.code != 0 || !strings.Contains(r.stdout, "secret-key") {
		t.Errorf("-r and --no-default-deny-at of a key: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}
