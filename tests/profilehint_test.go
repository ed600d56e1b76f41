//go:build linux

package tests

// `jail -- claude` (jail --help's first example) refused api.anthropic.com
// and said to allow that one name: the first of several steps (the sign-in's
// host next, then the state an empty home does not keep), each of which the
// claude profile takes (session 39, trying it as a user would). A refusal
// of a name that the profile named like the command allows now says so;
// with that profile applied there is no such refusal, and a refusal of any
// other name is as before. A user's profile (one named like a program of
// theirs) is what the test uses: its names are the test's own, reserved
// ones, and nothing here leaves the sandbox.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRefusalNamesProfile(t *testing.T) {
	home, ws := workspace(t), workspace(t)
	cfg := filepath.Join(home, ".config")
	if err := os.MkdirAll(filepath.Join(cfg, "jail", "profiles"), 0o755); err != nil {
		t.Fatal(err)
	}
	prof := "version = 1\ndescription = \"a tool of the test's\"\nallow-domain = [\"api.hinted.invalid\"]\n"
	if err := os.WriteFile(filepath.Join(cfg, "jail", "profiles", "mytool.toml"), []byte(prof), 0o644); err != nil {
		t.Fatal(err)
	}
	// The program named like the profile: it connects to the profile's
	// name and to another one; each connection is refused inside.
	script := "#!/bin/bash\nfor h in api.hinted.invalid other.hinted.invalid; do (exec 3<>/dev/tcp/$h/443) 2>/dev/null; done\nexit 0\n"
	for _, n := range []string{"mytool", "othertool"} {
		if err := os.WriteFile(filepath.Join(ws, n), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	o := runOpts{dir: ws, env: []string{"HOME=" + home, "XDG_CONFIG_HOME=" + cfg, "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state")}}
	const hinted = "refused api.hinted.invalid:443 - add --allow-domain api.hinted.invalid, or run with --profile mytool, which allows it and keeps mytool's own state"

	r := run(t, o, "--", filepath.Join(ws, "mytool"))
	mustCode(t, r, 0)
	if !strings.Contains(r.stderr, hinted) {
		t.Errorf("no profile named for the profile's name\n want %s\nstderr:\n%s", hinted, r.stderr)
	}
	if !strings.Contains(r.stderr, "refused other.hinted.invalid:443 - add --allow-domain other.hinted.invalid\n") {
		t.Errorf("the other name's refusal is not as before\nstderr:\n%s", r.stderr)
	}
	// Another program: no profile is named like it.
	r = run(t, o, "--", filepath.Join(ws, "othertool"))
	mustCode(t, r, 0)
	if strings.Contains(r.stderr, "--profile") || !strings.Contains(r.stderr, "refused api.hinted.invalid:443 - add --allow-domain api.hinted.invalid\n") {
		t.Errorf("othertool: want the refusal as before\nstderr:\n%s", r.stderr)
	}
	// In the background (jail run -d): the supervisor, a process of its
	// own, was not handed the profiles named like the command.
	if out := inBackground(t, o, hinted, "--", filepath.Join(ws, "mytool")); !strings.Contains(out, hinted) {
		t.Errorf("run -d: no profile named for the profile's name\n want %s\nlog:\n%s", hinted, out)
	}
	// The profile applied: its name is allowed (the client closes without
	// a byte, which is said); no refusal asks for it or names the profile.
	r = run(t, o, "-P", "mytool", "--", filepath.Join(ws, "mytool"))
	mustCode(t, r, 0)
	if strings.Contains(r.stderr, "--allow-domain api.hinted.invalid") || strings.Contains(r.stderr, "--profile mytool") {
		t.Errorf("-P mytool: the profile's name refused or the profile named\nstderr:\n%s", r.stderr)
	}
}
