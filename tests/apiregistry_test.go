//go:build linux

package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	jailapi "github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/policy"
)

// This file: a sandbox started by another program through the Go API is
// one of the user's sandboxes for jail's CLI too (issue 13): one registry.

// apiStartShimEnv makes this test binary a program embedding the API: it
// starts a detached sandbox of that name, prints it and its supervisor's
// pid, and exits.
const apiStartShimEnv = "JAIL_TEST_API_START"

func apiStartShim() {
	p := policy.Default()
	sb, err := jailapi.Start(context.Background(), &p, jailapi.Options{Name: os.Getenv(apiStartShimEnv), Detach: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pid := 0
	if in, err := sb.Inspect(); err == nil {
		pid = in.Pid
	}
	fmt.Println(sb.Name(), pid)
	os.Exit(0)
}

func TestAPISandboxSeenByCLI(t *testing.T) {
	ws := workspace(t)
	name := "api" + strings.ReplaceAll(marker(), ".", "")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), apiStartShimEnv+"="+name)
	out, err := cmd.CombinedOutput()
	var got string
	var pid int
	fmt.Sscan(string(out), &got, &pid)
	if pid > 0 {
		// By name, and by pid if that did not end it: the CLI not seeing
		// the sandbox is the failure this test looks for, and it must not
		// leave the sandbox running.
		t.Cleanup(func() {
			exec.Command(jail(t), "kill", "--now", name).Run()
			for i := 0; i < 100 && unix.Kill(pid, 0) == nil; i++ {
				time.Sleep(50 * time.Millisecond)
			}
			unix.Kill(pid, unix.SIGKILL)
		})
	}
	if err != nil || got != name || pid <= 0 {
		t.Fatalf("start through the API: %v\n%s", err, out)
	}
	if r := sessJail(t, ws, "", "ps"); !strings.Contains(r.stdout, name) {
		t.Fatalf("jail ps does not list the API's sandbox %s:\n%s%s", name, r.stdout, r.stderr)
	}
	if r := sessJail(t, ws, "", "exec", name, "--", "/bin/sh", "-c", "echo in-$0", name); r.code != 0 || r.stdout != "in-"+name+"\n" {
		t.Fatalf("jail exec into the API's sandbox: %d %q %s", r.code, r.stdout, r.stderr)
	}
	in := sessInspect(t, name)
	if r := sessJail(t, ws, "", "stop", name); r.code != 0 {
		t.Fatalf("jail stop: %d %s", r.code, r.stderr)
	}
	deadline := time.Now().Add(10 * time.Second)
	for unix.Kill(in.Pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if r := sessJail(t, ws, "", "ps"); strings.Contains(r.stdout, name) {
		t.Fatalf("jail ps lists the stopped sandbox:\n%s", r.stdout)
	}
}
