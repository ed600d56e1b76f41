//go:build linux

// End-to-end tests of the directory cache (issue 16): a start reads again
// only the directories that changed since the last run, and no protection
// is lost on the way: what the agent plants, with its directory's mtime
// set back, and what the host creates between two runs are found.
package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// dcEnv is a home and a state directory of the test's own, outside the
// workspace.
func dcEnv(t *testing.T) []string {
	t.Helper()
	base := workspace(t)
	home, state := filepath.Join(base, "home"), filepath.Join(base, "state")
	os.MkdirAll(home, 0o755)
	return []string{"HOME=" + home, "XDG_STATE_HOME=" + state, "JAIL_TRACE=1"}
}

// dcTree makes a workspace with a few levels of directories, old enough
// (dircache.Margin) for their records to be kept.
func dcTree(t *testing.T) string {
	t.Helper()
	ws := workspace(t)
	for _, d := range []string{"a/b/c", "a/d", "e"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(ws, d, "f.txt"), []byte("x\n"), 0o644)
	}
	time.Sleep(1100 * time.Millisecond)
	return ws
}

var dcTrace = regexp.MustCompile(`directory cache \([^)]*\): (\d+) unchanged, (\d+) read`)

// dcUnchanged is how many directories the start answered from the cache
// (the first trace line: the plan's walk).
func dcUnchanged(t *testing.T, stderr string) int {
	t.Helper()
	m := dcTrace.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no directory cache trace line (JAIL_TRACE=1):\n%s", stderr)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestDirCacheUsed: the second start on an unchanged tree reads nothing
// again (else the tests below could not fail).
func TestDirCacheUsed(t *testing.T) {
	env, ws := dcEnv(t), dcTree(t) // the home first: dcTree's wait makes it old enough to be kept (dircache.Margin)
	mustCode(t, run(t, runOpts{dir: ws, env: env}, "--", "/bin/true"), 0)
	r := run(t, runOpts{dir: ws, env: env}, "--", "/bin/true")
	mustCode(t, r, 0)
	if m := dcTrace.FindStringSubmatch(r.stderr); m == nil || m[1] == "0" || m[2] != "0" {
		t.Fatalf("the second start on an unchanged tree: %v\n%s", m, r.stderr)
	}
}

// TestDirCacheAgentResetsMtime: in one run the agent plants a secret and a
// startup file and sets their directory's times back to what they were
// (touch -r: to the nanosecond); the next run must still find both: the
// secret unreadable, the startup file read-only. A cache keyed by mtime
// would answer for that directory with the names it had before.
func TestDirCacheAgentResetsMtime(t *testing.T) {
	env, ws := dcEnv(t), dcTree(t) // the home first: dcTree's wait makes it old enough to be kept (dircache.Margin)
	mustCode(t, run(t, runOpts{dir: ws, env: env}, "--", "/bin/true"), 0)
	r := sh(t, runOpts{dir: ws, env: env}, `touch -r a/b /tmp/times && echo TOPSECRET > a/b/.env && echo 'echo pwned' > a/b/.envrc && `+
		`echo '[core] hooksPath = /tmp' > a/b/.gitmodules && touch -r /tmp/times a/b && echo PLANTED`)
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "PLANTED") {
		t.Fatalf("the agent's script did not run (the test is broken):\n%s%s", r.stdout, r.stderr)
	}
	r = sh(t, runOpts{dir: ws, env: env}, `cat a/b/.env; echo; (echo x >> a/b/.gitmodules) 2>/dev/null && echo WROTE; echo DONE`)
	mustCode(t, r, 0)
	if dcUnchanged(t, r.stderr) == 0 {
		t.Fatalf("the cache answered for no directory: the test cannot fail\n%s", r.stderr)
	}
	if strings.Contains(r.stdout, "TOPSECRET") || strings.Contains(r.stdout, "WROTE") || !strings.Contains(r.stdout, "DONE") {
		t.Fatalf("a file planted with its directory's mtime set back was not protected in the next run:\n%s%s", r.stdout, r.stderr)
	}
}

// TestDirCacheHostCreates: a secret the host creates between two runs, in
// a directory the cache knows, is unreadable in the next.
func TestDirCacheHostCreates(t *testing.T) {
	env, ws := dcEnv(t), dcTree(t) // the home first: dcTree's wait makes it old enough to be kept (dircache.Margin)
	mustCode(t, run(t, runOpts{dir: ws, env: env}, "--", "/bin/true"), 0)
	os.WriteFile(filepath.Join(ws, "a/b/c/id_rsa"), []byte("HOSTKEY\n"), 0o600)
	r := sh(t, runOpts{dir: ws, env: env}, `cat a/b/c/id_rsa; echo DONE`)
	mustCode(t, r, 0)
	if dcUnchanged(t, r.stderr) == 0 {
		t.Fatalf("the cache answered for no directory: the test cannot fail\n%s", r.stderr)
	}
	if strings.Contains(r.stdout, "HOSTKEY") || !strings.Contains(r.stdout, "DONE") {
		t.Fatalf("a key the host created between two runs was readable:\n%s%s", r.stdout, r.stderr)
	}
}

// TestDirCacheExitSweep: the exit check goes through the cache too; a
// .git the agent plants two levels down (deeper than the sentinel
// watches), with the directory's times set back, still leaves the tree.
func TestDirCacheExitSweep(t *testing.T) {
	env, ws := dcEnv(t), dcTree(t) // the home first: dcTree's wait makes it old enough to be kept (dircache.Margin)
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	for _, d := range []string{"objects", "refs"} {
		os.MkdirAll(filepath.Join(ws, ".git", d), 0o755)
	}
	os.WriteFile(filepath.Join(ws, ".git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	time.Sleep(1100 * time.Millisecond)
	mustCode(t, run(t, runOpts{dir: ws, env: env}, "--", "/bin/true"), 0)
	r := sh(t, runOpts{dir: ws, env: env}, `touch -r a/b /tmp/times && printf 'gitdir: ../../.git\n' > a/b/.git && touch -r /tmp/times a/b && echo PLANTED`)
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "PLANTED") {
		t.Fatalf("the agent's script did not run (the test is broken):\n%s%s", r.stdout, r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(ws, "a/b/.git")); err == nil {
		t.Fatalf("a .git planted with its directory's mtime set back stayed in the tree:\n%s", r.stderr)
	}
	if m := dcTrace.FindAllStringSubmatch(r.stderr, -1); len(m) < 2 || m[1][1] == "0" {
		t.Fatalf("the exit check answered for no directory from the cache: the test cannot fail\n%s", r.stderr)
	}
}

// TestDirCacheHidden: the cache is in jail's state directory, which the
// sandbox can neither list nor write even where the workspace contains it.
func TestDirCacheHidden(t *testing.T) {
	ws := dcTree(t)
	home := filepath.Join(workspace(t), "home")
	os.MkdirAll(home, 0o755)
	state := filepath.Join(ws, "state")
	env := []string{"HOME=" + home, "XDG_STATE_HOME=" + state}
	mustCode(t, run(t, runOpts{dir: ws, env: env}, "--", "/bin/true"), 0)
	dc := filepath.Join(state, "jail", "dircache")
	files, _ := filepath.Glob(filepath.Join(dc, "*.dc"))
	if len(files) == 0 {
		t.Fatalf("no cache file in %s after a run (the test is broken)", dc)
	}
	r := sh(t, runOpts{dir: ws, env: env}, `d=`+dc+`; ls -A "$d" 2>/dev/null | grep -q . && echo LISTED; cat "$d"/*.dc 2>/dev/null | grep -q JAILDC && echo READ; `+
		`(echo x > "$d/planted.dc") 2>/dev/null && echo PLANTED; for f in `+strings.Join(files, " ")+`; do (echo x >> "$f") 2>/dev/null && echo APPENDED; done; echo DONE`)
	mustCode(t, r, 0)
	for _, bad := range []string{"LISTED", "READ", "PLANTED", "APPENDED"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("the sandbox reached the directory cache: %s\n%s", bad, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "DONE") {
		t.Fatalf("probe did not finish:\n%s%s", r.stdout, r.stderr)
	}
}
