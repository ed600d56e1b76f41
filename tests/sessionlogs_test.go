//go:build linux

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// This file: the logs of background sandboxes (issue 13) are bounded, and
// an unnamed sandbox's goes when it ends.

// privateRuntime gives a test a runtime directory of its own.
func privateRuntime(t *testing.T) (env []string, reg string) {
	rt := filepath.Join(t.TempDir(), "rt")
	os.Mkdir(rt, 0o700)
	return []string{"XDG_RUNTIME_DIR=" + rt}, filepath.Join(rt, "jail")
}

// A command that prints 20 MB leaves at most 4 MiB of log (the default),
// its last line included; jail logs prints it in order.
func TestSessionLogBounded(t *testing.T) {
	ws := workspace(t)
	env, reg := privateRuntime(t)
	m := marker()
	name := "b" + strings.ReplaceAll(m, ".", "")
	r := run(t, runOpts{dir: ws, env: env}, "run", "-d", "--name", name, "--", "/bin/sh", "-c",
		"echo FIRST-"+m+"; yes 0123456789abcdef | head -c 20000000; echo; echo END-"+m+"; sleep 60")
	if r.code != 0 {
		t.Fatalf("run -d: %d %s", r.code, r.stderr)
	}
	t.Cleanup(func() { run(t, runOpts{dir: ws, env: env}, "kill", "--now", name) })
	var out string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		out = run(t, runOpts{dir: ws, env: env}, "logs", name).stdout
		if strings.HasSuffix(out, "END-"+m+"\n") {
			break
		}
	}
	if !strings.HasSuffix(out, "END-"+m+"\n") {
		t.Fatalf("jail logs never ended with the last line (%d bytes)", len(out))
	}
	var total int64
	files, _ := filepath.Glob(filepath.Join(reg, name+".log*"))
	for _, f := range files {
		fi, _ := os.Stat(f)
		total += fi.Size()
	}
	if total > 4<<20 || len(out) > 4<<20 {
		t.Fatalf("the log keeps %d bytes in %v (jail logs printed %d): over 4 MiB", total, files, len(out))
	}
	if strings.Contains(out, "FIRST-"+m) {
		t.Fatalf("the log kept its first line after 20 MB")
	}
	// The kept part is whole lines of the output, in order.
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, l := range lines[1 : len(lines)-2] {
		if l != "0123456789abcdef" {
			t.Fatalf("a line of the kept log is %q", l)
		}
	}
}

// An unnamed background sandbox's log goes when it ends (no name could
// read it); a named one's stays for jail logs NAME.
func TestSessionLogUnnamedRemoved(t *testing.T) {
	ws := workspace(t)
	env, reg := privateRuntime(t)
	m := marker()
	name := "k" + strings.ReplaceAll(m, ".", "")
	r := run(t, runOpts{dir: ws, env: env}, "run", "-d", "--", "/bin/sh", "-c", "echo unnamed-"+m+"; while [ ! -e go ]; do sleep 0.1; done")
	mustCode(t, r, 0)
	r = run(t, runOpts{dir: ws, env: env}, "run", "-d", "--name", name, "--", "/bin/sh", "-c", "echo named-"+m+"; while [ ! -e go ]; do sleep 0.1; done")
	mustCode(t, r, 0)
	if logs, _ := filepath.Glob(filepath.Join(reg, "sandbox-*.log")); len(logs) != 1 {
		t.Fatalf("want the unnamed sandbox's log while it runs, got %v", logs)
	}
	os.WriteFile(filepath.Join(ws, "go"), nil, 0o644) // both end now
	var logs []string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		logs, _ = filepath.Glob(filepath.Join(reg, "*.log*"))
		if len(logs) == 1 {
			break
		}
	}
	if len(logs) != 1 || filepath.Base(logs[0]) != name+".log" {
		t.Fatalf("after both ended the registry holds the logs %v; want only %s.log", logs, name)
	}
	time.Sleep(300 * time.Millisecond) // the named supervisor is gone too
	if r := run(t, runOpts{dir: ws, env: env}, "logs", name); !strings.Contains(r.stdout, "named-"+m) {
		t.Fatalf("jail logs of the ended named sandbox: %q %s", r.stdout, r.stderr)
	}
}

// jail logs on a terminal passes what the sandbox printed through the
// same filter as jail's own relay: a clipboard write (OSC 52) in the log
// never reaches the user's terminal.
func TestSessionLogsFiltered(t *testing.T) {
	ws := workspace(t)
	env, _ := privateRuntime(t)
	m := marker()
	name := "c" + strings.ReplaceAll(m, ".", "")
	r := run(t, runOpts{dir: ws, env: env}, "run", "-d", "--name", name, "--", "/bin/sh", "-c",
		`printf 'before-`+m+`\033]52;c;cHduZWQ=\007after-`+m+`\n'; sleep 60`)
	mustCode(t, r, 0)
	t.Cleanup(func() { run(t, runOpts{dir: ws, env: env}, "kill", "--now", name) })
	cmd := exec.Command(jail(t), "logs", name)
	cmd.Dir = ws
	cmd.Env = append(screenEnv(), env...)
	s := startOnPty(t, cmd)
	if err := s.wait(t, 20*time.Second); err != nil {
		t.Fatalf("jail logs: %v", err)
	}
	s.scr.waitFor(t, "after-"+m, 5*time.Second)
	if out := s.scr.String(); strings.Contains(out, "]52;") {
		t.Fatalf("jail logs wrote the sandbox's clipboard sequence to the terminal: %q", out)
	}
}

// inBackground runs args (flags, --, the command) as a named background
// sandbox (jail run -d --name) and returns its log once it has ended and
// holds want, or after 30 s: what a user of jail run -d reads with jail
// logs, jail's notices among the command's output.
func inBackground(t *testing.T, o runOpts, want string, args ...string) string {
	t.Helper()
	env, _ := privateRuntime(t)
	o.env = append(o.env, env...)
	name := "bg" + strings.ReplaceAll(marker(), ".", "")
	r := run(t, o, append([]string{"run", "-d", "--name", name}, args...)...)
	mustCode(t, r, 0)
	t.Cleanup(func() { run(t, o, "kill", "--now", name) })
	// Follows until the sandbox ends; its last notices (a run's end) may
	// reach the log just after.
	f := o
	f.timeout = 30 * time.Second
	out := run(t, f, "logs", "-f", name).stdout
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(out, want) && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		out = run(t, o, "logs", name).stdout
	}
	return out
}
