//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRepo makes dir the top level of a git work tree as git (and jail's
// hostgit.TopLevel) finds one: a .git directory with a HEAD, a config and
// hooks (which the sandbox keeps read-only, as in a real repository).
func fakeRepo(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"HEAD": "ref: refs/heads/main\n", "config": "[core]\n\trepositoryformatversion = 0\n"} {
		if err := os.WriteFile(filepath.Join(dir, ".git", name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A workspace chosen through a link the agent planted: run 1's command (in
// project P, a git work tree) points P/out at another directory the user
// can write; later the user does `cd P/out; jail -- ...`. The shell's $PWD
// is P/out, the kernel's current directory the other one, which became the
// writable workspace. Refused now, in one line naming the link, its target
// and the fix (cwdlink). Seen failing on main's binary (a34609b), as root and
// as jailtest: the second run wrote into the other project.
func TestCwdThroughPlantedLink(t *testing.T) {
	p := workspace(t)
	fakeRepo(t, p)
	victim := workspace(t)
	mustCode(t, sh(t, runOpts{dir: p}, `ln -s `+victim+` out`), 0)
	cwdThroughPlantedLink(t, p, victim)
}

// The same when the command also deleted .git/HEAD, after which git (and
// hostgit.TopLevel) no longer sees a work tree in P; the .git directory
// stays (its config and hooks are mounts inside). Seen failing with the
// check by hostgit.TopLevel (cwdlink's first version), as root and as
// jailtest: the second run wrote into the other project.
func TestCwdThroughPlantedLinkHeadless(t *testing.T) {
	p := workspace(t)
	fakeRepo(t, p)
	victim := workspace(t)
	mustCode(t, sh(t, runOpts{dir: p}, `rm -rf .git 2>/dev/null; ls .git/HEAD 2>/dev/null; ln -s `+victim+` out`), 0)
	if _, err := os.Stat(filepath.Join(p, ".git", "HEAD")); err == nil {
		t.Fatal("the sandbox could not delete .git/HEAD: the test checks nothing")
	}
	cwdThroughPlantedLink(t, p, victim)
}

func cwdThroughPlantedLink(t *testing.T, p, victim string) {
	t.Helper()
	link := filepath.Join(p, "out")
	if l, err := os.Readlink(link); err != nil || l != victim {
		t.Fatalf("the sandbox could not make the link: the test checks nothing (%q %v)", l, err)
	}
	// The user's shell: cd P/out leaves the kernel's cwd at the target and
	// $PWD at the path typed.
	o := runOpts{dir: link, env: []string{"PWD=" + link}}
	r := sh(t, o, `echo x > `+victim+`/planted`)
	if _, err := os.Stat(filepath.Join(victim, "planted")); err == nil {
		t.Fatalf("a start through a link in another work tree made its target the writable workspace: %s", r.stderr)
	}
	mustCode(t, r, 125)
	refused := func(r result) {
		t.Helper()
		for _, w := range []string{link, victim, "cd " + victim, "--workspace " + victim} {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("refusal lacks %q: %s", w, r.stderr)
			}
		}
		if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("not one line: %q", r.stderr)
		}
	}
	refused(r)
	// --dry-run says the same.
	r = run(t, o, "--dry-run", "--", "true")
	mustCode(t, r, 125)
	refused(r)
	// So does a session started there (jail run -d: the Go API, Cwd from
	// the process's $PWD).
	r = run(t, o, "run", "-d", "--name", "cwdlink-"+filepath.Base(p), "--", "sleep", "30")
	if r.code == 0 {
		run(t, runOpts{}, "kill", "cwdlink-"+filepath.Base(p))
		t.Fatalf("jail run -d started through the link: %s", r.stderr)
	}
	refused(r)

	// The fixes the line names work: cd to the real path, or --workspace.
	r = sh(t, runOpts{dir: victim, env: []string{"PWD=" + victim}}, `echo x > planted && echo ok`)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "ok" {
		t.Fatalf("cd to the real path: %q %s", r.stdout, r.stderr)
	}
	r = sh(t, o, `echo x > planted2 && echo ok`, "--workspace", victim)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "ok" {
		t.Fatalf("--workspace: %q %s", r.stdout, r.stderr)
	}
	// $PWD unset or stale is ignored: jail sees only the real directory
	// (nothing tells it a link was on the way; the shell's $PWD is the
	// only witness).
	for _, pwd := range []string{"PWD=", "PWD=" + p} {
		r = sh(t, runOpts{dir: link, env: []string{pwd}}, `pwd`)
		if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != victim {
			t.Fatalf("%s: started in %q, want %s: %s", pwd, r.stdout, victim, r.stderr)
		}
	}
}

// A link the user made outside every work tree (~/proj -> /data/proj, the
// common case) keeps working, and so does one inside a work tree that leads
// within that tree (the workspace is the same tree either way).
func TestCwdThroughUserLink(t *testing.T) {
	target := workspace(t)
	fakeRepo(t, target)
	if err := os.Mkdir(filepath.Join(target, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	home := workspace(t) // not in any work tree
	link := filepath.Join(home, "proj")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(target, "here")
	if err := os.Symlink(filepath.Join(target, "sub"), inner); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ pwd, want string }{
		{link, target},
		{inner, filepath.Join(target, "sub")},
		{filepath.Join(link, "here"), filepath.Join(target, "sub")},
	} {
		r := sh(t, runOpts{dir: c.pwd, env: []string{"PWD=" + c.pwd}}, `echo x > `+target+`/ok && pwd`)
		if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != c.want {
			t.Fatalf("PWD=%s: started in %q, want %s: %s", c.pwd, r.stdout, c.want, r.stderr)
		}
	}
}

// A planted link that leads into a trusted project inside another work
// tree: run 1's command (in P) points P/out at Q/lib, a directory the user
// trusted on its own inside the work tree Q (`jail trust` there, used with
// `--workspace Q/lib`). The readers then make Q/lib the workspace (the
// trusted project holding the current directory, trustsub), and a
// workspace the readers set skipped cwdlink's check as one the user typed:
// `cd P/out; jail` wrote into Q/lib. Refused now as any workspace chosen
// from the current directory (review15b). Seen failing on main's binary
// (30093d6), as root and as jailtest: the second run wrote into Q/lib.
func TestCwdThroughPlantedLinkToTrustedInner(t *testing.T) {
	h := newHome(t)
	p, q := workspace(t), workspace(t)
	fakeRepo(t, p)
	fakeRepo(t, q)
	lib := filepath.Join(q, "lib")
	writeFile(t, filepath.Join(lib, ".jail.toml"), "setenv = [\"FROM_LIB=yes\"]\n")
	mustCode(t, run(t, runOpts{env: h.env, dir: lib}, "trust", "--yes", filepath.Join(lib, ".jail.toml")), 0)
	mustCode(t, sh(t, runOpts{env: h.env, dir: p}, `ln -s `+lib+` out`), 0)
	link := filepath.Join(p, "out")
	if l, err := os.Readlink(link); err != nil || l != lib {
		t.Fatalf("the sandbox could not make the link: the test checks nothing (%q %v)", l, err)
	}
	o := runOpts{dir: link, env: append([]string{"PWD=" + link}, h.env...)}
	r := sh(t, o, `echo x > `+lib+`/planted`)
	if _, err := os.Stat(filepath.Join(lib, "planted")); err == nil {
		t.Fatalf("a start through a planted link made the trusted project it leads to the writable workspace: %s", r.stderr)
	}
	mustCode(t, r, 125)
	for _, w := range []string{link, lib, "cd " + lib} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("refusal lacks %q: %s", w, r.stderr)
		}
	}
	// The real path still narrows to the trusted project, its file applied.
	r = sh(t, runOpts{dir: lib, env: append([]string{"PWD=" + lib}, h.env...)}, `echo "$FROM_LIB" && pwd`)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "yes\n"+lib {
		t.Fatalf("from the real path: %q %s", r.stdout, r.stderr)
	}
}
