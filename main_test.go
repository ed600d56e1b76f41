//go:build linux

package jail_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/jail-sandbox/jail"
)

// TestMain calls jail.Init first, as every program that starts sandboxes
// must: Start re-executes this test binary as the sandbox's supervisor
// (and it re-executes itself as init). The tests get a HOME and state
// directory of their own, never the real user's.
func TestMain(m *testing.M) {
	jail.Init()
	home, err := os.MkdirTemp("", "jail-api-home")
	if err != nil {
		panic(err)
	}
	os.Chmod(home, 0o755)
	for k, v := range map[string]string{"HOME": home, "XDG_STATE_HOME": filepath.Join(home, ".local/state"),
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"), "XDG_CACHE_HOME": filepath.Join(home, ".cache"), "XDG_RUNTIME_DIR": ""} {
		os.Setenv(k, v)
	}
	ws, err := os.MkdirTemp("", "jail-api-ws")
	if err != nil {
		panic(err)
	}
	os.Chmod(ws, 0o755)
	os.Chdir(ws)
	code := m.Run()
	os.RemoveAll(ws)
	os.RemoveAll(home)
	os.Exit(code)
}
