package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rustupHome lays out rustup's install under a fresh home, as rustup-init
// makes it: the proxies (cargo, rustc) in ~/.cargo/bin as links to rustup,
// which runs the default toolchain's program from RUSTUP_HOME. The
// stand-in rustup fails the way the real one does without RUSTUP_HOME.
func rustupHome(t *testing.T, rustupHome string) (string, []string) {
	t.Helper()
	home, env := everydayHome(t)
	bin := filepath.Join(home, ".cargo/bin")
	writeExec(t, filepath.Join(bin, "rustup"), `#!/bin/sh
h=${RUSTUP_HOME:-$HOME/.rustup}
tc=$(sed -n 's/^default_toolchain = "\(.*\)"$/\1/p' "$h/settings.toml" 2>/dev/null)
[ -n "$tc" ] || { echo "error: rustup could not choose a version of $(basename "$0") to run" >&2; exit 1; }
exec "$h/toolchains/$tc/bin/$(basename "$0")" "$@"
`)
	for _, p := range []string{"cargo", "rustc"} {
		if err := os.Symlink("rustup", filepath.Join(bin, p)); err != nil {
			t.Fatal(err)
		}
	}
	if rustupHome == "" {
		rustupHome = filepath.Join(home, ".rustup")
	} else {
		env = append(env, "RUSTUP_HOME="+rustupHome)
	}
	writeFile(t, filepath.Join(rustupHome, "settings.toml"), "default_toolchain = \"stable-test\"\n")
	tc := filepath.Join(rustupHome, "toolchains/stable-test/bin")
	writeExec(t, filepath.Join(tc, "cargo"), `#!/bin/sh
echo CARGO-RAN
grep -h CARGO-CONFIG "$HOME/.cargo/config.toml"
cat "$HOME/.cargo/credentials.toml" 2>/dev/null
mkdir -p "$HOME/.cargo/registry/index" && echo crate > "$HOME/.cargo/registry/index/fetched" && echo REGISTRY-WRITTEN
`)
	writeExec(t, filepath.Join(tc, "rustc"), "#!/bin/sh\necho RUSTC-RAN\n")
	writeFile(t, filepath.Join(home, ".cargo/config.toml"), "# CARGO-CONFIG-SEEN\n[build]\njobs = 1\n")
	writeMode(t, filepath.Join(home, ".cargo/credentials.toml"), "[registry]\ntoken = \"CARGO-TOKEN-SECRET\"\n", 0o600)
	env = append(env, "PATH="+bin+":/usr/local/bin:/usr/bin:/bin")
	return home, env
}

// A Rust toolchain installed by rustup (the way rust-lang.org installs
// it) works under the rust profile: run as the command, and run by
// whatever runs inside (an agent's cargo build). Before, `jail -P rust --
// cargo` stopped at setup (exit 125: the profile's cache ~/.cargo/registry
// lay in the read-only install tree ~/.cargo), `jail -- cargo` failed in
// rustup ("could not choose a version of cargo to run": ~/.rustup hidden),
// and an agent's cargo was not found at all. The toolchain, the proxies
// and cargo's configuration are read-only; its credentials stay hidden;
// what cargo fetches lands in jail's own cache, never in the host's.
func TestRustupToolchain(t *testing.T) {
	home, env := rustupHome(t, "")
	hostRegistry := filepath.Join(home, ".cargo/registry")

	r := run(t, runOpts{env: env}, "-P", "rust", "--", "cargo", "build")
	if r.code != 0 || !strings.Contains(r.stdout, "CARGO-RAN") {
		t.Fatalf("-P rust -- cargo: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "CARGO-CONFIG-SEEN") || !strings.Contains(r.stdout, "REGISTRY-WRITTEN") {
		t.Fatalf("cargo's configuration unseen, or its registry cache unwritable:\n%s\nstderr: %s", r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "CARGO-TOKEN-SECRET") {
		t.Fatalf("cargo's credentials were shown:\n%s", r.stdout)
	}
	if _, err := os.Stat(hostRegistry); err == nil {
		t.Fatalf("cargo fetched into the host's %s: the host's next build uses it", hostRegistry)
	}
	if !strings.Contains(r.stderr, filepath.Join(home, ".rustup")) {
		t.Errorf("no note names rustup's toolchains:\n%s", r.stderr)
	}

	// What the agent runs: cargo and rustc found on PATH by a shell.
	r = sh(t, runOpts{env: env}, `cargo >/dev/null && rustc
touch ~/.rustup/planted 2>/dev/null && echo PLANTED-TOOLCHAIN
touch ~/.cargo/bin/planted 2>/dev/null && echo PLANTED-BIN
echo '[alias]' >> ~/.cargo/config.toml 2>/dev/null && echo PLANTED-CONFIG
true`, "-P", "rust")
	if r.code != 0 || !strings.Contains(r.stdout, "RUSTC-RAN") {
		t.Fatalf("the agent's cargo and rustc under -P rust: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "PLANTED") {
		t.Fatalf("the host's toolchain, proxies or cargo configuration were writable:\n%s", r.stdout)
	}
	for _, p := range []string{".rustup/planted", ".cargo/bin/planted"} {
		if _, err := os.Stat(filepath.Join(home, p)); err == nil {
			t.Fatalf("%s planted on the host", p)
		}
	}

	// Without the profile, the command alone: its tree and rustup's home.
	r = run(t, runOpts{env: env}, "--", "rustc")
	if r.code != 0 || !strings.Contains(r.stdout, "RUSTC-RAN") {
		t.Fatalf("-- rustc: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// RUSTUP_HOME set on the host (a CI image's /usr/local/rustup, a home of
// one's own) is the one rustup uses inside: set there too, and shown.
func TestRustupHomeElsewhere(t *testing.T) {
	dir, err := os.MkdirTemp(testHome, "rustup-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	dir, _ = filepath.EvalSymlinks(dir)
	_, env := rustupHome(t, filepath.Join(dir, "rustup"))
	r := sh(t, runOpts{env: env}, `cargo; echo "RUSTUP_HOME=$RUSTUP_HOME"`, "-P", "rust")
	if r.code != 0 || !strings.Contains(r.stdout, "CARGO-RAN") || !strings.Contains(r.stdout, "RUSTUP_HOME="+filepath.Join(dir, "rustup")) {
		t.Fatalf("RUSTUP_HOME elsewhere: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}
