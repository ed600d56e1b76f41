//go:build linux

package tests

// Files a host agent session keeps in the agent's state directory and runs
// from while it lives (review16d). A Claude Code session on the host, beside
// the sandbox, sources its shell snapshot
// (~/.claude/shell-snapshots/snapshot-*.sh) before every Bash command it
// runs; a Codex session puts its ~/.codex/tmp/arg0-linux/codex-arg0XXXX/
// directory first on the PATH of every command it runs; a Gemini CLI session
// with checkpointing runs git in its shadow repository
// (~/.gemini/history/HASH/) with GIT_CONFIG_SYSTEM naming
// .gitconfig_system_empty there (core.fsmonitor runs a command). A Claude
// Code session also puts the text of its hook environment files
// (~/.claude/session-env/SESSION/sessionstart-hook-N.sh and the setup,
// cwdchanged and filechanged ones) in front of every Bash command, read
// again after each cd; a Codex session sources its shell snapshot
// (~/.codex/shell_snapshots/THREAD.sh) before every command (review17b).
// All are in the profile's writable state directory: written from inside,
// the host session's next command would run the agent's code outside jail. The
// profiles give the sandbox its own copies (jail-owned caches): the agent's
// own session works inside, the host's files are never touched.

import (
	"os"
	"strings"
	"testing"
)

func TestProfileAgentSessionFilesSeparate(t *testing.T) {
	h := newProfHome(t)
	const snap = "~/.claude/shell-snapshots/snapshot-bash-1764662400000-abc123.sh"
	const arg0 = "~/.codex/tmp/arg0-linux/codex-arg0AbCdEf"
	const shadow = "~/.gemini/history/0123abcd"
	const sessEnv = "~/.claude/session-env/6f1c2e4a-0b7d-4c55-9e0f-2a8b3c4d5e6f"
	const codexSnap = "~/.codex/shell_snapshots/019c9dcf-5626-78f0-8dfd-b7e25e32e7da.sh"
	for _, d := range []string{"~/.claude/shell-snapshots", arg0, shadow, sessEnv, "~/.codex/shell_snapshots"} {
		if err := os.MkdirAll(h.path(d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	hostSnap := "# Snapshot file\nunalias -a 2>/dev/null || true\n"
	if err := os.WriteFile(h.path(snap), []byte(hostSnap), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.path(arg0+"/.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.path(shadow+"/.gitconfig_system_empty"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.path(codexSnap), []byte(hostSnap), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		profile, script, want string
	}{
		{"claude", `d="$HOME/.claude/shell-snapshots"; mkdir -p "$d" && echo 'echo agent-code-ran' >> "$d/snapshot-bash-1764662400000-abc123.sh" && echo wrote-snapshot
true`, "wrote-snapshot"},
		{"codex", `d="$HOME/.codex/tmp/arg0-linux/codex-arg0AbCdEf"; mkdir -p "$d" && printf '#!/bin/sh\necho agent-code-ran\n' > "$d/git" && chmod +x "$d/git" && echo wrote-arg0
true`, "wrote-arg0"},
		{"gemini", `d="$HOME/.gemini/history/0123abcd"; mkdir -p "$d" && printf '[core]\n\tfsmonitor = echo agent-code-ran\n' >> "$d/.gitconfig_system_empty" && echo wrote-shadow
true`, "wrote-shadow"},
		{"claude", `d="$HOME/.claude/session-env/6f1c2e4a-0b7d-4c55-9e0f-2a8b3c4d5e6f"; mkdir -p "$d" && echo 'echo agent-code-ran' > "$d/sessionstart-hook-1.sh" && echo wrote-session-env
true`, "wrote-session-env"},
		{"codex", `d="$HOME/.codex/shell_snapshots"; mkdir -p "$d" && echo 'echo agent-code-ran' >> "$d/019c9dcf-5626-78f0-8dfd-b7e25e32e7da.sh" && echo wrote-codex-snapshot
true`, "wrote-codex-snapshot"},
	} {
		r := sh(t, runOpts{dir: h.ws, env: h.env}, tc.script, "--profile", tc.profile)
		mustCode(t, r, 0)
		// The agent's own session must still work: it writes its snapshot
		// and its arg0 directory there.
		if !strings.Contains(r.stdout, tc.want) {
			t.Errorf("profile %s: inside, the session directory is not writable (%s missing): the agent's own session would fail\nstdout:\n%s\nstderr:\n%s", tc.profile, tc.want, r.stdout, r.stderr)
		}
	}
	if b, _ := os.ReadFile(h.path(snap)); string(b) != hostSnap {
		t.Errorf("the host session's shell snapshot was rewritten from inside (its next Bash command sources it outside jail): %q", b)
	}
	if _, err := os.Lstat(h.path(arg0 + "/git")); err == nil {
		t.Errorf("a program the agent chose is in the host codex session's arg0 directory (first on the PATH of its commands)")
	}
	if _, err := os.Lstat(h.path(sessEnv + "/sessionstart-hook-1.sh")); err == nil {
		t.Errorf("a hook environment file the agent wrote is in the host Claude Code session's session-env directory (its text runs before the session's next Bash command, outside jail)")
	}
	if b, _ := os.ReadFile(h.path(codexSnap)); string(b) != hostSnap {
		t.Errorf("the host codex session's shell snapshot was rewritten from inside (its next command sources it outside jail): %q", b)
	}
	if b, _ := os.ReadFile(h.path(shadow + "/.gitconfig_system_empty")); len(b) != 0 {
		t.Errorf("the host gemini session's shadow repository system config was written from inside (its next checkpoint runs git with it): %q", b)
	}
}
