package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

func TestNotFoundLine(t *testing.T) {
	home := t.TempDir()
	bin := filepath.Join(home, ".local", "bin")
	ssh := filepath.Join(home, ".ssh", "bin")
	for _, d := range []string{bin, ssh} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(bin, "mytool"), filepath.Join(ssh, "keytool")} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := bin + ":" + ssh + ":/nonexistent"
	const init = ": command not found inside the sandbox"
	for _, tt := range []struct {
		name, cmd string
		exec      bool
		msg       string
		want      string
	}{
		{"on the host neither", "nosuchcmd-jail", false, "nosuchcmd-jail" + init,
			"nosuchcmd-jail: command not found, inside the sandbox or on the host (the same PATH)"},
		{"a path the host lacks too", "./nosuch", false, "./nosuch" + init,
			"./nosuch: no such file, inside the sandbox or on the host"},
		{"hidden under the home", "mytool", false, "mytool" + init,
			"mytool: command not found inside the sandbox: the host's is ~/.local/bin/mytool, which the sandbox hides; `read` ~/.local/bin shows it"},
		{"hidden, for jail exec", "mytool", true, "mytool" + init,
			"mytool: command not found inside the sandbox: the host's is ~/.local/bin/mytool, which the sandbox hides; start the sandbox with `runnable` mytool to run it (or `read` ~/.local/bin)"},
		{"in a secret place: no advice", "keytool", true, "keytool" + init,
			"keytool: command not found inside the sandbox: the host's is ~/.ssh/bin/keytool, which the sandbox hides"},
		{"another message", "nosuchcmd-jail", false, "nosuchcmd-jail: not executable: permission denied", ""},
	} {
		if got := notFoundLine(tt.msg, tt.cmd, path, home, home, tt.exec); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
