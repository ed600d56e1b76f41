//go:build linux

package tests

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The agent of a rootful start is host nobody: root's supplementary groups
// stay outside. setgroups(2) is denied in the sandbox's user namespace (so
// init cannot drop them there), the gid map maps only 0 to nobody, and
// the root file system is bound without an id map: a supplementary group
// kept from the caller (host gid 0, adm, ...) would still count in every
// permission check of the host's files, shown inside as 65534. Both ways
// of starting init (the lean init's entry, and --x-fork-init) are checked.
// A user's start keeps the user's own groups, exactly those: the agent is
// that user.
func TestRootfulAgentNoHostGroups(t *testing.T) {
	rootful := os.Geteuid() == 0
	var cred *syscall.Credential
	secret := "/nonexistent"
	if rootful {
		// Owned by neither root nor nobody, readable by group 0 alone:
		// only a kept host group 0 reads it. The caller holds groups 0
		// and 4 (adm), as root under sudo does.
		secret = filepath.Join(hostDir(t), "group-only")
		if err := os.WriteFile(secret, []byte("host-group-secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(secret, 12345, 0); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(secret, 0o040); err != nil {
			t.Fatal(err)
		}
		cred = &syscall.Credential{Uid: 0, Gid: 0, Groups: []uint32{0, 4}}
	}
	want := 0 // a rootful agent: no supplementary group at all
	if !rootful {
		gs, err := os.Getgroups()
		if err != nil {
			t.Fatal(err)
		}
		want = len(gs)
	}
	script := "grep '^Groups:' /proc/self/status; cat " + secret + " 2>/dev/null || echo denied"
	for _, flag := range []string{"", "--x-fork-init"} {
		args := []string{"--quiet"}
		if flag != "" {
			args = append(args, flag)
		}
		args = append(args, "--", "/bin/sh", "-c", script)
		out, code := runCred(t, cred, args...)
		if code != 0 {
			t.Fatalf("%q: exit %d:\n%s", flag, code, out)
		}
		var groups []string
		for _, l := range strings.Split(out, "\n") {
			if g, ok := strings.CutPrefix(l, "Groups:"); ok {
				groups = strings.Fields(g)
			}
		}
		if len(groups) != want {
			t.Errorf("%q: the agent's supplementary groups %v, want %d:\n%s", flag, groups, want, out)
		}
		if rootful && strings.Contains(out, "host-group-secret") {
			t.Errorf("%q: the agent read a host file readable only by group 0 (root's supplementary group):\n%s", flag, out)
		}
	}
}

// runCred runs jail with cred (nil: the test's own credentials) in a fresh
// workspace and returns its combined output and exit code.
func runCred(t *testing.T, cred *syscall.Credential, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, jail(t), args...)
	cmd.Dir = workspace(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return b.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("run jail %v: %v", args, err)
	}
	return b.String(), 0
}
