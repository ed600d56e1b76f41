package tests

import (
	"path/filepath"
	"strings"
	"testing"
)

// A tool in ~/.local/bin (uv, ruff, a pipx install) runs as the command,
// but an agent's shell does not find it: the home is empty inside. The
// first start says which PATH directories are hidden and names the fix;
// --runnable shows the tool for what the command runs, read-only.
func TestHiddenPathNamed(t *testing.T) {
	home, env := everydayHome(t)
	bin := filepath.Join(home, ".local/bin")
	writeExec(t, filepath.Join(bin, "mytool"), "#!/bin/sh\necho MYTOOL-RAN\n")
	env = append(env, "PATH="+bin+":/usr/local/bin:/usr/bin:/bin")
	note := "PATH: ~/.local/bin (mytool) is hidden inside with your home"

	r := sh(t, runOpts{env: env}, `mytool`)
	if r.code != 127 || !strings.Contains(r.stderr, note) || !strings.Contains(r.stderr, "--runnable NAME") {
		t.Fatalf("a hidden PATH tool: exit %d, want 127 and the note %q\nstderr: %s", r.code, note, r.stderr)
	}
	r = sh(t, runOpts{env: env}, `mytool`)
	if strings.Contains(r.stderr, "PATH: ") {
		t.Fatalf("the note is said at every start:\n%s", r.stderr)
	}
	r = sh(t, runOpts{env: env}, `mytool; echo x > ~/.local/bin/mytool 2>/dev/null && echo WRITTEN; true`, "--runnable", "mytool")
	if r.code != 0 || !strings.Contains(r.stdout, "MYTOOL-RAN") || strings.Contains(r.stdout, "WRITTEN") {
		t.Fatalf("--runnable mytool: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "runnable mytool: ") {
		t.Errorf("no note says what --runnable showed:\n%s", r.stderr)
	}
	r = run(t, runOpts{env: env}, "--dry-run", "--runnable", "absent-tool", "--", "true")
	if !strings.Contains(r.stdout+r.stderr, "not on PATH: runnable absent-tool") {
		t.Errorf("--dry-run does not say an absent runnable was skipped:\n%s%s", r.stdout, r.stderr)
	}
}
