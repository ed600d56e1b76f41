//go:build linux

package tests

// Codex's app-server daemon state (issue 11): ~/.codex/app-server-daemon/
// holds the daemon's pid file (with the process identity the host's codex
// checks before it signals it) and a symlink to the updater's socket, which
// the host's codex follows to connect; ~/.codex/app-server-control/ holds
// the control socket the host's codex connects to. Written from inside,
// they would make the host's codex signal, trust or connect to what the
// agent chose, during the run (a live socket) or after it (a symlink). The
// codex profile gives the sandbox its own copies (jail-owned caches): the
// daemon works inside, the host's are never touched.

import (
	"os"
	"strings"
	"testing"
)

func TestProfileCodexDaemonStateSeparate(t *testing.T) {
	h := newProfHome(t)
	for _, d := range []string{"~/.codex/app-server-daemon", "~/.codex/app-server-control"} {
		if err := os.MkdirAll(h.path(d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	hostPid := `{"pid":1,"processStartTime":"host"}`
	if err := os.WriteFile(h.path("~/.codex/app-server-daemon/daemon.pid"), []byte(hostPid), 0o644); err != nil {
		t.Fatal(err)
	}
	// The socket is bound by a relative name from its directory: a test
	// home under a long base path would pass sun_path's 108 bytes.
	script := `d="$HOME/.codex/app-server-daemon"; c="$HOME/.codex/app-server-control"
printf '{"pid":4242}' > "$d/daemon.pid" && echo wrote-pid
ln -sf /tmp/agent-owned.sock "$d/daemon-updater.sock" && echo wrote-link
mkdir -p "$c" && cd "$c" && /usr/bin/python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(); print("listening")' app-server-control.sock
true`
	r := sh(t, runOpts{dir: h.ws, env: h.env}, script, "--profile", "codex")
	mustCode(t, r, 0)
	for _, m := range []string{"wrote-pid", "wrote-link", "listening"} {
		if !strings.Contains(r.stdout, m) {
			t.Errorf("inside, codex's daemon state is not writable (%s missing): the daemon would fail\nstdout:\n%s\nstderr:\n%s", m, r.stdout, r.stderr)
		}
	}
	if b, _ := os.ReadFile(h.path("~/.codex/app-server-daemon/daemon.pid")); string(b) != hostPid {
		t.Errorf("the host's daemon.pid was rewritten from inside: %q", b)
	}
	if _, err := os.Lstat(h.path("~/.codex/app-server-daemon/daemon-updater.sock")); err == nil {
		t.Errorf("a socket symlink the agent chose is in the host's ~/.codex/app-server-daemon")
	}
	if _, err := os.Lstat(h.path("~/.codex/app-server-control/app-server-control.sock")); err == nil {
		t.Errorf("a control socket made inside is in the host's ~/.codex/app-server-control (the host's codex would connect to the agent's server)")
	}
}
