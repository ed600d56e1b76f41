//go:build linux

package tests

// The start's order (issue 16): the supervisor raises the walls it keeps
// itself (the agent-configuration guard's snapshot and watch, the
// sentinel's watches) while init builds the sandbox, after init has its
// spec. They must still be in place before the agent's first instruction.

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// traceAt returns the time (ms on the supervisor's clock) of the first
// JAIL_TRACE line of who ("supervisor" or "init") for step, and false
// without one.
func traceAt(stderr, who, step string) (float64, bool) {
	var re *regexp.Regexp
	if who == "init" {
		re = regexp.MustCompile(`(?m)^jail: init ` + regexp.QuoteMeta(step) + `\s+[0-9.]+ ms \(at ([0-9.]+) ms\)$`)
	} else {
		re = regexp.MustCompile(`(?m)^jail: supervisor ` + regexp.QuoteMeta(step) + `\s+([0-9.]+) ms \(\+[0-9.]+\)$`)
	}
	m := re.FindStringSubmatch(stderr)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}

// The agent's very first instructions change a guarded file (a hook in
// ~/.claude/settings.json) and create a guarded one (.mcp.json naming a
// server). The guard's snapshot must predate them, so both are undone at
// the exit; and the trace must show the guard and the sentinel up before
// init had its go. ~/.claude.json is large (16 MB) so that the guard takes
// long enough for a start that sent the go before its walls were up to
// lose the race every time (seen failing that way: raiseWalls moved into a
// goroutine and the go no longer waiting for it).
func TestWallsUpBeforeAgentRuns(t *testing.T) {
	e := acfgSetup(t)
	var big bytes.Buffer
	big.WriteString(`{"numStartups": 3, "mcpServers": {}, "history": [`)
	for i := 0; big.Len() < 16<<20; i++ {
		if i > 0 {
			big.WriteByte(',')
		}
		big.WriteString(`"` + strings.Repeat("x", 100) + strconv.Itoa(i) + `"`)
	}
	big.WriteString("]}\n")
	if err := os.WriteFile(filepath.Join(e.home, ".claude.json"), big.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `printf '{"model": "x", "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch /tmp/pwned-order"}]}]}}' > "$HOME/.claude/settings.json"
printf '{"mcpServers": {"evil": {"command": "/tmp/pwned-order"}}}' > .mcp.json`
	r := sh(t, runOpts{dir: e.ws, env: append(e.env, "JAIL_TRACE=1")}, script, e.flags()...)
	mustCode(t, r, 0)
	if hooks := acfgGet(acfgJSON(t, filepath.Join(e.home, ".claude/settings.json")), "hooks", "SessionStart"); hooks != nil {
		t.Errorf("the agent's first write to ~/.claude/settings.json outlived the run (the guard's snapshot came after it): %v", hooks)
	}
	if b, err := os.ReadFile(filepath.Join(e.ws, ".mcp.json")); err == nil && strings.Contains(string(b), "pwned-order") {
		t.Errorf("the .mcp.json the agent created first outlived the run with its server: %s", b)
	}
	goAt, ok := traceAt(r.stderr, "init", "go")
	if !ok {
		t.Fatalf("no trace line of init's go:\n%s", r.stderr)
	}
	for _, step := range []string{"agentcfg", "sentinel", "mask watch"} {
		at, ok := traceAt(r.stderr, "supervisor", step)
		if !ok {
			t.Fatalf("no trace line of the supervisor's %s step:\n%s", step, r.stderr)
		}
		if at > goAt {
			t.Errorf("the supervisor's %s step ended at %.2f ms, after init had its go at %.2f ms:\n%s", step, at, goAt, r.stderr)
		}
	}
}

// A wall that cannot be raised after init had its spec (here the guard's
// record: its directory is a file) still fails the start with its own
// message and exit 125; the agent never runs, and no process of the
// sandbox is left.
func TestWallFailureAfterSpecFailsStart(t *testing.T) {
	e := acfgSetup(t)
	if err := os.MkdirAll(filepath.Join(e.state, "jail"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.state, "jail", "agentcfg"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	marker := "wall-failure-agent-" + strconv.Itoa(os.Getpid())
	r := sh(t, runOpts{dir: e.ws, env: e.env}, "echo "+marker+"; sleep 30", e.flags()...)
	mustCode(t, r, 125)
	if !strings.Contains(r.stderr, "agent configuration guard: mkdir") || !strings.Contains(r.stderr, "not a directory") {
		t.Errorf("the guard's failure is not said:\n%s", r.stderr)
	}
	if strings.Contains(r.stdout, marker) {
		t.Errorf("the agent ran although a wall failed: %q", r.stdout)
	}
	if pids := procsWith(marker); len(pids) > 0 {
		t.Errorf("processes of the failed sandbox are left: %v", pids)
	}
}

// The network (with the proxy: its namespace, the veth pair, the nftables
// rules, 5-9 ms) is set up while the supervisor plans, not after the spec:
// init is handed its configuration as soon as it exists (MsgNetwork). Both
// the proxied network and --net none's (jail's DNS and refusal listeners).
// Seen failing before: init's network line came after its spec.
func TestNetworkBeforeSpec(t *testing.T) {
	for _, flags := range [][]string{{"--allow-domain", "example.com"}, {"--net", "none"}} {
		t.Run(flags[len(flags)-1], func(t *testing.T) {
			home := t.TempDir()
			os.Chmod(home, 0o755)
			r := run(t, runOpts{env: []string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"), "JAIL_TRACE=1"}},
				append(append([]string{"--quiet"}, flags...), "--", "/bin/true")...)
			mustCode(t, r, 0)
			netAt, ok := traceAt(r.stderr, "init", "network")
			specAt, ok2 := traceAt(r.stderr, "init", "spec")
			if !ok || !ok2 {
				t.Fatalf("no trace line of init's network or spec:\n%s", r.stderr)
			}
			if netAt >= specAt {
				t.Errorf("init set up its network at %.2f ms, after its spec came at %.2f ms: not while the supervisor planned:\n%s", netAt, specAt, r.stderr)
			}
		})
	}
}
