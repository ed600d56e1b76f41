//go:build linux

package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A named sandbox gets what its profiles amount to, as jail -- COMMAND
// does: the registries taken from the host's tool configuration and the
// profile's arguments for the command's program (jail run was once a copy
// of the foreground path that had missed both).
func TestSessionProfilesApply(t *testing.T) {
	h := newProfHome(t)
	if err := os.WriteFile(h.path("~/.npmrc"), []byte("registry=http://registry.test:4873/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A stand-in named codex: the codex profile's [args] apply to a program
	// of that name only.
	if err := os.MkdirAll(filepath.Join(h.ws, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.ws, "bin", "codex"), []byte("#!/bin/sh\nexec sleep 120\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	name := "p" + strings.ReplaceAll(marker(), ".", "")
	r := run(t, runOpts{dir: h.ws, env: h.env, timeout: 90 * time.Second},
		"run", "-d", "--name", name, "-P", "node", "-P", "codex", "--", "./bin/codex", "--mine")
	if r.code != 0 || strings.TrimSpace(r.stdout) != name {
		t.Fatalf("jail run -d: exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	t.Cleanup(func() {
		c := exec.Command(jail(t), "kill", "--now", name)
		c.Env = append(os.Environ(), h.env...)
		c.Run()
	})
	r = run(t, runOpts{dir: h.ws, env: h.env, timeout: 30 * time.Second}, "inspect", name)
	if r.code != 0 {
		t.Fatalf("jail inspect: exit %d\n%s", r.code, r.stderr)
	}
	var in struct {
		Policy struct {
			Command     []string `json:"command"`
			AllowDomain []string `json:"allow_domain"`
		} `json:"policy"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &in); err != nil {
		t.Fatalf("inspect: %v\n%s", err, r.stdout)
	}
	if !slices.ContainsFunc(in.Policy.AllowDomain, func(d string) bool { return strings.HasPrefix(d, "registry.test") }) {
		t.Errorf("the node profile's registry from ~/.npmrc is not allowed in the named sandbox: %v", in.Policy.AllowDomain)
	}
	cmd := strings.Join(in.Policy.Command, " ")
	if !strings.Contains(cmd, "--sandbox danger-full-access") || !strings.HasSuffix(cmd, "--mine") {
		t.Errorf("the codex profile's arguments are not on the named sandbox's command (or the user's are not last): %q", cmd)
	}
}
