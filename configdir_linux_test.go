package jail_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/policy"
)

// TestStartHidesConfigDir: a sandbox started through the Go API hides
// jail's config directory ($XDG_CONFIG_HOME/jail: the user's config,
// profiles and trust records) as one started by the CLI does, also when it
// does not exist yet and lies in the workspace: what the agent wrote there
// would be read by the next run of jail's CLI (a config that opens the
// network or the home, a trust record for the agent's own .jail.toml).
// Seen failing on main (ad705ff): only the CLI hid it (cmd/jail's
// protectConfigDir), so through the API the agent wrote config.toml,
// trust.json and a profile into the workspace's cfg/jail.
func TestStartHidesConfigDir(t *testing.T) {
	for _, existing := range []bool{true, false} {
		ws, err := os.MkdirTemp("", "jail-api-cfgws")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(ws) })
		os.Chmod(ws, 0o755) // the agent (uid 65534 when root starts it) enters it
		cfg := filepath.Join(ws, "cfg")
		if existing {
			if err := os.MkdirAll(filepath.Join(cfg, "jail"), 0o700); err != nil {
				t.Fatal(err)
			}
			os.Chmod(cfg, 0o755)
			if err := os.WriteFile(filepath.Join(cfg, "jail", "config.toml"), []byte("hostname = \"mine\"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		t.Setenv("XDG_CONFIG_HOME", cfg)
		p := policy.Default()
		p.Cwd = ws
		p.Command = []string{"sh", "-c", `mkdir -p "$0" && cd "$0" || exit 9
cat jail/config.toml 2>/dev/null && echo READ
mkdir -p jail/profiles 2>/dev/null
printf 'write = ["/"]\n' > jail/config.toml 2>/dev/null && echo WROTE
echo '{"version":1,"files":{}}' > jail/trust.json 2>/dev/null && echo TRUST
echo x > jail/profiles/evil.toml 2>/dev/null && echo PROFILE
true`, cfg}
		sb, err := jail.Start(context.Background(), &p, jail.Options{LogPath: filepath.Join(ws, "log")})
		if err != nil {
			t.Fatalf("existing=%v: Start: %v", existing, err)
		}
		code, err := sb.Wait(context.Background())
		out, _ := os.ReadFile(sb.LogPath())
		sb.Close()
		if err != nil || code != 0 {
			t.Fatalf("existing=%v: exit %d, %v\n%s", existing, code, err, out)
		}
		for _, w := range []string{"READ", "WROTE", "TRUST", "PROFILE"} {
			if strings.Contains(string(out), w) {
				t.Errorf("existing=%v: jail's config directory reachable inside (%s):\n%s", existing, w, out)
			}
		}
		for _, name := range []string{"trust.json", "profiles/evil.toml"} {
			if _, err := os.Stat(filepath.Join(cfg, "jail", name)); err == nil {
				t.Errorf("existing=%v: the sandbox planted %s", existing, name)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(cfg, "jail", "config.toml")); strings.Contains(string(b), "write") {
			t.Errorf("existing=%v: the sandbox wrote config.toml: %q", existing, b)
		}
	}
}
