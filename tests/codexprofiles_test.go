//go:build linux

package tests

// Codex 0.171 reads a profile's settings from $CODEX_HOME/NAME.config.toml
// when the user runs `codex --profile NAME` ("legacy `profile = ...` config
// is no longer supported; use --profile with NAME.config.toml"): the same
// keys as config.toml (notify, MCP servers, hooks, the sandbox mode), none
// of them guarded. Through the codex profile's -w ~/.codex the agent added
// notify (a command run at every turn's end) to the user's work profile, or
// made a new one: the next `codex --profile work` on the host ran it.
// Seen with the real codex: ~/.codex/p1.config.toml's model is the session's
// under --profile p1.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCodexProfileConfigsNotPlanted(t *testing.T) {
	const host = "model = \"host\"\n"
	for _, viaProfile := range []bool{true, false} {
		t.Run(map[bool]string{true: "profile", false: "-w"}[viaProfile], func(t *testing.T) {
			plant := `notify = ["sh", "-c", "echo PLANTED"]` + "\n"
			r, codex := codexRun(t, viaProfile, host, []string{"work.config.toml", "config.toml"}, func(codex string) string {
				return "cd " + codex + " && printf '%s' '" + plant + "' >> work.config.toml 2>/dev/null; " +
					"printf '%s' '" + plant + "' > new.config.toml 2>/dev/null; " +
					"printf '%s' '" + plant + "' > t.tmp && mv t.tmp made.config.toml 2>/dev/null; exit 0\n"
			})
			if b, err := os.ReadFile(filepath.Join(codex, "work.config.toml")); err != nil || string(b) != host {
				t.Errorf("~/.codex/work.config.toml after the run: %q (%v), want the host's", b, err)
			}
			for _, f := range []string{"new.config.toml", "made.config.toml"} {
				if b, err := os.ReadFile(filepath.Join(codex, f)); err == nil && strings.Contains(string(b), "PLANTED") {
					t.Errorf("~/.codex/%s made by the agent stayed on the host: %q", f, b)
				}
			}
			if t.Failed() {
				t.Logf("stderr:\n%s", r.stderr)
			}
		})
	}
}
