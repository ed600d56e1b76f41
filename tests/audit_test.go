//go:build linux

// End-to-end and adversarial tests of the audit trail (issue 7): every event
// type appears where it should in real runs, the sandbox can neither see nor
// rewrite its own trail, tampering is caught by `jail audit --verify`, a
// SIGKILLed supervisor leaves a verifiable file, and `jail audit` reads it.
//
// The trail is parsed and its hash chain recomputed here, independently of
// package audit, so a bug shared by the writer and the reader cannot hide.
package tests

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ---------------------------------------------------------------- helpers

// auditEvent is one complete line of a trail.
type auditEvent struct {
	Line int
	Raw  []byte
	M    map[string]any
	Seq  int64
	Type string
}

func (e auditEvent) str(k string) string {
	s, _ := e.M[k].(string)
	return s
}

func (e auditEvent) num(k string) float64 {
	f, _ := e.M[k].(float64)
	return f
}

func (e auditEvent) has(k string) bool { _, ok := e.M[k]; return ok }

func (e auditEvent) strs(k string) []string {
	a, _ := e.M[k].([]any)
	out := make([]string, 0, len(a))
	for _, v := range a {
		s, _ := v.(string)
		out = append(out, s)
	}
	return out
}

func (e auditEvent) obj(k string) map[string]any {
	m, _ := e.M[k].(map[string]any)
	return m
}

const auditGenesis = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

var (
	auditEnvelopeRE = regexp.MustCompile(`^\{"ts":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z)","seq":(\d+),"type":"([a-z_]+)","prev":"([0-9a-f]{64})"[,}]`)
	auditNameRE     = regexp.MustCompile(`^\d{8}T\d{6}Z-([A-Za-z0-9_-][A-Za-z0-9._-]{0,63})\.jsonl$`)
)

// auditParse parses a trail and checks its envelope and hash chain with no
// help from package audit. It returns the complete lines, the incomplete tail
// (bytes after the last newline) and the first problem found.
func auditParse(data []byte) (evs []auditEvent, tail []byte, err error) {
	prev := auditGenesis
	line := 0
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return evs, data, nil
		}
		raw := data[:i]
		data = data[i+1:]
		line++
		m := auditEnvelopeRE.FindSubmatch(raw)
		if m == nil {
			return evs, nil, fmt.Errorf("line %d: envelope is not ts,seq,type,prev first: %.200q", line, raw)
		}
		var obj map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		if err := dec.Decode(&obj); err != nil {
			return evs, nil, fmt.Errorf("line %d: not JSON: %v", line, err)
		}
		if dec.More() {
			return evs, nil, fmt.Errorf("line %d: more than one JSON value on the line", line)
		}
		if _, err := time.Parse(time.RFC3339Nano, string(m[1])); err != nil {
			return evs, nil, fmt.Errorf("line %d: ts: %v", line, err)
		}
		seq, _ := strconv.ParseInt(string(m[2]), 10, 64)
		if seq != int64(line) {
			return evs, nil, fmt.Errorf("line %d: seq %d, want %d", line, seq, line)
		}
		if string(m[4]) != prev {
			return evs, nil, fmt.Errorf("line %d: prev %s, want %s", line, m[4], prev)
		}
		sum := sha256.Sum256(raw)
		prev = hex.EncodeToString(sum[:])
		evs = append(evs, auditEvent{Line: line, Raw: append([]byte(nil), raw...), M: obj, Seq: seq, Type: string(m[3])})
	}
	return evs, nil, nil
}

// auditLoad reads a finished trail: it must verify, start with start and end
// with exit, each exactly once, with nothing after the last newline.
func auditLoad(t testing.TB, path string) []auditEvent {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read trail: %v", err)
	}
	evs, tail, err := auditParse(data)
	if err != nil {
		t.Fatalf("trail %s does not verify: %v", path, err)
	}
	if len(tail) > 0 {
		t.Fatalf("trail of a finished run ends with an incomplete line: %q", tail)
	}
	if len(evs) < 2 || evs[0].Type != "start" || evs[len(evs)-1].Type != "exit" {
		t.Fatalf("trail must run from start to exit, got %d events:\n%s", len(evs), auditDump(evs))
	}
	if n := len(auditOf(evs, "start")); n != 1 {
		t.Fatalf("%d start events", n)
	}
	if n := len(auditOf(evs, "exit")); n != 1 {
		t.Fatalf("%d exit events", n)
	}
	return evs
}

func auditOf(evs []auditEvent, typ string) []auditEvent {
	var out []auditEvent
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func auditDump(evs []auditEvent) string {
	var b strings.Builder
	for i, e := range evs {
		if i >= 40 {
			fmt.Fprintf(&b, "... %d more\n", len(evs)-i)
			break
		}
		raw := string(e.Raw)
		if len(raw) > 400 {
			raw = raw[:400] + "..."
		}
		b.WriteString(raw + "\n")
	}
	return b.String()
}

// auditExecs returns the exec events whose path is path.
func auditExecs(evs []auditEvent, path string) []auditEvent {
	var out []auditEvent
	for _, e := range auditOf(evs, "exec") {
		if e.str("path") == path {
			out = append(out, e)
		}
	}
	return out
}

// auditDir is a fresh directory outside the workspace, traversable by the
// sandbox's user (host nobody when root runs the tests).
func auditDir(t testing.TB) string {
	t.Helper()
	d := workspace(t)
	os.Chmod(d, 0o755)
	return d
}

// auditCLI runs `jail audit ARGS` (no sandbox).
func auditCLI(t testing.TB, args ...string) result {
	t.Helper()
	return run(t, runOpts{timeout: 30 * time.Second}, append([]string{"audit"}, args...)...)
}

func auditSameArgv(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// auditStart starts jail in the background.
func auditStart(t testing.TB, dir string, args ...string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
	t.Helper()
	return auditStartEnv(t, dir, nil, args...)
}

// auditStartEnv is auditStart with env added to the test's environment.
func auditStartEnv(t testing.TB, dir string, env []string, args ...string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(jail(t), args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	so, se := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = so, se
	if err := cmd.Start(); err != nil {
		t.Fatalf("start jail: %v", err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, so, se
}

// auditWaitFor polls cond until it holds or the deadline passes.
func auditWaitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func auditCountLines(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte{'\n'})
}

// auditWait waits for a background jail and returns its exit code (128+N for a signal).
func auditWait(t testing.TB, cmd *exec.Cmd, within time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			return 0
		}
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("wait jail: %v", err)
		}
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	case <-time.After(within):
		cmd.Process.Kill()
		<-done
		t.Fatalf("jail did not exit within %v", within)
		return -1
	}
}

// ---------------------------------------------------------------- lifecycle

// Every run records start, one exec per execve (the agent's own included) and
// exit, with the right facts; the file is the invoking user's, mode 0600.
func TestAuditLifecycle(t *testing.T) {
	trail := filepath.Join(auditDir(t), "run.jsonl")
	script := "/bin/true one; /bin/echo hi; exit 3"
	r := run(t, runOpts{}, "--audit", trail, "--", "/bin/sh", "-c", script)
	mustCode(t, r, 3)
	if !strings.Contains(r.stdout, "hi") {
		t.Fatalf("stdout %q", r.stdout)
	}
	fi, err := os.Lstat(trail)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("trail mode %v, want a regular file 0600", fi.Mode())
	}
	if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != os.Getuid() {
		t.Errorf("trail owned by uid %d, want the invoking uid %d", st.Uid, os.Getuid())
	}
	evs := auditLoad(t, trail)

	st := evs[0]
	if st.num("schema") != 1 {
		t.Errorf("start: schema %v, want 1", st.M["schema"])
	}
	if !auditSameArgv(st.strs("command"), []string{"/bin/sh", "-c", script}) {
		t.Errorf("start: command %q", st.strs("command"))
	}
	for _, k := range []string{"version", "id", "argv", "cwd", "uid", "gid", "pid", "root", "policy", "kernel"} {
		if !st.has(k) {
			t.Errorf("start lacks %q: %s", k, st.Raw)
		}
	}
	if int(st.num("uid")) != os.Getuid() || (st.M["root"] == true) != (os.Getuid() == 0) {
		t.Errorf("start: uid %v root %v, invoking uid %d", st.M["uid"], st.M["root"], os.Getuid())
	}
	if st.obj("policy") == nil {
		t.Errorf("start: policy is not an object: %s", st.Raw)
	}
	k := st.obj("kernel")
	for _, f := range []string{"release", "landlock_abi", "seccomp", "seccomp_notify", "cgroup_mode", "network_mode"} {
		if _, ok := k[f]; !ok {
			t.Errorf("start.kernel lacks %q: %s", f, st.Raw)
		}
	}
	if k["network_mode"] != "none" {
		t.Errorf("start.kernel.network_mode %v, want none (default)", k["network_mode"])
	}
	if m, _ := k["cgroup_mode"].(string); m != "v1" && m != "v2" && m != "none" {
		t.Errorf("start.kernel.cgroup_mode %q", m)
	}
	if k["seccomp_notify"] != true {
		t.Fatalf("start.kernel.seccomp_notify is %v: this kernel (6.x) offers user notification, exec auditing must be on", k["seccomp_notify"])
	}

	// The agent's own exec and each command it runs.
	if e := auditExecs(evs, "/bin/sh"); len(e) == 0 || !auditSameArgv(e[0].strs("argv"), []string{"/bin/sh", "-c", script}) {
		t.Errorf("no exec event for the agent itself (/bin/sh -c ...):\n%s", auditDump(evs))
	}
	for _, want := range [][]string{{"/bin/true", "one"}, {"/bin/echo", "hi"}} {
		e := auditExecs(evs, want[0])
		if len(e) != 1 {
			t.Errorf("%d exec events for %s, want 1:\n%s", len(e), want[0], auditDump(evs))
			continue
		}
		if !auditSameArgv(e[0].strs("argv"), want) || e[0].str("decision") != "allow" || e[0].num("pid") < 1 {
			t.Errorf("exec event %s", e[0].Raw)
		}
	}

	// pids in exec events are pids inside the sandbox: the exec'd process
	// keeps the pid the shell saw as $$.
	t.Run("exec pid is the sandbox pid", func(t *testing.T) {
		trail := filepath.Join(auditDir(t), "pid.jsonl")
		r := run(t, runOpts{}, "--audit", trail, "--", "/bin/sh", "-c", "echo $$; exec /bin/true pid-probe")
		mustCode(t, r, 0)
		evs := auditLoad(t, trail)
		e := auditExecs(evs, "/bin/true")
		if len(e) != 1 || strconv.Itoa(int(e[0].num("pid"))) != strings.TrimSpace(r.stdout) {
			t.Errorf("exec pid is not the sandbox pid %s (schema: pids inside the sandbox's pid namespace):\n%s", strings.TrimSpace(r.stdout), auditDump(e))
		}
	})
	t.Run("non-UTF-8 argv stays distinguishable", func(t *testing.T) {
		trail := filepath.Join(auditDir(t), "utf.jsonl")
		r := run(t, runOpts{}, "--audit", trail, "--", "/bin/sh", "-c", `/bin/true "$1"; /bin/true "$2"`, "sh", "a\xff", "a\xfe")
		mustCode(t, r, 0)
		e := auditExecs(auditLoad(t, trail), "/bin/true")
		if len(e) != 2 || auditSameArgv(e[0].strs("argv"), e[1].strs("argv")) {
			t.Errorf("two different argv (bytes 0xff, 0xfe) are recorded identically: the trail cannot tell what ran:\n%s", auditDump(e))
		}
	})

	ex := evs[len(evs)-1]
	if ex.num("code") != 3 || ex.str("reason") != "exited" {
		t.Errorf("exit event %s, want code 3 reason exited", ex.Raw)
	}
	for _, f := range []string{"wall_ms", "cpu_user_ms", "cpu_sys_ms", "peak_memory_bytes"} {
		if !ex.has(f) {
			t.Errorf("exit lacks %q: %s", f, ex.Raw)
		}
	}
	if ex.num("wall_ms") <= 0 {
		t.Errorf("exit wall_ms %v", ex.M["wall_ms"])
	}

	v := auditCLI(t, "--verify", trail)
	mustCode(t, v, 0)
	if !strings.Contains(v.stdout, "verified") {
		t.Errorf("--verify output %q", v.stdout)
	}

	t.Run("signaled", func(t *testing.T) {
		trail := filepath.Join(auditDir(t), "sig.jsonl")
		r := run(t, runOpts{}, "--audit", trail, "--", "/bin/sh", "-c", "kill -KILL $$")
		mustCode(t, r, 137)
		ex := auditLoad(t, trail)
		e := ex[len(ex)-1]
		if e.num("code") != 137 || e.str("reason") != "signaled" || e.str("signal") != "SIGKILL" {
			t.Errorf("exit event %s, want code 137 signaled SIGKILL", e.Raw)
		}
	})
	t.Run("not found", func(t *testing.T) {
		trail := filepath.Join(auditDir(t), "nf.jsonl")
		r := run(t, runOpts{}, "--audit", trail, "--", "no-such-command-audit")
		mustCode(t, r, 127)
		ex := auditLoad(t, trail)
		if e := ex[len(ex)-1]; e.num("code") != 127 {
			t.Errorf("exit event %s, want code 127", e.Raw)
		}
	})
	t.Run("no exec audit", func(t *testing.T) {
		trail := filepath.Join(auditDir(t), "nx.jsonl")
		r := run(t, runOpts{}, "--no-exec-audit", "--audit", trail, "--", "/bin/sh", "-c", "/bin/true")
		mustCode(t, r, 0)
		ex := auditLoad(t, trail)
		if n := len(auditOf(ex, "exec")); n != 0 {
			t.Errorf("--no-exec-audit still recorded %d execs", n)
		}
		if k := ex[0].obj("kernel"); k["seccomp_notify"] != false {
			t.Errorf("--no-exec-audit: start.kernel.seccomp_notify %v, want false", k["seccomp_notify"])
		}
	})
}

// ---------------------------------------------------------------- default path

func TestAuditDefaultPath(t *testing.T) {
	check := func(t *testing.T, dir string, ws string) string {
		t.Helper()
		auditDirPath := filepath.Join(dir, "jail", "audit")
		ents, err := os.ReadDir(auditDirPath)
		if err != nil {
			t.Fatalf("default audit directory: %v", err)
		}
		if len(ents) != 1 {
			t.Fatalf("want exactly one trail in %s, got %d", auditDirPath, len(ents))
		}
		name := ents[0].Name()
		m := auditNameRE.FindStringSubmatch(name)
		if m == nil {
			t.Fatalf("trail name %q is not <YYYYMMDDTHHMMSSZ>-<id>.jsonl", name)
		}
		when, err := time.Parse("20060102T150405Z", name[:16])
		if err != nil || time.Since(when) > 10*time.Minute || time.Until(when) > time.Minute {
			t.Errorf("trail name time %q is not the UTC start time (now %s)", name[:16], time.Now().UTC().Format(time.RFC3339))
		}
		if fi, _ := os.Stat(auditDirPath); fi.Mode().Perm() != 0o700 {
			t.Errorf("audit directory mode %v, want 0700", fi.Mode().Perm())
		}
		p := filepath.Join(auditDirPath, name)
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
			t.Errorf("trail mode %v, want 0600", fi.Mode().Perm())
		}
		evs := auditLoad(t, p)
		if id := evs[0].str("id"); id != m[1] {
			t.Errorf("start id %q does not match the file name id %q", id, m[1])
		}
		auditNoTrailIn(t, ws)
		return p
	}
	t.Run("XDG_STATE_HOME", func(t *testing.T) {
		state := auditDir(t)
		ws := workspace(t)
		r := run(t, runOpts{dir: ws, env: []string{"XDG_STATE_HOME=" + state}}, "--", "/bin/true")
		mustCode(t, r, 0)
		check(t, state, ws)
	})
	for _, xdg := range []string{"", "relative/state"} {
		t.Run(fmt.Sprintf("HOME with XDG_STATE_HOME=%q", xdg), func(t *testing.T) {
			home := auditDir(t)
			ws := workspace(t)
			r := run(t, runOpts{dir: ws, env: []string{"XDG_STATE_HOME=" + xdg, "HOME=" + home}}, "--", "/bin/true")
			mustCode(t, r, 0)
			check(t, filepath.Join(home, ".local", "state"), ws)
			// A relative XDG_STATE_HOME must be ignored, never resolved against
			// the (writable) workspace.
			if _, err := os.Stat(filepath.Join(ws, "relative")); err == nil {
				t.Errorf("a relative XDG_STATE_HOME created %s in the workspace", filepath.Join(ws, "relative"))
			}
		})
	}
}

// auditNoTrailIn fails if any .jsonl file exists under dir.
func auditNoTrailIn(t testing.TB, dir string) {
	t.Helper()
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			t.Errorf("an audit trail was written inside the sandbox-writable %s: %s", dir, p)
		}
		return nil
	})
}

// ---------------------------------------------------------------- hidden

// auditProbe lists, from inside the sandbox, every way the trail could be
// seen, read, reached through a file descriptor, or written.
func auditProbe(dir, trail string) string {
	return fmt.Sprintf(`d=%q; t=%q
find "$d" -name '*.jsonl' 2>/dev/null | sed 's/^/SEEN:/'
grep -rl '"prev":"' "$d" 2>/dev/null | sed 's/^/CONTENT:/'
if [ -n "$t" ]; then
  if [ -e "$t" ] || [ -L "$t" ]; then echo "EXISTS:$t"; fi
  if ls -a "$(dirname "$t")" 2>/dev/null | grep -qx "$(basename "$t")"; then echo "LISTED:$t"; fi
  if (echo '{"forged":1}' >> "$t") 2>/dev/null; then echo "APPENDED:$t"; fi
fi
for f in /proc/[0-9]*/fd/*; do
  l=$(readlink "$f" 2>/dev/null) || continue
  case "$l" in *.jsonl*|*/jail/audit*) echo "FD:$f:$l";; esac
done
echo PROBE-DONE`, dir, trail)
}

// auditProbeFindings returns the probe's findings other than the control copy.
func auditProbeFindings(t testing.TB, out, control string) []string {
	t.Helper()
	if !strings.Contains(out, "PROBE-DONE") {
		t.Fatalf("probe did not finish: %q", out)
	}
	var bad []string
	sawCtl := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if l == "" || l == "PROBE-DONE" {
			continue
		}
		if control != "" && (l == "SEEN:"+control || l == "CONTENT:"+control) {
			sawCtl[l[:strings.IndexByte(l, ':')]] = true
			continue
		}
		bad = append(bad, l)
	}
	if control != "" && (!sawCtl["SEEN"] || !sawCtl["CONTENT"]) {
		// The probe must find a visible copy of a trail: otherwise it could
		// not find the real one either, and the test would prove nothing.
		t.Fatalf("probe is blind: it did not find the visible control copy %s (saw %v); output:\n%s", control, sawCtl, out)
	}
	return bad
}

// auditControl plants a copy of a real trail at dir/ctl/copy.jsonl, readable
// by everyone: the probe must find it.
func auditControl(t testing.TB, dir string) string {
	t.Helper()
	src := filepath.Join(auditDir(t), "src.jsonl")
	mustCode(t, run(t, runOpts{}, "--audit", src, "--", "/bin/true"), 0)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	ctl := filepath.Join(dir, "ctl")
	os.MkdirAll(ctl, 0o755)
	os.Chmod(ctl, 0o755)
	p := filepath.Join(ctl, "copy.jsonl")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o644)
	return p
}

// The sandbox can neither see, read, reach through an fd, nor write its own
// trail, wherever the trail lies in a place the sandbox can view read-only.
func TestAuditHidden(t *testing.T) {
	type tc struct {
		name  string
		setup func(t *testing.T) (dir, trail string, env, flags []string, ws string)
	}
	cases := []tc{
		{"--audit under a --read dir", func(t *testing.T) (string, string, []string, []string, string) {
			d := auditDir(t)
			os.MkdirAll(filepath.Join(d, "logs"), 0o755)
			return d, filepath.Join(d, "logs", "trail.jsonl"), nil, []string{"-r", d}, ""
		}},
		{"--audit in a --read dir holding the workspace", func(t *testing.T) (string, string, []string, []string, string) {
			d := auditDir(t)
			ws := filepath.Join(d, "ws")
			os.MkdirAll(ws, 0o755)
			return d, filepath.Join(d, "trail.jsonl"), nil, []string{"-r", d}, ws
		}},
		{"default path, XDG_STATE_HOME under a --read dir", func(t *testing.T) (string, string, []string, []string, string) {
			d := auditDir(t)
			return d, "", []string{"XDG_STATE_HOME=" + filepath.Join(d, "state")}, []string{"-r", d}, ""
		}},
		{"default path, HOME made visible with --read", func(t *testing.T) (string, string, []string, []string, string) {
			d := auditDir(t)
			return d, "", []string{"XDG_STATE_HOME=", "HOME=" + d}, []string{"-r", d}, ""
		}},
		{"default path, HOME hidden", func(t *testing.T) (string, string, []string, []string, string) {
			d := auditDir(t)
			return d, "", []string{"XDG_STATE_HOME=", "HOME=" + d}, nil, ""
		}},
	}
	if os.Getuid() == 0 {
		// Root (CI) writes trails to system places the read-only root view shows.
		cases = append(cases, tc{"--audit under /var/log (visible via the root view)", func(t *testing.T) (string, string, []string, []string, string) {
			d, err := os.MkdirTemp("/var/log", "jail-audit-e2e-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(d) })
			os.Chmod(d, 0o755)
			// The trail's own directory is covered whole; the control copy
			// sits beside it, in the visible parent.
			os.MkdirAll(filepath.Join(d, "logs"), 0o755)
			return d, filepath.Join(d, "logs", "trail.jsonl"), nil, nil, ""
		}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, trail, env, flags, ws := c.setup(t)
			ctl := ""
			if len(flags) > 0 || os.Getuid() == 0 && strings.HasPrefix(dir, "/var/log") {
				ctl = auditControl(t, dir) // the dir is visible: a copy must be found
			}
			if ws == "" {
				ws = workspace(t)
			}
			args := append([]string{}, flags...)
			if trail != "" {
				args = append(args, "--audit", trail)
			}
			r := sh(t, runOpts{dir: ws, env: env}, auditProbe(dir, trail)+fmt.Sprintf("\necho ws > %q", filepath.Join(ws, "ws-ok")), args...)
			mustCode(t, r, 0)
			if b, err := os.ReadFile(filepath.Join(ws, "ws-ok")); err != nil || string(b) != "ws\n" {
				t.Errorf("the workspace was not writable: %v", err)
			}
			bad := auditProbeFindings(t, r.stdout, ctl)
			if ws != "" && filepath.Dir(trail) == filepath.Dir(ws) {
				// The trail's directory holds the workspace, so it cannot be
				// covered: the file alone is masked. Its name may show; its
				// content, an fd to it, or a write to it must not.
				var keep []string
				for _, b := range bad {
					if !strings.HasPrefix(b, "SEEN:") && !strings.HasPrefix(b, "EXISTS:") && !strings.HasPrefix(b, "LISTED:") {
						keep = append(keep, b)
					}
				}
				bad = keep
			}
			if len(bad) > 0 {
				t.Errorf("the sandbox could see, read, reach or write its audit trail:\n%s", strings.Join(bad, "\n"))
			}
			if trail == "" {
				ms, _ := filepath.Glob(filepath.Join(dir, "*", "jail", "audit", "*.jsonl"))
				ms2, _ := filepath.Glob(filepath.Join(dir, "*", "*", "jail", "audit", "*.jsonl"))
				ms = append(ms, ms2...)
				if len(ms) != 1 {
					t.Fatalf("want one default trail under %s, found %v", dir, ms)
				}
				trail = ms[0]
			}
			auditLoad(t, trail) // intact: an appended line would break the chain
		})
	}
}

func mustRead(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ---------------------------------------------------------------- refused placements

// A trail the sandbox could write is refused before anything runs (125),
// however the path is spelled.
func TestAuditRefusesWritablePlace(t *testing.T) {
	type tc struct {
		name  string
		setup func(t *testing.T, ws string) (trail string, env, flags []string)
	}
	cases := []tc{
		{"in the workspace", func(t *testing.T, ws string) (string, []string, []string) {
			return filepath.Join(ws, "trail.jsonl"), nil, nil
		}},
		{"deep in the workspace, parents missing", func(t *testing.T, ws string) (string, []string, []string) {
			return filepath.Join(ws, "a", "b", "trail.jsonl"), nil, nil
		}},
		{"relative, in the workspace", func(t *testing.T, ws string) (string, []string, []string) {
			return "trail.jsonl", nil, nil
		}},
		{"dot-dot spelling into the workspace", func(t *testing.T, ws string) (string, []string, []string) {
			o := auditDir(t)
			rel, _ := filepath.Rel(o, ws)
			return o + "/" + rel + "/x/../trail.jsonl", nil, nil
		}},
		{"through a symlink into the workspace", func(t *testing.T, ws string) (string, []string, []string) {
			o := auditDir(t)
			os.Symlink(ws, filepath.Join(o, "link"))
			return filepath.Join(o, "link", "trail.jsonl"), nil, nil
		}},
		// The trail itself lies outside, but the agent can point ws/out
		// at a forgery of its own after the run (seen accepted by main's
		// binary: exit 0, the trail written outside, ws/out then pointed
		// by the agent at its own directory, where the path now leads).
		{"through a symlink in the workspace leading out of it", func(t *testing.T, ws string) (string, []string, []string) {
			o := auditDir(t)
			os.Symlink(o, filepath.Join(ws, "out"))
			return filepath.Join(ws, "out", "trail.jsonl"), nil, nil
		}},
		// The cache's directory in jail's cache directory is bound
		// writable at the cache's path (~/.mycache): the agent rewrote
		// a trail there through it (seen with main's binary: exit 0,
		// a FORGED line appended by echo >> ~/.mycache/trail.jsonl).
		{"in a cache's directory, bound at the cache's path", func(t *testing.T, ws string) (string, []string, []string) {
			c := auditDir(t)
			return filepath.Join(c, "jail", "cache", "x", "home", ".mycache", "trail.jsonl"),
				[]string{"XDG_CACHE_HOME=" + c}, []string{"--cache", "x:~/.mycache"}
		}},
		{"in a --write dir", func(t *testing.T, ws string) (string, []string, []string) {
			w := auditDir(t)
			return filepath.Join(w, "trail.jsonl"), nil, []string{"-w", w}
		}},
		{"below a --write dir", func(t *testing.T, ws string) (string, []string, []string) {
			w := auditDir(t)
			os.MkdirAll(filepath.Join(w, "sub"), 0o755)
			return filepath.Join(w, "sub", "trail.jsonl"), nil, []string{"--write", w}
		}},
		// A default trail in jail's state directory under the workspace or a
		// --write dir is no longer refused: the plan masks the whole state
		// directory (issue 10, class 8); TestStateDirUnreachable attacks it.
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := workspace(t)
			trail, env, flags := c.setup(t, ws)
			args := append([]string{}, flags...)
			if trail != "" {
				args = append(args, "--audit", trail)
			}
			ran := filepath.Join(ws, "agent-ran")
			args = append(args, "--", "/bin/sh", "-c", "echo x > "+ran)
			r := run(t, runOpts{dir: ws, env: env}, args...)
			if r.code != 125 {
				t.Errorf("jail accepted a trail the agent can rewrite: exit %d, want 125\nstderr: %s", r.code, r.stderr)
			}
			if !strings.Contains(strings.ToLower(r.stderr), "audit") {
				t.Errorf("the refusal does not say why (no mention of the audit trail): %q", r.stderr)
			}
			if strings.Count(strings.TrimSpace(r.stderr), "\n") > 3 {
				t.Errorf("a setup error should be a line or two:\n%s", r.stderr)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Errorf("the agent ran although the trail placement was refused")
			}
			auditNoTrailIn(t, ws)
			for _, f := range flags {
				if strings.HasPrefix(f, "/") {
					auditNoTrailIn(t, f)
				}
			}
		})
	}
}

// An existing file or a symlink at the trail path is refused, never appended
// to or followed: otherwise a planted symlink makes jail (root in CI) clobber
// any file.
func TestAuditRefusesExistingOrSymlink(t *testing.T) {
	d := auditDir(t)
	victim := filepath.Join(d, "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o644)

	existing := filepath.Join(d, "existing.jsonl")
	os.WriteFile(existing, []byte("precious\n"), 0o644)
	link := filepath.Join(d, "link.jsonl")
	os.Symlink(victim, link)
	dangling := filepath.Join(d, "dangling.jsonl")
	created := filepath.Join(d, "created-by-jail")
	os.Symlink(created, dangling)

	for _, p := range []string{existing, link, dangling} {
		r := run(t, runOpts{}, "--audit", p, "--", "/bin/true")
		if r.code == 0 {
			t.Errorf("--audit %s (existing file or symlink) was accepted", filepath.Base(p))
		} else if r.code != 125 {
			t.Errorf("--audit %s: exit %d, want 125 (setup refused)\n%s", filepath.Base(p), r.code, r.stderr)
		}
	}
	for _, p := range []string{victim, existing} {
		if b := mustRead(t, p); string(b) != "precious\n" {
			t.Errorf("%s was written through: %q", filepath.Base(p), b)
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced")
	}
	if _, err := os.Lstat(created); err == nil {
		t.Errorf("jail followed a dangling symlink and created %s", created)
	}
}

// ---------------------------------------------------------------- tampering

// A trail edited, cut, reordered or extended by anyone but the writer fails
// `jail audit --verify` (exit 1, naming the line) and the summary.
func TestAuditTamperDetected(t *testing.T) {
	trail := filepath.Join(auditDir(t), "orig.jsonl")
	mustCode(t, run(t, runOpts{}, "--audit", trail, "--", "/bin/sh", "-c", "for i in 1 2 3 4 5 6; do /bin/true $i; done"), 0)
	orig := mustRead(t, trail)
	evs := auditLoad(t, trail)
	if len(evs) < 8 {
		t.Fatalf("want at least 8 lines to tamper with, got %d:\n%s", len(evs), auditDump(evs))
	}
	lines := strings.SplitAfter(string(orig), "\n")
	lines = lines[:len(lines)-1] // the empty string after the final newline
	n := len(lines)
	join := func(ls ...[]string) []byte {
		var b strings.Builder
		for _, l := range ls {
			for _, s := range l {
				b.WriteString(s)
			}
		}
		return []byte(b.String())
	}
	cp := func() []string { return append([]string(nil), lines...) }
	// The index of a middle exec line to edit.
	mid := -1
	for i := 2; i < n-2; i++ {
		if strings.Contains(lines[i], `"type":"exec"`) && strings.Contains(lines[i], `"/bin/true"`) {
			mid = i
			break
		}
	}
	if mid < 0 {
		t.Fatalf("no exec line of /bin/true in the middle of the trail:\n%s", orig)
	}
	renumber := func(ls []string) []string {
		re := regexp.MustCompile(`"seq":\d+`)
		for i := range ls {
			ls[i] = re.ReplaceAllString(ls[i], fmt.Sprintf(`"seq":%d`, i+1))
		}
		return ls
	}
	cases := []struct {
		name     string
		data     []byte
		wantLine int // the line --verify must name (0: any)
	}{
		{"edit argv", func() []byte {
			l := cp()
			l[mid] = strings.Replace(l[mid], `"/bin/true"`, `"/bin/fals"`, 1)
			return join(l)
		}(), mid + 2},
		{"edit decision", func() []byte {
			l := cp()
			l[mid] = strings.Replace(l[mid], `"decision":"allow"`, `"decision":"deny!"`, 1)
			return join(l)
		}(), mid + 2},
		{"edit the start line", func() []byte {
			l := cp()
			l[0] = strings.Replace(l[0], `"command":[`, `"command":["x",`, 1)
			return join(l)
		}(), 2},
		{"delete a line", join(lines[:mid], lines[mid+1:]), mid + 1},
		{"delete a line and renumber seq", join(renumber(append(cp()[:mid], lines[mid+1:]...))), mid + 1},
		{"swap two lines", func() []byte {
			l := cp()
			l[mid], l[mid+1] = l[mid+1], l[mid]
			return join(l)
		}(), mid + 1},
		{"duplicate a line", join(lines[:mid+1], lines[mid:]), mid + 2},
		{"drop the start line", join(lines[1:]), 1},
		{"insert a forged line", func() []byte {
			sum := sha256.Sum256([]byte(strings.TrimSuffix(lines[mid-1], "\n")))
			forged := fmt.Sprintf(`{"ts":"2026-01-01T00:00:00.000000000Z","seq":%d,"type":"exec","prev":"%s","pid":9,"path":"/bin/innocent","argv":["/bin/innocent"],"decision":"allow"}`+"\n", mid+1, hex.EncodeToString(sum[:]))
			return join(renumber(append(append(cp()[:mid:mid], forged), lines[mid:]...)))
		}(), mid + 2},
		{"garbage line", join(lines[:mid], []string{"not json at all\n"}, lines[mid:]), mid + 1},
	}
	dir := auditDir(t)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if bytes.Equal(c.data, orig) {
				t.Fatalf("the tampering changed nothing")
			}
			if _, _, err := auditParse(c.data); err == nil {
				t.Fatalf("independent check: the tampered trail still verifies; the case is wrong")
			}
			p := filepath.Join(dir, fmt.Sprintf("t%d.jsonl", i))
			os.WriteFile(p, c.data, 0o600)
			v := auditCLI(t, "--verify", p)
			if v.code != 1 {
				t.Errorf("jail audit --verify: exit %d, want 1 for a tampered trail\n%s%s", v.code, v.stdout, v.stderr)
			}
			if c.wantLine > 0 && !strings.Contains(v.stdout+v.stderr, fmt.Sprintf("line %d", c.wantLine)) {
				t.Errorf("--verify does not name line %d:\n%s%s", c.wantLine, v.stdout, v.stderr)
			}
			s := auditCLI(t, p)
			if s.code != 1 || !strings.Contains(s.stdout, "BROKEN") {
				t.Errorf("summary of a tampered trail: exit %d, want 1 and BROKEN:\n%s%s", s.code, s.stdout, s.stderr)
			}
		})
	}
	t.Run("control: the untouched copy verifies", func(t *testing.T) {
		p := filepath.Join(dir, "copy.jsonl")
		os.WriteFile(p, orig, 0o600)
		mustCode(t, auditCLI(t, "--verify", p), 0)
	})
}

// ---------------------------------------------------------------- crash safety

// SIGKILL of the supervisor mid-run leaves a trail whose every complete line
// verifies (at worst the last line is cut), and nothing inside survives.
func TestAuditSupervisorSIGKILL(t *testing.T) {
	for _, after := range []int{5, 300, 2000} {
		t.Run(fmt.Sprintf("after %d lines", after), func(t *testing.T) {
			m := marker()
			trail := filepath.Join(auditDir(t), "killed.jsonl")
			ws := workspace(t)
			// The killed run's record in a state directory of its own: no
			// later test's start reports it (TestSupervisorKilled says why).
			cmd, _, se := auditStartEnv(t, ws, []string{"XDG_STATE_HOME=" + t.TempDir()}, "--audit", trail, "--", "/bin/sh", "-c",
				fmt.Sprintf("m=%s; while :; do /bin/true $m; done", m))
			// A hang guard, not a timing claim: 2,000 execs take a loaded
			// 2-core machine well over 30s.
			auditWaitFor(t, 180*time.Second, fmt.Sprintf("%d lines in the trail", after), func() bool {
				return auditCountLines(trail) >= after || cmd.ProcessState != nil
			})
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatalf("kill jail: %v (stderr %s)", err, se.String())
			}
			if code := auditWait(t, cmd, 10*time.Second); code != 137 {
				t.Fatalf("jail exit %d, want 137 (it should still have been running)\n%s", code, se.String())
			}
			waitNoProcs(t, m, 5*time.Second)
			data := mustRead(t, trail)
			evs, tail, err := auditParse(data)
			if err != nil {
				t.Fatalf("a SIGKILLed supervisor left a corrupt trail: %v", err)
			}
			if len(evs) < after {
				t.Errorf("only %d complete lines, %d were on disk before the kill", len(evs), after)
			}
			if len(evs) == 0 || evs[0].Type != "start" {
				t.Fatalf("first line is not start")
			}
			if len(tail) > 0 {
				t.Logf("final line cut mid-write (%d bytes): allowed", len(tail))
			}
			v := auditCLI(t, "--verify", trail)
			if v.code != 0 {
				t.Errorf("--verify of a killed run's trail: exit %d, want 0 (every complete line is intact)\n%s%s", v.code, v.stdout, v.stderr)
			}
			if !strings.Contains(v.stdout, "no exit event") {
				t.Errorf("--verify does not warn that the run did not end:\n%s", v.stdout)
			}
			if s := auditCLI(t, trail); !strings.Contains(s.stdout, "none recorded") {
				t.Errorf("summary does not say no exit was recorded:\n%s", s.stdout)
			}
		})
	}
}

// ---------------------------------------------------------------- volume

// A flood of execs is recorded whole: every exec, seq contiguous, nothing
// dropped, the trail ends with exit (this also stands for the former
// TestSeccompExecFlood, which checked the same). 3,000, not 10,000: each
// exec waits for the supervisor's answer, so a lost one is a hung or failed
// exec at any count, and the writer's queue (16,384) overflows at neither;
// the writer's own rate is audit's TestSustains10kPerSecond and
// TestTenThousandExecsContiguous. 10,000 through jail took over 300s on a
// loaded 2-core machine (35ms an exec, scheduling-bound).
func TestAuditExecFlood(t *testing.T) {
	const n = 3000
	trail := filepath.Join(auditDir(t), "many.jsonl")
	start := time.Now()
	r := run(t, runOpts{timeout: 300 * time.Second}, "--audit", trail, "--", "/bin/sh", "-c",
		fmt.Sprintf("i=0; while [ $i -lt %d ]; do /bin/true x; i=$((i+1)); done", n))
	wall := time.Since(start)
	mustCode(t, r, 0)
	evs := auditLoad(t, trail) // contiguous seq and an intact chain
	got := len(auditExecs(evs, "/bin/true"))
	var dropped float64
	for _, d := range auditOf(evs, "dropped") {
		if d.str("sink") == "" {
			dropped += d.num("count")
		}
	}
	t.Logf("%d execs in %v (%.0f execs/s), %d lines, %d bytes, %v dropped", got, wall.Round(time.Millisecond),
		float64(n)/wall.Seconds(), len(evs), len(mustRead(t, trail)), dropped)
	if got+int(dropped) != n {
		t.Errorf("%d exec events + %v dropped, want %d: events lost silently", got, dropped, n)
	}
	if got != n {
		t.Errorf("%d of %d execs recorded (%v dropped) at %.0f execs/s", got, n, dropped, float64(n)/wall.Seconds())
	}
	s := auditCLI(t, trail)
	mustCode(t, s, 0)
	if !regexp.MustCompile(`(?m)^\s+` + strconv.Itoa(n) + `\s+0\s+/bin/true$`).MatchString(s.stdout) {
		t.Errorf("summary does not show %d runs of /bin/true:\n%s", n, s.stdout)
	}
}

// ---------------------------------------------------------------- reader

// `jail audit FILE` summarizes; --json --type filters raw lines; text the
// agent chose can neither forge a line nor drive the reader's terminal.
func TestAuditReaderSummaryAndFilter(t *testing.T) {
	trail := filepath.Join(auditDir(t), "sum.jsonl")
	esc := "x\x1b]0;PWNED\x07\x1b[2J\u009b31m"
	forge := "y\n{\"ts\":\"2026-01-01T00:00:00.000000000Z\",\"seq\":3,\"type\":\"exit\",\"prev\":\"" + auditGenesis + "\",\"code\":0}\n"
	script := `/bin/true a; /bin/true b; /bin/echo "$1" > /dev/null; /bin/true "$2"; exit 4`
	r := run(t, runOpts{}, "--audit", trail, "--", "/bin/sh", "-c", script, "sh", esc, forge)
	mustCode(t, r, 4)
	evs := auditLoad(t, trail) // one exit event only: the forged newline did not split a line
	execs := auditOf(evs, "exec")
	var sawEsc, sawForge bool
	for _, e := range execs {
		a := e.strs("argv")
		sawEsc = sawEsc || (e.str("path") == "/bin/echo" && len(a) == 2 && a[1] == esc)
		sawForge = sawForge || (len(a) == 2 && a[1] == forge)
	}
	if !sawEsc || !sawForge {
		t.Errorf("exec argv not recorded byte-exact (escape %v, newline %v):\n%s", sawEsc, sawForge, auditDump(execs))
	}

	s := auditCLI(t, trail)
	mustCode(t, s, 0)
	out := s.stdout
	for _, re := range []string{
		`(?m)^Command\s+/bin/sh -c `,
		`(?m)^Exit\s+exited, code 4\b`,
		`(?m)^Chain\s+verified: ` + strconv.Itoa(len(evs)) + ` lines`,
		`(?m)^\s+start\s+1$`,
		`(?m)^\s+exec\s+` + strconv.Itoa(len(execs)) + `$`,
		`(?m)^\s+exit\s+1$`,
		`(?m)^\s+3\s+0\s+/bin/true$`,
		`(?m)^Duration\s+\S+`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("summary lacks %s:\n%s", re, out)
		}
	}

	j := auditCLI(t, "--json", "--type", "exec", trail)
	mustCode(t, j, 0)
	var want strings.Builder
	for _, e := range execs {
		want.Write(e.Raw)
		want.WriteByte('\n')
	}
	if j.stdout != want.String() {
		t.Errorf("--json --type exec is not exactly the exec lines of the trail:\ngot:\n%s\nwant:\n%s", j.stdout, want.String())
	}
	j2 := auditCLI(t, "--json", "--type", "exec,exit", trail)
	mustCode(t, j2, 0)
	if got := strings.Count(j2.stdout, "\n"); got != len(execs)+1 {
		t.Errorf("--type exec,exit: %d lines, want %d", got, len(execs)+1)
	}
	h := auditCLI(t, "--type", "exec", trail)
	mustCode(t, h, 0)
	if got := strings.Count(h.stdout, "\n"); got != len(execs) {
		t.Errorf("--type exec (readable): %d lines, want %d:\n%s", got, len(execs), h.stdout)
	}
	for name, o := range map[string]string{"summary": out, "--json": j.stdout, "--type exec": h.stdout} {
		ctl := "\x1b\x07\u009b"
		if name == "--json" {
			ctl = "\x1b\x07" // raw JSON for machines: C1 stays as JSON encodes it
		}
		if strings.ContainsAny(o, ctl) {
			t.Errorf("%s output carries raw terminal control characters from the agent's argv: %q", name, o)
		}
	}
	if !strings.Contains(h.stdout, "PWNED") {
		t.Errorf("readable output drops the escaped argv instead of showing it: %q", h.stdout)
	}
}

// `jail audit --follow` shows events while the run goes on and stops at exit.
func TestAuditFollow(t *testing.T) {
	trail := filepath.Join(auditDir(t), "follow.jsonl")
	ws := workspace(t)
	gate := filepath.Join(ws, "go")
	cmd, _, se := auditStart(t, ws, "--audit", trail, "--", "/bin/sh", "-c",
		"while [ ! -e go ]; do /bin/sleep 0.05; done; m=followed; /bin/true $m-marker; exit 0")
	auditWaitFor(t, 20*time.Second, "the start line", func() bool { return auditCountLines(trail) >= 1 })
	f := exec.Command(jail(t), "audit", "--follow", trail)
	fo := &syncBuffer{}
	f.Stdout, f.Stderr = fo, fo
	if err := f.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if f.ProcessState == nil {
			f.Process.Kill()
			f.Wait()
		}
	})
	// Once timed out at load 11 (passes alone in 0.3 s, 18/18 in
	// parallel, 12/12 at load 10 in review14e): say what follow printed
	// (an error, a partial line) and what the trail held by then.
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(fo.String(), "start"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(trail)
			t.Fatalf("timed out after 20s waiting for --follow to print the start event\nits output: %q\nthe trail's first %d bytes: %q",
				fo.String(), min(len(b), 300), b[:min(len(b), 300)])
		}
	}
	if strings.Contains(fo.String(), "followed-marker") {
		t.Fatalf("--follow printed an event before it happened")
	}
	os.WriteFile(gate, nil, 0o644)
	if code := auditWait(t, cmd, 20*time.Second); code != 0 {
		t.Fatalf("jail exit %d: %s", code, se.String())
	}
	if code := auditWait(t, f, 10*time.Second); code != 0 {
		t.Errorf("--follow exit %d after the exit event, want 0:\n%s", code, fo.String())
	}
	if out := fo.String(); !strings.Contains(out, "followed-marker") || !strings.Contains(out, "exit") {
		t.Errorf("--follow output lacks the exec or the exit:\n%s", out)
	}
}

// ---------------------------------------------------------------- deny, timeout, limits, signal

// A --block-command exec is refused, does not run, and is on record as denied.
func TestAuditDenyBlockCommand(t *testing.T) {
	// The argument is built at run time: the agent's own argv must not match.
	script := `n=42; /usr/bin/touch ok-1; /usr/bin/touch forbidden-$n; echo rc=$?`
	// Control: without the rule the file is created, so the check below can fail.
	ws0 := workspace(t)
	mustCode(t, sh(t, runOpts{dir: ws0}, script, "--audit", filepath.Join(auditDir(t), "ctl.jsonl")), 0)
	if _, err := os.Stat(filepath.Join(ws0, "forbidden-42")); err != nil {
		t.Fatalf("control run did not create the file: %v", err)
	}

	ws := workspace(t)
	trail := filepath.Join(auditDir(t), "deny.jsonl")
	r := sh(t, runOpts{dir: ws}, script, "--block-command", "forbidden-[0-9]+", "--audit", trail)
	mustCode(t, r, 0)
	if _, err := os.Stat(filepath.Join(ws, "forbidden-42")); err == nil {
		t.Errorf("the blocked command ran")
	}
	if _, err := os.Stat(filepath.Join(ws, "ok-1")); err != nil {
		t.Errorf("an allowed command was refused: %v", err)
	}
	if strings.Contains(r.stdout, "rc=0") {
		t.Errorf("the blocked exec reported success: %q", r.stdout)
	}
	evs := auditLoad(t, trail)
	var denied []auditEvent
	for _, e := range auditExecs(evs, "/usr/bin/touch") {
		a := e.strs("argv")
		if len(a) == 2 && a[1] == "forbidden-42" {
			denied = append(denied, e)
		} else if e.str("decision") != "allow" {
			t.Errorf("allowed exec recorded as %s", e.Raw)
		}
	}
	if len(denied) != 1 || denied[0].str("decision") != "deny" || !strings.Contains(denied[0].str("rule"), "forbidden-[0-9]+") {
		t.Errorf("want one exec event for touch forbidden-42 with decision deny and the rule; got:\n%s", auditDump(auditOf(evs, "exec")))
	}
	if n := len(auditOf(evs, "deny")); n > 0 {
		t.Logf("also %d deny events", n)
	}
	s := auditCLI(t, trail)
	if !regexp.MustCompile(`(?m)^Denials \([1-9]`).MatchString(s.stdout) || !strings.Contains(s.stdout, "forbidden-42") {
		t.Errorf("summary does not list the denial:\n%s", s.stdout)
	}
}

// --timeout records timeout, then kill, then exit 124, and kills everything.
func TestAuditTimeout(t *testing.T) {
	m := marker()
	trail := filepath.Join(auditDir(t), "to.jsonl")
	start := time.Now()
	// The agent ignores SIGTERM, so the kill switch must fire after the grace.
	r := sh(t, runOpts{}, "trap '' TERM; /bin/sleep "+m, "--timeout", "1s", "--kill-grace", "500ms", "--audit", trail)
	mustCode(t, r, 124)
	if el := time.Since(start); el > 15*time.Second {
		t.Errorf("timeout 1s took %v", el)
	}
	waitNoProcs(t, "sleep\x00"+m, 5*time.Second)
	evs := auditLoad(t, trail)
	to, kl := auditOf(evs, "timeout"), auditOf(evs, "kill")
	ex := evs[len(evs)-1]
	if len(to) != 1 || to[0].num("limit_ms") != 1000 || to[0].num("wall_ms") < 1000 {
		t.Errorf("want one timeout event with limit_ms 1000 and wall_ms >= 1000:\n%s", auditDump(evs))
	} else if len(kl) < 1 || kl[0].str("by") != "timeout" || kl[0].Seq < to[0].Seq || kl[0].str("method") == "" {
		t.Errorf("want a kill event by timeout, with its method, after the timeout event:\n%s", auditDump(evs))
	}
	if ex.num("code") != 124 || ex.str("reason") != "timeout" {
		t.Errorf("exit event %s, want code 124 reason timeout", ex.Raw)
	}
	s := auditCLI(t, trail)
	if !regexp.MustCompile(`(?m)^Exit\s+timeout, code 124`).MatchString(s.stdout) {
		t.Errorf("summary exit line:\n%s", s.stdout)
	}
}

// Resource limits are on record: as root a cgroup reports pids/oom events;
// unprivileged, the trail says limits are rlimits only.
func TestAuditLimits(t *testing.T) {
	root := os.Getuid() == 0
	t.Run("pids", func(t *testing.T) {
		// Under heavy CPU load the shell can fork all it may (19 copies
		// here, with init's 8 threads: pids.max 28) before any copy's exec
		// of sleep has been let through (each exec waits for the
		// supervisor's exec notification): the fork is refused, the shell
		// exits, the sandbox ends and no sleep ever ran. The limit worked;
		// the round proves nothing about the exec records and is tried
		// again, at most three times (never passed).
		var evs []auditEvent
		for attempt := 1; ; attempt++ {
			m := marker()
			trail := filepath.Join(auditDir(t), fmt.Sprintf("pids-%d.jsonl", attempt))
			r := sh(t, runOpts{}, fmt.Sprintf(`i=0; while [ $i -lt 40 ]; do /bin/sleep %s & i=$((i+1)); done 2>/dev/null; echo spawned; exit 0`, m),
				"--pids", "12", "--audit", trail) // + jail's reserve of 16 for init's threads
			if !strings.Contains(r.stdout, "spawned") && r.code == 0 {
				t.Errorf("odd run: %d %q", r.code, r.stdout)
			} // dash exits 2 when a fork fails: any code is fine
			waitNoProcs(t, "sleep\x00"+m, 5*time.Second)
			evs = auditLoad(t, trail)
			n := len(auditExecs(evs, "/bin/sleep"))
			if n == 0 && attempt < 3 {
				t.Logf("round %d: no sleep ran before a fork was refused (code %d, stderr %q); again", attempt, r.code, r.stderr)
				continue
			}
			if n >= 40 || n == 0 {
				t.Errorf("%d sleeps were exec'd under --pids 12 (+16 reserve; want some, not all 40); code %d, stdout %q, stderr %q:\n%s", n, r.code, r.stdout, r.stderr, auditDump(evs))
			}
			break
		}
		mode := evs[0].obj("kernel")["cgroup_mode"]
		lim := auditOf(evs, "limit")
		if root {
			if mode != "v1" && mode != "v2" {
				t.Fatalf("as root on this host (cgroup v1 writable) cgroup_mode is %v, want v1 or v2", mode)
			}
			ok := false
			for _, l := range lim {
				ok = ok || (l.str("kind") == "pids" && strings.HasPrefix(l.str("source"), "cgroup-"))
			}
			if !ok {
				t.Errorf("no limit event kind pids from the cgroup:\n%s", auditDump(evs))
			}
		} else {
			if mode != "none" && mode != "v2" {
				t.Errorf("unprivileged cgroup_mode %v", mode)
			}
			if mode == "none" && len(evs[0].strs("notes")) == 0 {
				t.Errorf("limits are rlimits only but the start event has no note saying so: %s", evs[0].Raw)
			}
			for _, l := range lim {
				if mode == "none" && l.str("source") != "rlimit" {
					t.Errorf("limit event from %q without a cgroup: %s", l.str("source"), l.Raw)
				}
			}
		}
	})
	t.Run("memory", func(t *testing.T) {
		trail := filepath.Join(auditDir(t), "mem.jsonl")
		r := run(t, runOpts{}, "--memory", "48M", "--audit", trail, "--",
			"/usr/bin/perl", "-e", `my @a; for (1..64) { push @a, "a" x (8*1024*1024) } print "survived\n"`)
		if r.code == 0 || strings.Contains(r.stdout, "survived") {
			t.Fatalf("512 MiB allocated under --memory 48M: exit %d %q", r.code, r.stdout)
		}
		evs := auditLoad(t, trail)
		if root {
			ok := false
			for _, l := range auditOf(evs, "limit") {
				k := l.str("kind")
				ok = ok || ((k == "oom" || k == "memory") && strings.HasPrefix(l.str("source"), "cgroup-"))
			}
			if !ok {
				t.Errorf("no limit event (oom/memory) from the cgroup:\n%s", auditDump(evs))
			}
			if ex := evs[len(evs)-1]; ex.str("reason") != "oom" && ex.str("reason") != "signaled" && ex.str("reason") != "killed" {
				t.Errorf("exit after OOM: %s", ex.Raw)
			}
		} else if evs[0].obj("kernel")["cgroup_mode"] == "none" && len(evs[0].strs("notes")) == 0 {
			t.Errorf("memory is an rlimit only but the start event has no note saying so: %s", evs[0].Raw)
		}
	})
}

// A SIGTERM to jail is recorded and forwarded; the exit reflects it.
func TestAuditSignal(t *testing.T) {
	m := marker()
	trail := filepath.Join(auditDir(t), "sig.jsonl")
	cmd, so, se := auditStart(t, workspace(t), "--kill-grace", "3s", "--audit", trail, "--", "/bin/sh", "-c",
		"echo ready; exec /bin/sleep "+m)
	auditWaitFor(t, 20*time.Second, "the agent to start", func() bool { return strings.Contains(so.String(), "ready") })
	auditWaitFor(t, 10*time.Second, "sleep to run", func() bool { return len(procsWith("sleep\x00"+m)) > 0 })
	cmd.Process.Signal(syscall.SIGTERM)
	code := auditWait(t, cmd, 15*time.Second)
	if code != 143 {
		t.Errorf("jail exit %d after SIGTERM, want 143\n%s", code, se.String())
	}
	waitNoProcs(t, "sleep\x00"+m, 5*time.Second)
	evs := auditLoad(t, trail)
	sig := auditOf(evs, "signal")
	ok := false
	for _, s := range sig {
		ok = ok || (s.str("signal") == "SIGTERM" && s.num("number") == 15 && s.M["forwarded"] == true && s.str("from") != "")
	}
	if !ok {
		t.Errorf("no signal event for the forwarded SIGTERM:\n%s", auditDump(evs))
	}
	if ex := evs[len(evs)-1]; ex.num("code") != 143 || ex.str("reason") != "signaled" || ex.str("signal") != "SIGTERM" {
		t.Errorf("exit event %s, want code 143 signaled SIGTERM", ex.Raw)
	}
}

// ---------------------------------------------------------------- network

// auditServer accepts on loopback, reads one line and answers; it counts accepts.
type auditServer struct {
	ln      net.Listener
	mu      sync.Mutex
	accepts int
	got     []string
}

func auditListen(t testing.TB, reply string) *auditServer {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &auditServer{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.accepts++
			s.mu.Unlock()
			go func(c net.Conn) {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				l, _ := bufio.NewReader(c).ReadString('\n')
				s.mu.Lock()
				s.got = append(s.got, l)
				s.mu.Unlock()
				io.WriteString(c, reply)
			}(c)
		}
	}()
	return s
}

func (s *auditServer) port() int { return s.ln.Addr().(*net.TCPAddr).Port }
func (s *auditServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepts
}

// DNS and flows are on record with name, port, decision and bytes; a denied
// destination is recorded and never reached.
func TestAuditNet(t *testing.T) {
	reply := "world-audit-0123456789\n"
	ok := auditListen(t, reply)
	other := auditListen(t, "should-never-be-read\n")
	probe := `use IO::Socket::INET;
sub try { my ($h, $p, $tag) = @_;
  my $s = IO::Socket::INET->new(PeerAddr => $h, PeerPort => $p, Proto => "tcp", Timeout => 5);
  if (!$s) { print "$tag:noconnect\n"; return }
  print $s "hello\n"; my $l = <$s>; $l = "" unless defined $l; chomp $l; print "$tag:got:$l\n"; close $s }
try("svc.test", $ARGV[0], "A");
try("svc.test", $ARGV[1], "B");
try("denied.test", $ARGV[0], "C");`
	trail := filepath.Join(auditDir(t), "net.jsonl")
	p1, p2 := strconv.Itoa(ok.port()), strconv.Itoa(other.port())
	r := run(t, runOpts{}, "--net", "allow", "--add-host", "svc.test:127.0.0.1",
		"--allow-domain", "svc.test:"+p1, "--allow-ip", "127.0.0.1/32:"+p1, "--audit", trail,
		"--", "/usr/bin/perl", "-e", probe, p1, p2)
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "A:got:"+strings.TrimSpace(reply)) {
		t.Errorf("the allowed flow did not work: %q\n%s", r.stdout, r.stderr)
	}
	if n := other.count(); n != 0 {
		t.Errorf("the denied port was reached %d times", n)
	}
	if strings.Contains(r.stdout, "should-never") {
		t.Errorf("data from the denied destination reached the sandbox")
	}
	evs := auditLoad(t, trail)
	if nm := evs[0].obj("kernel")["network_mode"]; nm != "allow" && nm != "proxy" {
		t.Errorf("start.kernel.network_mode %v with --net allow", nm)
	}
	exitSeq := evs[len(evs)-1].Seq
	var dnsOK, dnsDeny, netOK, netDeny bool
	for _, e := range auditOf(evs, "dns") {
		switch {
		case e.str("name") == "svc.test" && e.str("decision") == "allow":
			for _, a := range e.strs("answers") {
				dnsOK = dnsOK || strings.HasPrefix(a, "198.18.") || strings.HasPrefix(a, "198.19.")
			}
		case e.str("name") == "denied.test" && e.str("decision") == "deny":
			dnsDeny = true
		}
	}
	for _, e := range auditOf(evs, "net") {
		if e.Seq > exitSeq {
			t.Errorf("net event after exit: %s", e.Raw)
		}
		port := strconv.Itoa(int(e.num("port")))
		switch {
		case e.str("decision") == "allow" && port == p1:
			netOK = e.str("name") == "svc.test" && e.str("proto") == "tcp" &&
				e.num("bytes_up") == float64(len("hello\n")) && e.num("bytes_down") == float64(len(reply)) && e.has("duration_ms")
			if !netOK {
				t.Errorf("allowed flow recorded wrongly (want name svc.test, bytes_up 6, bytes_down %d): %s", len(reply), e.Raw)
			}
		case e.str("decision") == "deny" && port == p2:
			netDeny = true
		case e.str("decision") == "allow" && port == p2:
			t.Errorf("flow to the unallowed port recorded as allowed: %s", e.Raw)
		}
	}
	if !dnsOK || !dnsDeny || !netOK || !netDeny {
		t.Errorf("dns allow %v, dns deny %v, net allow %v, net deny %v; want all:\n%s", dnsOK, dnsDeny, netOK, netDeny, auditDump(evs))
	}
	s := auditCLI(t, trail)
	if !strings.Contains(s.stdout, "svc.test:"+p1) {
		t.Errorf("summary network table lacks svc.test:%s:\n%s", p1, s.stdout)
	}
}
