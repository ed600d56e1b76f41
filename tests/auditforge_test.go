//go:build linux

package tests

import (
	"path/filepath"
	"strings"
	"testing"
)

// Adversarial: the agent names a file it executes with a newline and what
// follows it a line of jail's own (here a forged exit), and runs it under
// another argv[0] so that the path is printed beside the argv. jail audit's
// summary and its --type output must keep that text in its line, escaped:
// on main the forged line stood on its own in both.
func TestAuditForgedLineStaysInItsLine(t *testing.T) {
	trail := filepath.Join(auditDir(t), "forge.jsonl")
	const forged = "23:59:59.999    99 exit    FORGED"
	script := `f=$(printf '/tmp/x\n` + forged + `'); printf '#!/bin/sh\ntrue\n' > "$f"; chmod +x "$f"; (exec -a innocent "$f")`
	mustCode(t, run(t, runOpts{}, "--quiet", "--audit", trail, "--", "/bin/bash", "-c", script), 0)
	for _, args := range [][]string{{trail}, {"--type", "exec", trail}} {
		r := auditCLI(t, args...)
		if !strings.Contains(r.stdout, forged) {
			t.Fatalf("jail audit %v does not show the planted path; the test would prove nothing:\n%s", args, r.stdout)
		}
		for _, line := range strings.Split(r.stdout, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), forged) {
				t.Errorf("ATTACK WORKED: jail audit %v printed the agent's text as a line of its own: %q", args, line)
			}
		}
		if !strings.Contains(r.stdout, `/tmp/x\n`+forged) {
			t.Errorf("jail audit %v does not show the planted path escaped:\n%s", args, r.stdout)
		}
	}
}
