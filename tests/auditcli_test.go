//go:build linux

package tests

// Issue 12: the audit trail is usable. jail audit finds trails by id or
// as the latest; old trails are pruned (never a live one); a run that
// fails at setup still has a start and an exit event.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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

// trailID is the sandbox id in a default trail's name.
func trailID(t *testing.T, path string) string {
	t.Helper()
	m := regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-(.+)\.jsonl$`).FindStringSubmatch(filepath.Base(path))
	if m == nil {
		t.Fatalf("%s is not a default trail name", path)
	}
	return m[1]
}

func jailOut(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	out, err := jailCmd(t, env, args...).CombinedOutput()
	code := exitCode(t, err)
	return string(out), code
}

// jail audit with no argument or latest opens the newest trail of the
// audit directory; jail audit ID finds a trail by the id jail ps shows,
// also a running sandbox's whose trail is elsewhere (--audit).
func TestAuditLatestAndID(t *testing.T) {
	env, _ := stateEnv(t)
	for _, word := range []string{"first-" + marker(), "second-" + marker()} {
		if out, code := jailOut(t, env, "--", "echo", word); code != 0 {
			t.Fatalf("jail -- echo: %d %s", code, out)
		}
		time.Sleep(1100 * time.Millisecond) // trail names have second resolution
	}
	for _, args := range [][]string{{"audit"}, {"audit", "latest"}} {
		out, code := jailOut(t, env, args...)
		if code != 0 || !strings.Contains(out, "Command   echo second-") {
			t.Fatalf("jail %v: exit %d, want the second run's summary:\n%s", args, code, out)
		}
	}
	out, _ := jailOut(t, env, "audit", "latest")
	trail := regexp.MustCompile(`(?m)^Trail +(\S+)`).FindStringSubmatch(out)
	if trail == nil {
		t.Fatalf("no Trail line:\n%s", out)
	}
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(trail[1]), "*.jsonl"))
	if len(files) != 2 {
		t.Fatalf("trails %v", files)
	}
	for _, f := range files {
		first := f != trail[1]
		id := trailID(t, f)
		for _, ref := range []string{id, id[:6]} {
			out, code := jailOut(t, env, "audit", ref)
			if code != 0 || first != strings.Contains(out, "Command   echo first-") {
				t.Errorf("jail audit %s: exit %d:\n%s", ref, code, out)
			}
		}
	}
	if out, code := jailOut(t, env, "audit", "ffffffffffff"); code != 1 || !strings.Contains(out, "jail ps") {
		t.Errorf("an unknown id: exit %d, want 1 and a hint:\n%s", code, out)
	}

	// A running sandbox whose trail is not in the audit directory.
	m := marker()
	elsewhere := filepath.Join(auditDir(t), "elsewhere.jsonl")
	cmd := jailCmd(t, env, "--audit", elsewhere, "--", "sleep", m)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var id string
	auditWaitFor(t, 20*time.Second, "jail ps to list the sandbox", func() bool {
		out, _ := jailOut(t, env, "ps")
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, m) {
				id = strings.Fields(l)[0]
				return true
			}
		}
		return false
	})
	// (The writer flushes in batches: wait for the start event.)
	var code int
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if out, code = jailOut(t, env, "audit", "--json", id); code != 0 || strings.Contains(out, `"sleep","`+m) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code != 0 || !strings.Contains(out, `"sleep","`+m) {
		t.Fatalf("jail audit --json %s (running, --audit %s): exit %d:\n%s", id, elsewhere, code, out)
	}
}

// Retention at start: trails older than --audit-max-age go, then the
// oldest until --audit-max-total holds; a trail still being written
// stays however old it looks, and so does the new run's.
func TestAuditRetention(t *testing.T) {
	env, dir := stateEnv(t)
	// A live sandbox whose trail is in the audit directory, made to look
	// 100 days old.
	m := marker()
	// Without retention of its own: a pass would stamp the directory, and
	// the runs below (same bounds, within the hour) would skip theirs
	// (see TestAuditRetentionInterval).
	live := jailCmd(t, env, "--audit-max-age", "0", "--audit-max-total", "0", "--", "sleep", m)
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	var livePath string
	auditWaitFor(t, 20*time.Second, "the live trail", func() bool {
		fs, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		for _, f := range fs {
			if b, _ := os.ReadFile(f); strings.Contains(string(b), m) {
				livePath = f
				return true
			}
		}
		return false
	})
	old := time.Now().Add(-100 * 24 * time.Hour)
	var stale []string
	for i, age := range []time.Duration{90, 60, 3} {
		at := time.Now().Add(-age * 24 * time.Hour)
		p := filepath.Join(dir, at.UTC().Format("20060102T150405Z")+"-stale"+strconv.Itoa(i)+".jsonl")
		if err := os.WriteFile(p, []byte(strings.Repeat("x", 4096)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, at, at)
		stale = append(stale, p)
	}
	other := filepath.Join(dir, "notes.txt") // not a trail: never touched
	os.WriteFile(other, []byte("mine"), 0o600)
	os.Chtimes(other, old, old)
	os.Chtimes(livePath, old, old)

	if out, code := jailOut(t, env, "--audit-max-age", "720h", "--", "true"); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for i, p := range stale {
		_, err := os.Stat(p)
		if gone := os.IsNotExist(err); gone != (i < 2) {
			t.Errorf("--audit-max-age 720h: %s gone=%v", filepath.Base(p), gone)
		}
	}
	// (Trail names have second resolution; the newest is always kept.)
	time.Sleep(1100 * time.Millisecond)
	if out, code := jailOut(t, env, "--audit-max-total", "1", "--", "true"); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if _, err := os.Stat(stale[2]); !os.IsNotExist(err) {
		t.Errorf("--audit-max-total 1 kept %s", stale[2])
	}
	for _, p := range []string{livePath, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("retention removed %s: %v", p, err)
		}
	}
	if n := len(must(filepath.Glob(filepath.Join(dir, "*.jsonl")))); n != 2 {
		t.Errorf("%d trails left, want 2 (the live one, the last run's)", n)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
