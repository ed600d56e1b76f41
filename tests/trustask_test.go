//go:build linux

package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// jail trust asks before it records, showing what the bytes it read set;
// without a terminal to ask on it records nothing unless --yes is given
// (one line). An agent that runs `jail trust` through a tool (no terminal)
// used to trust its own project file at once; the answer given after the
// file changed trusts the bytes shown, not the new ones (trustsub). Seen
// failing on main's binary (a34609b): `jail trust` with stdin a pipe
// exited 0 and the next run applied the file.
func TestTrustAsks(t *testing.T) {
	h := newHome(t)
	ws := workspace(t)
	proj := filepath.Join(ws, ".jail.toml")
	writeFile(t, proj, "setenv = [\"FROM_PROJECT=yes\"]\n")
	o := runOpts{env: h.env, dir: ws}
	// No terminal: refused in one line, nothing recorded.
	oneLine(t, run(t, runOpts{env: h.env, dir: ws, stdin: "y\n"}, "trust"), "nothing to ask on", "jail trust --yes "+proj)
	oneLine(t, sh(t, o, "true"), proj+" is not trusted")

	// On a terminal: what it sets, the question; "n" records nothing.
	ask := func(answer string, change func()) (string, int) {
		t.Helper()
		m, s := openPty(t)
		cmd := exec.Command(jail(t), "trust", proj)
		cmd.Dir, cmd.Env = ws, append(os.Environ(), h.env...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		s.Close()
		var out bytes.Buffer
		buf := make([]byte, 4096)
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(out.String(), "[y/N] ") && time.Now().Before(deadline) {
			m.SetReadDeadline(time.Now().Add(time.Second))
			n, _ := m.Read(buf)
			out.Write(buf[:n])
		}
		if change != nil {
			change()
		}
		m.Write([]byte(answer + "\n"))
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		for {
			m.SetReadDeadline(time.Now().Add(time.Second))
			n, _ := m.Read(buf)
			out.Write(buf[:n])
			select {
			case <-done:
				// What it wrote after the read above is still in the
				// pty: read until it is empty (EIO once the slave is
				// gone), or the last line can be missed under load.
				for {
					m.SetReadDeadline(time.Now().Add(time.Second))
					n, err := m.Read(buf)
					out.Write(buf[:n])
					if err != nil || n == 0 {
						break
					}
				}
				return out.String(), cmd.ProcessState.ExitCode()
			default:
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("jail trust did not end: %q", out.String())
			}
		}
	}
	out, code := ask("n", nil)
	for _, w := range []string{proj, `line 1: setenv = "FROM_PROJECT=yes"`, "it applies to runs in " + ws + " and below", "trust it? [y/N]", "not trusted (answered no)"} {
		if !strings.Contains(out, w) {
			t.Errorf("jail trust, answered no: lacks %q:\n%s", w, out)
		}
	}
	if code != 125 {
		t.Errorf("answered no: exit %d, want 125", code)
	}
	oneLine(t, sh(t, o, "true"), proj+" is not trusted")
	// "y": trusted, applied.
	if out, code := ask("y", nil); code != 0 || !strings.Contains(out, "trusted "+proj) {
		t.Fatalf("answered yes: exit %d\n%s", code, out)
	}
	r := sh(t, o, `echo "$FROM_PROJECT"`)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "yes" {
		t.Fatalf("trusted on the terminal, not applied: %q %s", r.stdout, r.stderr)
	}
	// The file changed while the question was on screen (a command still
	// running in a sandbox): the bytes shown are trusted, the new ones are
	// refused at the next run.
	mustCode(t, run(t, o, "trust", "--revoke", proj), 0)
	out, code = ask("y", func() { writeFile(t, proj, "setenv = [\"FROM_PROJECT=yes\"]\nnet = \"host\"\n") })
	if code != 0 || strings.Contains(out, "net") {
		t.Fatalf("answered yes: exit %d\n%s", code, out)
	}
	oneLine(t, sh(t, o, "true"), proj+" changed since you trusted it")
}

// Trusting a file inside a trusted project says that it replaces the
// outer one for runs started there: a nested project's file stands alone,
// so an innocent-looking file a command in the outer project's sandbox
// planted (with a .git beside it, which narrows the next run from there
// and asks for a trust) takes the outer file's restrictions away from those
// runs once trusted. The line is where the user decides (review15b). Seen
// failing on main's binary (30093d6): jail trust listed only `setenv`.
func TestTrustSaysWhatItReplaces(t *testing.T) {
	h := newHome(t)
	ws := workspace(t)
	fakeRepo(t, ws)
	outer := filepath.Join(ws, ".jail.toml")
	writeFile(t, outer, "net = \"none\"\n")
	o := runOpts{env: h.env, dir: ws}
	r := run(t, o, "trust", "--yes", outer)
	if mustCode(t, r, 0); strings.Contains(r.stdout, "instead of") {
		t.Fatalf("nothing above, yet a line says it replaces something:\n%s", r.stdout)
	}
	sub := filepath.Join(ws, "sub")
	fakeRepo(t, sub)
	inner := filepath.Join(sub, ".jail.toml")
	writeFile(t, inner, "setenv = [\"DEBUG=1\"]\n")
	oneLine(t, sh(t, runOpts{env: h.env, dir: sub}, "true"), inner+" is not trusted")
	r = run(t, runOpts{env: h.env, dir: sub}, "trust", "--yes", inner)
	mustCode(t, r, 0)
	for _, w := range []string{"runs started in " + sub + " and below it get it instead of the trusted " + outer, "its restrictions too"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("jail trust of a nested file lacks %q:\n%s", w, r.stdout)
		}
	}
}
