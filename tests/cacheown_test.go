//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A cache of jail's own is read by no host program: a protected name the
// agent creates at its top (.envrc) stays there for the next sandbox, with
// no watch on the start path (the claude profile's caches lie in the
// writable ~/.claude, whose mount points exist on the host: each had ~120
// watches). Beside them, in ~/.claude itself, the same name is still
// quarantined; and the host's own cache (--host-caches), which its tools
// read, keeps the watch too.
func TestCacheOwnNoAbsentWatch(t *testing.T) {
	h := newProfHome(t)
	if err := os.MkdirAll(h.path("~/.claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	quarantine := filepath.Join(h.home, ".local", "state", "jail", "quarantine", "*")
	r := sh(t, runOpts{dir: h.ws, env: h.env}, `echo own > ~/.claude/projects/.envrc && sleep 0.3 && echo ok`, "--profile", "claude")
	mustCode(t, r, 0)
	if q, _ := filepath.Glob(quarantine); len(q) != 0 {
		t.Errorf("jail's own cache: something was quarantined: %v\n%s", q, r.stderr)
	}
	r = sh(t, runOpts{dir: h.ws, env: h.env}, `cat ~/.claude/projects/.envrc 2>/dev/null || echo gone`, "--profile", "claude")
	mustCode(t, r, 0)
	if strings.TrimSpace(r.stdout) != "own" {
		t.Errorf("jail's own cache: the .envrc the agent wrote did not stay: %q\n%s", r.stdout, r.stderr)
	}
	// ~/.claude beside the caches, and the host's own cache: watched as before.
	r = sh(t, runOpts{dir: h.ws, env: h.env}, `echo host > ~/.claude/.envrc && echo host > ~/.claude/projects/.envrc && sleep 0.3 && echo ok`, "--profile", "claude", "--host-caches")
	mustCode(t, r, 0)
	for _, p := range []string{"~/.claude/.envrc", "~/.claude/projects/.envrc"} {
		if _, err := os.Lstat(h.path(p)); err == nil {
			t.Errorf("--host-caches: the %s the agent wrote stayed on the host\n%s", p, r.stderr)
		}
	}
	if q, _ := filepath.Glob(quarantine); len(q) == 0 {
		t.Errorf("--host-caches: nothing in the quarantine\n%s", r.stderr)
	}
}
