//go:build linux

package tests

// Agents reach for `sudo apt-get install` when a tool is missing; inside
// jail sudo cannot work (no_new_privs, nosuid mounts, no capabilities), and
// its own words send the user the wrong way: "you may need to adjust the
// container configuration to disable the flag" as a user, "/etc/sudo.conf
// is owned by uid 65534, should be 0" when root started jail (session 40,
// trying it as a user would); so does apt-get install, which asks "are you
// root?" of an agent that sees uid 0 when root started jail. jail now says,
// once a program, why it cannot work and what to do instead. Stand-ins
// beside the test HOME, in the host's read-only tree, are what the sandbox
// runs: set-user-ID or not, named like sudo or not, a package manager
// asked to install or only to help.

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCannotWorkNamed(t *testing.T) {
	dir := besideHome(t, "execnote-")
	for _, f := range []struct {
		rel  string
		mode os.FileMode
	}{
		{"setid/sudo", 0o755 | os.ModeSetuid},
		{"setid/su", 0o755 | os.ModeSetuid},
		{"setid/other", 0o755 | os.ModeSetuid},
		{"shim/sudo", 0o755}, // an image's sudo that runs the command itself
		{"setid/apt-get", 0o755},
		{"setid/ping", 0o755},
		{"setid/strace", 0o755},
		{"setid/gdb", 0o755},
		{"setid/perf", 0o755},
	} {
		p := filepath.Join(dir, f.rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		// After the write: a write clears the set-id bits.
		if err := os.Chmod(p, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	const said = "whatever it says next: "
	for _, c := range []struct {
		name   string
		script string
		want   []string // the programs named
		flags  []string
	}{
		{"sudo twice, su once", "sudo -n true; sudo apt-get install jq; su -c true; exit 3", []string{"sudo", "su"}, nil},
		{"a set-id program of another name", "other; exit 3", nil, nil},
		{"a package manager", "apt-get --help; apt-get -y install jq; apt-get install git; exit 3", []string{"apt-get"}, nil},
		{"a package manager asked for help only", "apt-get --help; exit 3", nil, nil},
		{"ping", "ping -c1 example.com; exit 3", []string{"ping"}, nil},
		// Tracers without --allow-ptrace (seen: strace's "PTRACE_TRACEME:
		// Operation not permitted", gdb's "warning: ptrace: Operation not
		// permitted", and not a word from jail); perf always.
		{"tracers", "strace -V; strace -f true; gdb --version; gdb -batch -ex run ./a.out; perf report; perf record true; exit 3", []string{"strace", "gdb", "perf"}, nil},
		{"tracers with --allow-ptrace", "strace -f true; gdb -p 1; perf stat true; exit 3", []string{"perf"}, []string{"--allow-ptrace"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(append(c.flags[:len(c.flags):len(c.flags)], "--", "sh", "-c"), c.script)
			r := run(t, runOpts{env: []string{"PATH=" + filepath.Join(dir, "setid") + ":/usr/bin:/bin"}}, args...)
			mustCode(t, r, 3)
			if n := strings.Count(r.stderr, said); n != len(c.want) {
				t.Errorf("said %d times, want %d\nstderr:\n%s", n, len(c.want), r.stderr)
			}
			for _, p := range c.want {
				if !strings.Contains(r.stderr, "jail: "+p+" cannot ") {
					t.Errorf("%s not named\nstderr:\n%s", p, r.stderr)
				}
			}
		})
	}
	// docker: the daemon's socket where the CLI looks for a rootless one
	// ($XDG_RUNTIME_DIR, the test's own), hidden inside as every host
	// socket the sandbox would see is.
	// Open to the sandbox's user (besideHome's 0755), so that jail masks
	// the socket inside: it leaves one no sandbox user could reach as it is.
	rt := besideHome(t, "rt-")
	l, err := net.Listen("unix", filepath.Join(rt, "docker.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.WriteFile(filepath.Join(dir, "setid", "docker"), []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want bool
	}{
		{"docker ps", []string{"--", "sh", "-c", "docker ps; docker run --rm alpine; exit 3"}, true},
		{"docker --version", []string{"--", "docker", "--version"}, false},
		{"docker with DOCKER_HOST", []string{"--setenv", "DOCKER_HOST=tcp://127.0.0.1:2375", "--", "docker", "ps"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, runOpts{env: []string{"PATH=" + filepath.Join(dir, "setid") + ":/usr/bin:/bin", "XDG_RUNTIME_DIR=" + rt}}, c.args...)
			mustCode(t, r, 3)
			n := strings.Count(r.stderr, "jail: docker cannot reach the host's Docker daemon, whatever it says next")
			if want := map[bool]int{true: 1, false: 0}[c.want]; n != want {
				t.Errorf("said %d times, want %d\nstderr:\n%s", n, want, r.stderr)
			}
		})
	}
	t.Run("ping with the host's network", func(t *testing.T) {
		r := run(t, runOpts{env: []string{"PATH=" + filepath.Join(dir, "setid") + ":/usr/bin:/bin"}}, "--net", "host", "--", "ping", "-c1", "example.com")
		mustCode(t, r, 3)
		if strings.Contains(r.stderr, said) {
			t.Errorf("ping named under --net host\nstderr:\n%s", r.stderr)
		}
	})
	t.Run("a shim", func(t *testing.T) {
		r := run(t, runOpts{env: []string{"PATH=" + filepath.Join(dir, "shim") + ":/usr/bin:/bin"}}, "--", "sudo", "true")
		mustCode(t, r, 3)
		if strings.Contains(r.stderr, said) {
			t.Errorf("a sudo without the set-user-ID bit is named\nstderr:\n%s", r.stderr)
		}
	})
}
