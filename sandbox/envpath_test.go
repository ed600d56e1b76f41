package sandbox

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/ns"
)

func TestEnvPath(t *testing.T) {
	for v, want := range map[string]string{
		"/tmp/ssh-x/agent.1":                     "/tmp/ssh-x/agent.1",
		"/a/../b/sa.json":                        "/b/sa.json",
		"unix:///run/user/1000/docker.sock":      "/run/user/1000/docker.sock",
		"unix:path=/run/user/1000/bus,guid=abcd": "/run/user/1000/bus",
		"unix:abstract=/tmp/dbus-x":              "",
		"tcp://127.0.0.1:2375":                   "",
		"/usr/lib:/usr/local/lib":                "",
		"relative/path":                          "",
		"sk-ant-api03-xxxx":                      "",
		"":                                       "",
	} {
		if got := envPath(v); got != want {
			t.Errorf("envPath(%q) = %q, want %q", v, got, want)
		}
	}
}

// A variable passed by name (--env) whose value is a path the sandbox
// hides is named at start, with the --read that shows it and, for a
// socket, what showing it grants; one a protection hides (a key, a
// --deny) is said to stay hidden, with no advice to lift it.
func TestEnvPathNotes(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home")
	sd := filepath.Join(home, ".local/state/jail")
	write(t, filepath.Join(home, "sa.json"), "{}", 0o600)
	write(t, filepath.Join(home, "target", "x"), "", 0o644)
	write(t, filepath.Join(home, ".ssh/id_ed25519"), "key", 0o600)
	write(t, filepath.Join(sd, "x"), "", 0o600)
	write(t, filepath.Join(root, "srv/visible.json"), "{}", 0o644)
	write(t, filepath.Join(root, "srv/masked.json"), "{}", 0o644)
	sock := filepath.Join(root, "run", "agent.sock")
	write(t, filepath.Join(root, "run", "x"), "", 0o644)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	mounts := []ns.Mount{{Kind: ns.KindTmpfs, Path: home}, {Kind: ns.KindTmpfs, Path: filepath.Join(root, "run")},
		{Kind: ns.KindMask, Path: filepath.Join(root, "srv/masked.json"), Why: "a --deny rule"}}
	env := []string{"SSH_AUTH_SOCK=" + sock, "GOOGLE_APPLICATION_CREDENTIALS=" + filepath.Join(home, "sa.json"),
		"KEY=" + filepath.Join(home, ".ssh/id_ed25519"), "STATE=" + filepath.Join(sd, "x"), "VIS=" + filepath.Join(root, "srv/visible.json"),
		"MASKED=" + filepath.Join(root, "srv/masked.json"), "GONE=/nonexistent/x", "WORD=hello", "DOCKER_HOST=unix://" + sock,
		"CARGO_TARGET_DIR=" + filepath.Join(home, "target")}
	names := []string{"SSH_AUTH_SOCK", "GOOGLE_APPLICATION_CREDENTIALS", "KEY", "STATE", "VIS", "MASKED", "GONE", "WORD", "UNSET", "DOCKER_HOST", "CARGO_TARGET_DIR"}
	got := envPathNotes(names, env, home, sd, mounts)
	want := []string{
		"`env` SSH_AUTH_SOCK passes " + sock + ", which is hidden inside: `ssh-agent` lets ssh inside sign with your agent (through jail's relay",
		"`env` GOOGLE_APPLICATION_CREDENTIALS passes ~/sa.json, which is hidden inside: `read` ~/sa.json shows it read-only",
		"`env` KEY passes ~/.ssh/id_ed25519, which stays hidden inside (id_ed25519* (SSH keys)): the command cannot use it",
		"`env` MASKED passes " + filepath.Join(root, "srv/masked.json") + ", which stays hidden inside (a --deny rule): the command cannot use it",
		"`env` DOCKER_HOST passes " + sock + ", which is hidden inside: `read` " + sock + " shows it (a socket",
		"`env` CARGO_TARGET_DIR passes ~/target, which is hidden inside: `read` ~/target shows it read-only, `write` ~/target writable",
	}
	if len(got) != len(want) {
		t.Fatalf("notes:\n%s\nwant %d", strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("note %d:\n got %q\nwant %q...", i, got[i], want[i])
		}
		if !shownNote(got[i]) {
			t.Errorf("not said at start: %q", got[i])
		}
	}
}
