//go:build linux

package tests

// Issue 12: a run that fails at setup, or is interrupted before the
// command starts, still has a trail with a start and an exit event.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// stateEnv gives jail a state directory of the test's own (its default
// trails and registry).
func stateEnv(t *testing.T) (env []string, auditDir string) {
	t.Helper()
	st := t.TempDir()
	os.Chmod(st, 0o755)
	return []string{"XDG_STATE_HOME=" + st}, filepath.Join(st, "jail", "audit")
}

func jailCmd(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(jail(t), args...)
	cmd.Dir = workspace(t)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// checkTrailsComplete fails for a trail without a start or an exit event
// (an empty file included).
func checkTrailsComplete(t *testing.T, dir string) int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	for _, f := range files {
		evs := trailEvents(t, f)
		if len(evs) == 0 || evs[0]["type"] != "start" || evs[len(evs)-1]["type"] != "exit" {
			b, _ := os.ReadFile(f)
			t.Errorf("%s: an incomplete trail (%d bytes, %d events): %.300s", f, len(b), len(evs), b)
		}
	}
	return len(files)
}

// A setup that fails, or is interrupted before the command starts, still
// leaves a trail with a start and an exit event (never an empty file).
func TestAuditSetupFailureTrail(t *testing.T) {
	env, dir := stateEnv(t)
	out, err := jailCmd(t, env, "--require-landlock", "99", "--", "true").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 125 {
		t.Fatalf("exit %v, want 125: %s", err, out)
	}
	if n := checkTrailsComplete(t, dir); n != 1 {
		t.Fatalf("%d trails, want 1", n)
	}
	p, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	exit := eventsOf(trailEvents(t, p[0]), "exit")[0]
	if exit["reason"] != "setup_failed" || !strings.Contains(exit["error"].(string), "landlock") {
		t.Fatalf("exit event %v", exit)
	}
	// SIGTERM the moment the trail exists (inotify), while the rest of the
	// setup runs: the trail must not stay empty.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(in)
	if _, err := unix.InotifyAddWatch(in, dir, unix.IN_CREATE); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	for i := 0; i < 5; i++ {
		cmd := jailCmd(t, env, "--", "true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if _, err := unix.Read(in, buf); err != nil {
			t.Fatal(err)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}
	if n := checkTrailsComplete(t, dir); n != 6 {
		t.Errorf("%d trails, want 6", n)
	}
}
