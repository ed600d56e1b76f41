package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/notice"
	"github.com/jail-sandbox/jail/policy"
)

// What a line rests on is checked as the process sees it: this test's own
// process, whose /usr is the host's, writable, and whose sudo stand-ins
// are set-user-ID or not.
func TestSayCannotWork(t *testing.T) {
	var fs unix.Statfs_t
	if err := unix.Statfs("/usr", &fs); err != nil {
		t.Fatal(err)
	}
	usrReadOnly := fs.Flags&unix.ST_RDONLY != 0
	dir := t.TempDir()
	plain, setid := filepath.Join(dir, "plain", "sudo"), filepath.Join(dir, "setid", "sudo")
	for _, p := range []string{plain, setid} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(setid, 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		argv []string
		want bool
	}{
		{setid, []string{"sudo", "true"}, true},
		{plain, []string{"sudo", "true"}, false},
		{"sudo", []string{"sudo", "true"}, false}, // not a path the root can be read at
		{filepath.Join(dir, "missing", "sudo"), []string{"sudo"}, false},
		// The host's /usr, as this process sees it: writable, unless this
		// machine's is not.
		{"/usr/bin/apt-get", []string{"apt-get", "install", "jq"}, usrReadOnly},
	} {
		var buf strings.Builder
		r := &runner{pol: &policy.Policy{}}
		r.notes = notice.New(&buf, notice.Options{})
		r.sayCannotWork(os.Getpid(), c.path, c.argv)
		if got := strings.Contains(buf.String(), "cannot "); got != c.want {
			t.Errorf("%s %q: said %v, want %v: %q", c.path, c.argv, got, c.want, buf.String())
		}
	}
}

// docker's line rests on a socket the host has where the CLI looks and the
// sandbox does not, and on no DOCKER_HOST inside.
func TestHostSocketHidden(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "run"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Bound by a name relative to the directory: a socket's path has a
	// bound (108 bytes) a CI's temporary directory can pass.
	t.Chdir(dir)
	l, err := net.Listen("unix", filepath.Join("run", "docker.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	host := filepath.Join(dir, "run", "docker.sock")
	plain := filepath.Join(dir, "run", "plain.sock")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A root where the sandbox sees the host's socket at the same path:
	// the host's own.
	shown := "/"
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(dir, "run"))
	empty := t.TempDir()
	for _, c := range []struct {
		name  string
		root  string
		paths []string
		env   []string
		want  bool
	}{
		{"on the host, hidden inside", empty, []string{host}, nil, true},
		{"through the host's XDG_RUNTIME_DIR", empty, []string{"/nowhere/docker.sock", "$XDG_RUNTIME_DIR/docker.sock"}, nil, true},
		{"shown inside", shown, []string{host}, nil, false},
		{"not a socket", empty, []string{plain}, nil, false},
		{"nothing there", empty, []string{filepath.Join(dir, "none.sock")}, nil, false},
		{"DOCKER_HOST inside", empty, []string{host}, []string{"DOCKER_HOST=tcp://127.0.0.1:2375"}, false},
		{"DOCKER_HOST empty", empty, []string{host}, []string{"DOCKER_HOST="}, true},
	} {
		if got := hostSocketHidden(c.root, c.paths, c.env, "DOCKER_HOST"); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
