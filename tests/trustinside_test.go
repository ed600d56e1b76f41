//go:build linux

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The ErrInside fallback (config.TrustStore.CheckInside), end to end:
// nested trusted projects ws (memory only) and ws/sub (deny secret.txt),
// both git work trees. A command run in sub's sandbox replaces
// sub/deeper with a symlink to ../elsewhere (a directory of the outer
// tree). The user's next run from sub/deeper ($PWD keeps the link)
// resolves to ws/elsewhere: git's top level is ws and Inner, which
// looks at the resolved current directory, finds no inner project, so
// the run would get ws's file alone and read ../sub/secret.txt. The path
// the user typed lies in sub: the run is refused in one line naming sub
// and the ways on, and the first way (--workspace sub, from sub) keeps
// the deny. On a build with the CheckInside call removed from
// config/resolve.go the run is still refused, by the second door
// (sandbox/reach.go cwdLinks: a $PWD through a link in another work
// tree), and the test fails on the line; TestProjectFileInsideLinkedOutNoTree
// is the case where CheckInside is the only door.
func TestProjectFileInsideLinkedOut(t *testing.T) {
	h := newHome(t)
	ws := workspace(t)
	sub := filepath.Join(ws, "sub")
	for _, d := range []string{ws, sub} {
		if out, err := exec.Command("git", "init", "-q", d).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
	}
	writeFile(t, filepath.Join(ws, ".jail.toml"), "memory = \"2G\"\n")
	writeFile(t, filepath.Join(sub, ".jail.toml"), "deny = [\"secret.txt\"]\n")
	writeFile(t, filepath.Join(sub, "secret.txt"), "s3cret\n")
	writeFile(t, filepath.Join(sub, "deeper", "x"), "")
	writeFile(t, filepath.Join(ws, "elsewhere", "y"), "")
	mustCode(t, run(t, runOpts{env: h.env, dir: ws}, "trust", "--yes"), 0)
	so := runOpts{env: h.env, dir: sub}
	mustCode(t, run(t, so, "trust", "--yes"), 0)
	// The agent, in sub's sandbox: the deny holds, and it swaps deeper
	// for a link out of sub.
	r := sh(t, so, `cat secret.txt 2>/dev/null || echo DENIED; rm -r deeper && ln -s ../elsewhere deeper`)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "DENIED" {
		t.Fatalf("the inner project's file not applied: %q %s", r.stdout, r.stderr)
	}
	deeper := filepath.Join(sub, "deeper")
	if l, err := os.Readlink(deeper); err != nil || l != "../elsewhere" {
		t.Fatalf("the sandbox could not replace deeper with a link: the test checks nothing (%q %v)", l, err)
	}
	do := runOpts{env: append(append([]string{}, h.env...), "PWD="+deeper), dir: deeper}
	r = sh(t, do, `cat ../sub/secret.txt; true`)
	oneLine(t, r, filepath.Join(sub, ".jail.toml")+" is trusted for "+sub, "holds the current directory", "--workspace "+sub, "--workspace "+ws)
	if strings.Contains(r.stdout, "s3cret") {
		t.Fatalf("the secret was read: %q", r.stdout)
	}
	// The same from the resolved directory (no link on the way): the
	// user is in the outer project, which is what runs.
	r = sh(t, runOpts{env: h.env, dir: filepath.Join(ws, "elsewhere")}, `echo ok`)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "ok" {
		t.Fatalf("a run from the outer project's directory: %q %s", r.stdout, r.stderr)
	}
	// The way on the line names: --workspace sub keeps sub's deny.
	r = sh(t, so, `cat secret.txt 2>/dev/null || echo DENIED`, "--workspace", sub)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "DENIED" {
		t.Fatalf("--workspace the inner project: %q %s", r.stdout, r.stderr)
	}
}

// TestProjectFileInsideLinkedOutNoTree is TestProjectFileInsideLinkedOut
// where CheckInside is the only door: sub is no work tree (its file
// trusted by path, for runs from it, which Inner makes its workspace), and
// the link is planted by a run of the outer project, where it leads
// within the workspace it was made in: sandbox/reach.go's cwdLinks, which
// refuses a $PWD through a link in another work tree or an earlier run's
// writable tree, lets it be. The run from sub/deeper would get the outer
// file alone (no deny, its memory) with ws writable. Seen failing on a
// build with the CheckInside call removed from config/resolve.go: it
// started and printed s3cret.
func TestProjectFileInsideLinkedOutNoTree(t *testing.T) {
	h := newHome(t)
	ws := workspace(t)
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	sub := filepath.Join(ws, "sub")
	writeFile(t, filepath.Join(ws, ".jail.toml"), "memory = \"2G\"\n")
	inner := filepath.Join(sub, ".jail.toml")
	writeFile(t, inner, "deny = [\"secret.txt\"]\n")
	writeFile(t, filepath.Join(sub, "secret.txt"), "s3cret\n")
	writeFile(t, filepath.Join(sub, "deeper", "x"), "")
	writeFile(t, filepath.Join(ws, "elsewhere", "y"), "")
	wo := runOpts{env: h.env, dir: ws}
	mustCode(t, run(t, wo, "trust", "--yes"), 0)
	mustCode(t, run(t, wo, "trust", "--yes", inner), 0)
	deeper := filepath.Join(sub, "deeper")
	// A run of the outer project swaps deeper for a link out of sub (no
	// run from sub before: sub in the written-trees record would make
	// cwdLinks refuse the link; TestProjectFileInsideLinkedOut has that).
	mustCode(t, sh(t, wo, `rm -r sub/deeper && ln -s ../elsewhere sub/deeper`), 0)
	if l, err := os.Readlink(deeper); err != nil || l != "../elsewhere" {
		t.Fatalf("the sandbox could not replace deeper with a link: the test checks nothing (%q %v)", l, err)
	}
	do := runOpts{env: append(append([]string{}, h.env...), "PWD="+deeper), dir: deeper}
	r := sh(t, do, `cat ../sub/secret.txt; true`)
	if strings.Contains(r.stdout, "s3cret") {
		t.Fatalf("the run from sub/deeper lost sub's deny: %q %s", r.stdout, r.stderr)
	}
	oneLine(t, r, inner+" is trusted for "+sub, "holds the current directory")
	// From sub itself (no link on the way), sub's file applies.
	r = sh(t, runOpts{env: h.env, dir: sub}, `cat secret.txt 2>/dev/null || echo DENIED`)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "DENIED" {
		t.Fatalf("the inner project's file not applied from it: %q %s", r.stdout, r.stderr)
	}
}
