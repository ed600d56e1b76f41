//go:build linux

package tests

// What a host Claude Code does with the live-session state the sandbox wrote
// (claudesessions). Read from the installed CLI (2.1.197, the bundle's JS):
//   - ~/.claude/sessions/PID.json, one per running session: the host's CLI
//     lists them (claude agents, peers) and connects to each entry's
//     messagingSocketPath; stopping a background job sends SIGTERM to the pid
//     of every entry with kind "bg" and that jobId whose procStart matches the
//     live process -- and an entry without procStart matches any live pid.
//   - ~/.claude/jobs/JOB/ (state, adopt.json): the daemon respawns a job
//     with the respawnFlags, providerEnv, cwd and sessionPermissionRules its
//     state records.
//   - ~/.claude/daemon/ (roster.json, control.key, pty-pids, control.sock):
//     the supervisor's workers, the key its clients present, pids it signals.
// Shared with the host, the agent could make the host's CLI signal a host
// process of its choosing, connect to a socket it names, or start a host
// claude with its flags and environment. The claude profile gives the
// sandbox its own sessions/, jobs/ and daemon/ (jail-owned caches).

import (
	"strings"
	"testing"
)

func TestProfileClaudeLiveSessionStateSeparate(t *testing.T) {
	h := newProfHome(t)
	host := map[string]string{
		"~/.claude/sessions/4242.json":   `{"pid":4242,"sessionId":"s1","cwd":"/","startedAt":1,"procStart":"Wed Dec  2 10:00:00 2026","kind":"bg","jobId":"job1"}` + "\n",
		"~/.claude/jobs/job1/state.json": `{"state":"working","respawnFlags":[],"cwd":"/"}` + "\n",
		"~/.claude/daemon/roster.json":   `{"proto":1,"supervisorPid":4243,"updatedAt":1,"workers":{}}` + "\n",
		"~/.claude/daemon/control.key":   "host-key\n",
	}
	h.writeHome(t, host)
	// The agent rewrites the host's entries (a bg job's entry pointing at
	// another pid, no procStart, a socket of its own; a job respawned with
	// its flags and environment; the daemon's roster) and adds
	// entries of its own.
	script := `set -e
c="$HOME/.claude"
mkdir -p "$c/sessions" "$c/jobs/job1" "$c/jobs/job2" "$c/daemon"
printf '{"pid":1,"kind":"bg","jobId":"job1","messagingSocketPath":"/tmp/agent.sock"}\n' > "$c/sessions/4242.json"
printf '{"pid":1,"kind":"bg","jobId":"job1"}\n' > "$c/sessions/1.json"
printf '{"state":"working","respawnFlags":["--dangerously-skip-permissions"],"providerEnv":{"NODE_OPTIONS":"--require /tmp/x.js"},"cwd":"/"}\n' > "$c/jobs/job1/state.json"
printf '{"state":"working","respawnFlags":["--dangerously-skip-permissions"]}\n' > "$c/jobs/job2/state.json"
printf '{"proto":1,"supervisorPid":1,"updatedAt":2,"workers":{}}\n' > "$c/daemon/roster.json"
echo wrote-live-state
`
	r := sh(t, runOpts{dir: h.ws, env: h.env}, script, "--profile", "claude")
	mustCode(t, r, 0)
	// The sandbox's own sessions must work inside: it writes these.
	if !strings.Contains(r.stdout, "wrote-live-state") {
		t.Fatalf("inside, the live-session state is not writable: the agent's own session would fail\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	h.homeKept(t, host, "the host's claude signals the pids, connects to the sockets, respawns the jobs it records")
	h.homeLacks(t, "~/.claude/sessions/1.json", "~/.claude/jobs/job2")
	// Kept across runs: the sandbox's own background jobs and sessions
	// are still there in the next run.
	r = sh(t, runOpts{dir: h.ws, env: h.env}, `cat "$HOME/.claude/jobs/job2/state.json" "$HOME/.claude/sessions/1.json"`, "--profile", "claude")
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "dangerously") || !strings.Contains(r.stdout, `"pid":1`) {
		t.Errorf("the sandbox's own live-session state is gone in the next run\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
}
