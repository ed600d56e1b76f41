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

// TestDirCacheWideTree: in a tree wide enough that the start's walk and
// the exit check stat its directories in parallel (dircache.PrefetchMin),
// the agent plants a .git and a secret with their directories' times set
// back, and the host creates a key between two runs: the exit check takes
// the .git out, and the next run finds the secret and the key unreadable.
func TestDirCacheWideTree(t *testing.T) {
	ws, env := workspace(t), dcEnv(t)
	for i := 0; i < 300; i++ {
		d := filepath.Join(ws, fmt.Sprintf("p%d", i/30), fmt.Sprintf("d%03d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "f.go"), []byte("package x\n"), 0o644)
	}
	os.MkdirAll(filepath.Join(ws, ".git/objects"), 0o755)
	os.MkdirAll(filepath.Join(ws, ".git/refs"), 0o755)
	os.WriteFile(filepath.Join(ws, ".git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	time.Sleep(1100 * time.Millisecond) // dircache.Margin
	mustCode(t, run(t, runOpts{dir: ws, env: env}, "--", "/bin/true"), 0)
	r := sh(t, runOpts{dir: ws, env: env}, `touch -r p5/d150 /tmp/t1 && printf 'gitdir: ../../.git\n' > p5/d150/.git && touch -r /tmp/t1 p5/d150 && `+
		`touch -r p6/d200 /tmp/t2 && echo TOPSECRET > p6/d200/.env && touch -r /tmp/t2 p6/d200 && echo PLANTED`)
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "PLANTED") {
		t.Fatalf("the agent's script did not run (the test is broken):\n%s%s", r.stdout, r.stderr)
	}
	if m := dcTrace.FindAllStringSubmatch(r.stderr, -1); len(m) < 2 || m[1][1] == "0" {
		t.Fatalf("the exit check answered for no directory from the cache: the test cannot fail\n%s", r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(ws, "p5/d150/.git")); err == nil {
		t.Errorf("a .git planted with its directory's times set back stayed in the tree:\n%s", r.stderr)
	}
	os.WriteFile(filepath.Join(ws, "p8/d250/id_rsa"), []byte("HOSTKEY\n"), 0o600)
	r = sh(t, runOpts{dir: ws, env: env}, `cat p6/d200/.env p8/d250/id_rsa; echo DONE`)
	mustCode(t, r, 0)
	if n := dcUnchanged(t, r.stderr); n < 256 {
		t.Fatalf("the start answered %d directories from the cache, too few for its parallel stat: the test cannot fail\n%s", n, r.stderr)
	}
	if strings.Contains(r.stdout, "TOPSECRET") || strings.Contains(r.stdout, "HOSTKEY") || !strings.Contains(r.stdout, "DONE") {
		t.Fatalf("a planted secret or a key the host created was readable in the next run:\n%s%s", r.stdout, r.stderr)
	}
}
