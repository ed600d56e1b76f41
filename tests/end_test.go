//go:build linux

package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The run's end: the exit check starts on init's exit message, while the
// kernel tears init down, and the cleanups overlap; these tests hold what
// must not change with it.

// endHome makes a HOME (with its XDG directories) of the test's own, so that
// what a run leaves in the registry, the quarantine or the trails is this
// run's alone.
func endHome(t *testing.T) (home string, env []string) {
	t.Helper()
	home, err := os.MkdirTemp(testHome, "end-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	os.Chmod(home, 0o755)
	env = []string{"HOME=" + home}
	for k, v := range map[string]string{
		"XDG_STATE_HOME":  filepath.Join(home, ".local", "state"),
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_CACHE_HOME":  filepath.Join(home, ".cache"),
		"XDG_DATA_HOME":   filepath.Join(home, ".local", "share"),
		"XDG_RUNTIME_DIR": filepath.Join(home, ".runtime"),
	} {
		if err := os.MkdirAll(v, 0o755); err != nil {
			t.Fatal(err)
		}
		env = append(env, k+"="+v)
	}
	os.Chmod(filepath.Join(home, ".runtime"), 0o700)
	return home, env
}

// endLeftovers lists what of the supervisor pid is on the host: its cgroup
// directories (named jail-PID-...), its registry entry and control socket,
// its sentinel run record.
func endLeftovers(home string, pid int) []string {
	var left []string
	_ = filepath.WalkDir("/sys/fs/cgroup", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), fmt.Sprintf("jail-%d-", pid)) {
			left = append(left, "cgroup "+p)
			return filepath.SkipDir
		}
		if strings.Count(p, "/") > 6 {
			return filepath.SkipDir // the groups jail makes are near the top
		}
		return nil
	})
	for _, pat := range []string{".runtime/jail/*.json", ".runtime/jail/*.sock", ".local/state/jail/run/*.json", ".local/state/jail/run/*.sock", ".local/state/jail/quarantine/*/run.json"} {
		m, _ := filepath.Glob(filepath.Join(home, pat))
		left = append(left, m...)
	}
	return left
}

// lastTrailEvent returns the type of the last event of the only trail
// under home.
func lastTrailEvent(t *testing.T, home string) (string, map[string]any) {
	t.Helper()
	trails, _ := filepath.Glob(filepath.Join(home, ".local/state/jail/audit/*.jsonl"))
	if len(trails) != 1 {
		t.Fatalf("want one trail under %s, found %v", home, trails)
	}
	b, err := os.ReadFile(trails[0])
	if err != nil {
		t.Fatal(err)
	}
	var last map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		last = nil
		if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
			t.Fatalf("trail line %q: %v", sc.Text(), err)
		}
	}
	typ, _ := last["type"].(string)
	return typ, last
}

// TestEndLeavesNothing: while a sandbox runs, its registry entry, control
// socket, sentinel record (and, as root, cgroups) exist; once jail has
// exited, none is left, and the trail ends with the exit event, already
// written when jail's wait returns. Seen failing on a build that removed
// the cgroups in the background without waiting for them, and on one that
// wrote the exit event without waiting for its write.
func TestEndLeavesNothing(t *testing.T) {
	home, env := endHome(t)
	ws := workspace(t)
	for round := 0; round < 3; round++ {
		os.RemoveAll(filepath.Join(home, ".local/state/jail/audit"))
		cmd := exec.Command(jail(t), "--quiet", "--", "/bin/sh", "-c", "sleep 0.4; exit 7")
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid := cmd.Process.Pid
		// What the run makes, seen while it runs: the test can fail.
		kinds := func(l []string) map[string]bool {
			k := map[string]bool{}
			for _, p := range l {
				switch {
				case strings.HasPrefix(p, "cgroup "):
					k["cgroup"] = true
				case strings.HasSuffix(p, "/run.json"):
					k["sentinel record"] = true
				case strings.HasSuffix(p, ".json"):
					k["registry entry"] = true
				case strings.HasSuffix(p, ".sock"):
					k["control socket"] = true
				}
			}
			return k
		}
		want := []string{"registry entry", "control socket", "sentinel record"}
		if os.Getuid() == 0 {
			want = append(want, "cgroup") // unprivileged here: no delegated cgroup
		}
		var during []string
		var missing []string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			during = endLeftovers(home, pid)
			missing = nil
			for _, w := range want {
				if !kinds(during)[w] {
					missing = append(missing, w)
				}
			}
			if len(missing) == 0 {
				break
			}
		}
		err := cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		left := endLeftovers(home, pid)
		if code != 7 {
			t.Fatalf("exit code %d (%v), want 7:\n%s", code, err, stderr.String())
		}
		if len(missing) > 0 {
			t.Fatalf("while the sandbox ran, no %v was found (only %v): the test cannot fail", missing, during)
		}
		if len(left) > 0 {
			t.Fatalf("round %d: left on the host after jail exited: %v\n(while it ran: %v)", round, left, during)
		}
		typ, ev := lastTrailEvent(t, home)
		if typ != "exit" {
			t.Fatalf("round %d: the trail's last event is %q, want the exit event: %v", round, typ, ev)
		}
		if c, _ := ev["code"].(float64); c != 7 {
			t.Fatalf("round %d: the exit event says code %v, want 7: %v", round, ev["code"], ev)
		}
	}
}

// TestEndCheckSeesLastWrites: the agent leaves a process behind that keeps
// writing .git files into 30 directories, and exits. The exit check now
// starts on init's exit message, before init itself is gone: every .git
// must still be taken out of the tree, which holds only if the message
// comes after every other process of the sandbox is dead. Seen failing
// (58 .git files left in 6 runs) on a build whose init sent its exit
// message without killing and reaping the rest first (leaving that to the
// kernel's pid namespace teardown at its own exit). Not seen failing on
// one that sent it just before its kill(-1): the writer then dies within
// microseconds, long before the check's first stat.
func TestEndCheckSeesLastWrites(t *testing.T) {
	_, env := endHome(t)
	ws := workspace(t)
	for i := 0; i < 30; i++ {
		d := filepath.Join(ws, fmt.Sprintf("d%02d", i))
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		os.Chmod(d, 0o777)
	}
	os.Chmod(ws, 0o777) // as root the sandbox writes as host nobody
	script := `(while :; do for d in d*; do echo "gitdir: ../x" > $d/.git; done; done) & sleep 0.05; exit 0`
	for round := 0; round < 6; round++ {
		r := sh(t, runOpts{dir: ws, env: env}, script)
		mustCode(t, r, 0)
		if !strings.Contains(r.stderr, " the agent left in the writable trees w") {
			t.Fatalf("round %d: the writer's .git files were not taken out at all (the test cannot fail):\n%s", round, r.stderr)
		}
		var left []string
		_ = filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Name() == ".git" {
				// An empty .git (the writer killed between the open and
				// the write) makes git fail: the check leaves it.
				if fi, err := d.Info(); err == nil && fi.Size() > 0 {
					left = append(left, p)
				}
			}
			return nil
		})
		if len(left) > 0 {
			t.Fatalf("round %d: written by a process of the sandbox after the exit check began, left in the tree: %v\n%s", round, left, r.stderr)
		}
	}
}

// TestEndCheckSeesLastProtectedWrites: the agent leaves a process behind
// that keeps making a protected path that was absent at start (.mcp.json,
// the sentinel's) and keeps writing a hook into the project's agent config
// (.claude/settings.json, the agent-config guard's), and exits. Their last
// writes come microseconds before init kills the writer: the watches have
// not read them when the run's end stops them (it removes the watches and
// closes their descriptors last, and what a watch had not read is gone with
// it). The exit checks look at the files themselves: neither may be left.
// Seen failing on main before this test (the hook left in 5 rounds of 6):
// the guard took a rewrite of the agent that raced its own write for that
// write (settle), and its last check found "no change". The .mcp.json half
// was not seen failing end to end, even on a build without the exit
// check's CheckAbsent: the watch reads each event within the ~1 ms the end
// takes to start; sentinel's TestLastWriteBeforeStop holds it.
func TestEndCheckSeesLastProtectedWrites(t *testing.T) {
	e := acfgSetup(t)
	for _, p := range []string{e.ws, filepath.Join(e.ws, ".claude")} {
		os.Chmod(p, 0o777) // as root the sandbox writes as host nobody
	}
	settings := filepath.Join(e.ws, ".claude", "settings.json")
	os.Chmod(settings, 0o666)
	script := `(while :; do echo '{"mcpServers": {"x": {"command": "/tmp/pwned"}}}' > .mcp.json; ` +
		`printf '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch /tmp/pwned-last"}]}]}}' > .claude/settings.json; done) & sleep 0.05; exit 0`
	for round := 0; round < 6; round++ {
		r := sh(t, runOpts{dir: e.ws, env: e.env}, script, e.flags()...)
		mustCode(t, r, 0)
		if !strings.Contains(r.stderr, " the agent left in the writable trees w") {
			t.Fatalf("round %d: no .mcp.json was taken out at all (the test cannot fail):\n%s", round, r.stderr)
		}
		if _, err := os.Lstat(filepath.Join(e.ws, ".mcp.json")); err == nil {
			t.Errorf("round %d: .mcp.json, made by a process of the sandbox just before its end, left in the workspace\n%s", round, r.stderr)
			os.Remove(filepath.Join(e.ws, ".mcp.json"))
		}
		if b, _ := os.ReadFile(settings); strings.Contains(string(b), "pwned-last") {
			t.Errorf("round %d: the hook written into .claude/settings.json just before the end is left: %s\n%s", round, b, r.stderr)
			os.WriteFile(settings, []byte(acfgProjectSettings), 0o666)
		}
	}
}
