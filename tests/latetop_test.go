//go:build linux

package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A top-level directory (or file) the host makes on the root filesystem
// after the sandbox has started is visible inside (the read-only view of
// "/" is the host's own filesystem; only places that existed at the start
// are hidden under tmpfs), but Landlock gives it no rights: its files cannot
// be read and its programs cannot run (its names can be listed: READ_DIR
// on "/" reaches every directory beneath). Before the fix the agent read
// the secret, ran the program and read the file at "/" (full ABI and ABI
// 1; degraded mode already granted only the entries present at the start).
// Root only: only root can make a top-level directory.
func TestLateTopLevelDirUnreadable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a top-level directory")
	}
	for _, c := range []struct {
		name     string
		flags    []string
		listRoot bool
	}{
		{"full-abi", nil, true},
		// The oldest ABI pins the same way (READ_DIR is ABI 1).
		{"abi-1", []string{"--x-landlock-max-abi", "1"}, true},
		// No mount namespace: Landlock alone stands in for the mounts and
		// grants only the entries it found at the start (cover). It grants
		// nothing on "/" itself (READ_DIR there would list the names in
		// every hidden place of the host), so `ls /` fails there.
		{"degraded", []string{"--x-degraded"}, false},
	} {
		t.Run(c.name, func(t *testing.T) { lateTopLevel(t, c.flags, c.listRoot) })
	}
}

func lateTopLevel(t *testing.T, flags []string, listRoot bool) {
	ws := workspace(t)
	dir := fmt.Sprintf("/jail-latetop-%d", os.Getpid())
	file := dir + ".txt"
	os.RemoveAll(dir)
	os.Remove(file)
	t.Cleanup(func() { os.RemoveAll(dir); os.Remove(file) })

	// The host makes the places once the sandbox says it runs, then tells
	// it to go on (files in the workspace; sleeps only to poll).
	made := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(50 * time.Second)
		for {
			if _, err := os.Stat(filepath.Join(ws, "ready")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				made <- fmt.Errorf("the sandbox never said ready")
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			err = os.WriteFile(dir+"/secret", []byte("LATE-SECRET\n"), 0o644)
		}
		if err == nil {
			err = os.WriteFile(dir+"/prog", []byte("#!/bin/sh\necho LATE-RAN\n"), 0o755)
		}
		if err == nil {
			err = os.WriteFile(file, []byte("LATE-FILE\n"), 0o644)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(ws, "go"), nil, 0o644)
		}
		made <- err
	}()
	script := fmt.Sprintf(`
: > ready
i=0; while [ ! -e go ] && [ $i -lt 1000 ]; do sleep 0.05; i=$((i+1)); done
[ -e go ] || { echo NO-GO; exit 3; }
[ -d %[1]s ] && echo VISIBLE
cat %[1]s/secret 2>&1
%[1]s/prog 2>&1
sh %[1]s/prog 2>&1
cat %[2]s 2>&1
# What must keep working: listing "/", walking it, reading the system.
ls / | grep -q '^etc$' && echo LS-ROOT
cd / && find / -maxdepth 1 -name usr | grep -q usr && echo FIND-ROOT
cat /etc/passwd >/dev/null && echo ETC
head -c1 /proc/self/status >/dev/null && echo PROC
/bin/true && echo EXEC
cd %[3]s && echo x > w && cat w >/dev/null && echo WS
exit 0
`, dir, file, ws)
	r := sh(t, runOpts{dir: ws}, script, flags...)
	if err := <-made; err != nil {
		t.Fatalf("host side: %v", err)
	}
	mustCode(t, r, 0)
	for _, leak := range []string{"LATE-SECRET", "LATE-RAN", "LATE-FILE"} {
		if strings.Contains(r.stdout, leak) {
			t.Errorf("the sandbox reached %s in a top-level place made after its start:\n%s", leak, r.stdout)
		}
	}
	// Without these the test proves nothing: the place was there, and the
	// sandbox could still do its ordinary work.
	wants := []string{"VISIBLE", "ETC", "PROC", "EXEC", "WS"}
	if listRoot {
		wants = append(wants, "LS-ROOT", "FIND-ROOT")
	}
	for _, want := range wants {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("missing %s:\nstdout:\n%s\nstderr:\n%s", want, r.stdout, r.stderr)
		}
	}
}
