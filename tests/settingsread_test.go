//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A settings file the agent made a FIFO in the workspace (its
// .claude/settings.json, named with --settings or the user's settings
// key) is refused at once, naming it, and --settings <(cmd) (a pipe of
// jail's own, /dev/fd/N) is still read. Seen failing on main's binary
// (2fb6e72): the run hung on the FIFO until the test's timeout killed it.
func TestSettingsFileFifoRefused(t *testing.T) {
	h := newHome(t)
	root := workspace(t)
	file := filepath.Join(root, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(file, 0o644); err != nil {
		t.Fatal(err)
	}
	o := runOpts{env: h.env, dir: root, timeout: 20 * time.Second}
	start := time.Now()
	r := run(t, o, "--settings", file, "--", "true")
	if r.code == 0 || r.code >= 128 || !strings.Contains(r.stderr, file) || !strings.Contains(r.stderr, "not a regular file") {
		t.Fatalf("--settings FIFO after %v: exit %d, stderr %q; want a refusal naming %s", time.Since(start), r.code, r.stderr, file)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	pw.WriteString(`{"network": {"allowedDomains": ["pipe.example"]}}`)
	pw.Close()
	o.extra = []*os.File{pr}
	r = run(t, o, "--settings", "/dev/fd/3", "--dry-run", "--", "true")
	if mustCode(t, r, 0); !strings.Contains(r.stderr, "/dev/fd/3: filesystem: no entry holds the current directory") {
		t.Fatalf("--settings /dev/fd/3 not read: %q", r.stderr)
	}
}

// The same for a --seccomp policy file in the workspace the agent made a
// FIFO. Seen failing on main's binary (2fb6e72): hung until the timeout.
func TestSeccompFileFifoRefused(t *testing.T) {
	h := newHome(t)
	root := workspace(t)
	file := filepath.Join(root, "seccomp.json")
	if err := syscall.Mkfifo(file, 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, runOpts{env: h.env, dir: root, timeout: 20 * time.Second}, "--seccomp", file, "--", "true")
	if r.code == 0 || r.code >= 128 || !strings.Contains(r.stderr, file) || !strings.Contains(r.stderr, "not a regular file") {
		t.Fatalf("--seccomp FIFO: exit %d, stderr %q; want a refusal naming %s", r.code, r.stderr, file)
	}
}
