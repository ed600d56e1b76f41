//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewEnvrcLeaves (session 14): a .envrc the agent creates at the top
// of the workspace or of a repository inside it must not stay on the host:
// direnv runs it when the user enters the directory (without asking where
// direnv.toml's [whitelist] allows the directory, else after one `direnv
// allow`). Only an existing .envrc was masked; on main's binary both new
// ones stayed. Control: a .env the agent creates in the project is its own
// work and stays.
func TestNewEnvrcLeaves(t *testing.T) {
	home, ws := workspace(t), workspace(t)
	fsWrite(t, ws, ".git/HEAD", "ref: refs/heads/main\n", 0o644)
	fsWrite(t, ws, "vendor/lib/.git/HEAD", "ref: refs/heads/main\n", 0o644)
	c := run(t, runOpts{dir: ws, env: []string{"HOME=" + home, "XDG_STATE_HOME=" + workspace(t)}}, "--", "/bin/sh", "-c",
		`echo 'touch /tmp/pwned' > .envrc; echo 'touch /tmp/pwned' > vendor/lib/.envrc; echo A=1 > .env; true`)
	mustCode(t, c, 0)
	for _, p := range []string{".envrc", "vendor/lib/.envrc"} {
		if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%s the agent created is on the host: direnv runs it outside jail\nstderr:\n%s", p, c.stderr)
		}
	}
	if got := fsReadFile(t, filepath.Join(ws, ".env")); strings.TrimSpace(got) != "A=1" {
		t.Errorf(".env = %q: the project's own new .env must stay\n%s", got, c.stderr)
	}
}
