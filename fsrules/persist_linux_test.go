package fsrules

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Submounts: a filesystem mounted inside the workspace is walked like the
// rest; a kernel filesystem there is hidden, not walked. The test re-executes itself in a new user and mount namespace (root
// there) to mount a tmpfs, as an ordinary user can.
const envSubmount = "JAIL_FSRULES_TEST_SUBMOUNT"

func TestMain(m *testing.M) {
	if dir := os.Getenv(envSubmount); dir != "" {
		os.Exit(submountChild(dir))
	}
	if dir := os.Getenv(envFileMount); dir != "" {
		os.Exit(fileMountChild(dir))
	}
	os.Exit(m.Run())
}

func submountChild(ws string) int {
	mnt := filepath.Join(ws, "mnt")
	if err := syscall.Mount("jail-test", mnt, "tmpfs", 0, "size=1m"); err != nil {
		fmt.Fprintln(os.Stderr, "mount:", err)
		return 3
	}
	// A kernel filesystem inside the workspace (devpts can be mounted in a
	// user namespace): not walked, hidden.
	if err := syscall.Mount("devpts", filepath.Join(ws, "pts"), "devpts", 0, "newinstance"); err != nil {
		fmt.Fprintln(os.Stderr, "mount devpts:", err)
		return 3
	}
	for _, rel := range []string{".env", ".git/config", "deep/.zshenv"} {
		p := filepath.Join(mnt, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
	}
	plan, err := Expand(Input{Workspace: ws, Writable: []string{ws}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	json.NewEncoder(os.Stdout).Encode(summary(ws, plan.Masks))
	return 0
}

func TestExpandSubmount(t *testing.T) {
	ws := tmp(t)
	must(t, os.Mkdir(filepath.Join(ws, "mnt"), 0o755))
	must(t, os.Mkdir(filepath.Join(ws, "pts"), 0o755))
	out := inUserNS(t, envSubmount, ws)
	var got []string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	eq(t, "masks", got, []string{"hide mnt/.env", "read-only mnt/.git/config", "read-only mnt/deep/.zshenv", "hide pts/"})
}

// inUserNS runs this test binary again with env=val in a new user and
// mount namespace (root there, as an ordinary user can be) and returns
// what it printed; exit status 3 is the child's own failure. Without user
// namespaces the test is skipped, but never in CI.
func inUserNS(t *testing.T, env, val string) []byte {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+val)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			t.Fatalf("child: %s", stderr.String())
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true, cannot skip: new user namespace: %v %s", err, stderr.String())
		}
		t.Skipf("new user namespace: %v %s", err, stderr.String())
	}
	return out
}
