//go:build linux

package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDirCachePreloadedExitSweep: the exit check's cache records are read
// while the agent runs (dircache.Preload); an agent that waits until that
// read is done, then plants a .git deep in a tree wide enough for the
// parallel stats and sets its directory's times back, still has it taken
// out at exit. Seen failing with the preload starting the exit pass's
// stats (dircache.Preload calling prefetch).
func TestDirCachePreloadedExitSweep(t *testing.T) {
	ws, env := workspace(t), dcEnv(t)
	for i := 0; i < 300; i++ {
		d := filepath.Join(ws, fmt.Sprintf("p%d", i/30), fmt.Sprintf("d%03d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(ws, ".git/objects"), 0o755)
	os.MkdirAll(filepath.Join(ws, ".git/refs"), 0o755)
	os.WriteFile(filepath.Join(ws, ".git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	time.Sleep(1100 * time.Millisecond) // dircache.Margin
	mustCode(t, run(t, runOpts{dir: ws, env: env}, "--", "/bin/true"), 0)
	r := sh(t, runOpts{dir: ws, env: env}, `sleep 1 && touch -r p7/d233 /tmp/t1 && printf 'gitdir: ../../.git\n' > p7/d233/.git && touch -r /tmp/t1 p7/d233 && echo PLANTED`)
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "PLANTED") {
		t.Fatalf("the agent's script did not run (the test is broken):\n%s%s", r.stdout, r.stderr)
	}
	if m := dcTrace.FindAllStringSubmatch(r.stderr, -1); len(m) < 2 || m[1][1] == "0" {
		t.Fatalf("the exit check answered for no directory from the cache: the test cannot fail\n%s", r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(ws, "p7/d233/.git")); err == nil {
		t.Fatalf("a .git planted after the exit check's records were read stayed in the tree:\n%s", r.stderr)
	}
}
