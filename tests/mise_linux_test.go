package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A node managed by mise: the shim in ~/.local/share/mise/shims is a link
// to mise, which runs the version ~/.config/mise/config.toml names from
// ~/.local/share/mise/installs. Inside, both directories were hidden: the
// shim fell through to the next node on PATH (another version than the
// host's shell runs), or failed. Under the node profile the shim works for
// the agent's shell too, and mise's directories are read-only.
func TestMiseShim(t *testing.T) {
	home, env := everydayHome(t)
	writeExec(t, filepath.Join(home, ".local/bin/mise"), `#!/bin/sh
conf=${MISE_CONFIG_DIR:-$HOME/.config/mise}/config.toml
v=$(sed -n 's/^node = "\(.*\)"$/\1/p' "$conf" 2>/dev/null)
[ -n "$v" ] || { echo "mise ERROR No version is set for shim: $(basename "$0")" >&2; exit 1; }
exec "${MISE_DATA_DIR:-$HOME/.local/share/mise}/installs/node/$v/bin/$(basename "$0")" "$@"
`)
	shims := filepath.Join(home, ".local/share/mise/shims")
	os.MkdirAll(shims, 0o755)
	if err := os.Symlink(filepath.Join(home, ".local/bin/mise"), filepath.Join(shims, "node")); err != nil {
		t.Fatal(err)
	}
	writeExec(t, filepath.Join(home, ".local/share/mise/installs/node/20.0.0/bin/node"), "#!/bin/sh\necho MISE-NODE-20\n")
	writeFile(t, filepath.Join(home, ".config/mise/config.toml"), "[tools]\nnode = \"20.0.0\"\n")
	// mise's data directory follows XDG_DATA_HOME, which the tests' own
	// environment sets elsewhere.
	env = append(env, "PATH="+shims+":"+filepath.Join(home, ".local/bin")+":/usr/local/bin:/usr/bin:/bin",
		"XDG_DATA_HOME="+filepath.Join(home, ".local/share"))

	r := run(t, runOpts{env: env}, "--", "node")
	if r.code != 0 || !strings.Contains(r.stdout, "MISE-NODE-20") {
		t.Fatalf("-- node through mise's shim: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = sh(t, runOpts{env: env}, `node
touch ~/.config/mise/planted 2>/dev/null && echo PLANTED
touch ~/.local/share/mise/installs/planted 2>/dev/null && echo PLANTED
true`, "-P", "node")
	if r.code != 0 || !strings.Contains(r.stdout, "MISE-NODE-20") || strings.Contains(r.stdout, "PLANTED") {
		t.Fatalf("-P node, the shell's node through mise: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}
