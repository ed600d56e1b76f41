//go:build linux

package tests

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// jail exec without -t, its stdout and stderr the user's terminal: what the
// command prints passes the same filter as the foreground relay and exec -t.
// Unfiltered, a file the agent wrote (cat notes.txt) could set the user's
// clipboard (OSC 52: the next paste into a host shell runs what the agent
// chose), change the terminal's fonts, or ask it for a title report (CSI
// 21 t: the title comes back as typed input) (review14b). Seen failing on main's binary (ad705ff):
// the OSC 52 and CSI 21 t sequences reached the terminal whole, on stdout and on stderr.
func TestSessionExecFiltersTerminal(t *testing.T) {
	ws := workspace(t)
	name := "x" + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name)
	for _, stream := range []string{"1", "2"} {
		master, slave := openPty(t)
		scr := watch(master)
		cmd := exec.Command(jail(t), "exec", name, "--", "/bin/sh", "-c", `printf 'A\033]52;c;aGVsbG8=\007B\033[21tC\n' >&`+stream)
		cmd.Dir = ws
		cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, slave, slave
		err := cmd.Run()
		slave.Close()
		if err != nil {
			t.Fatalf("exec (fd %s): %v", stream, err)
		}
		var got []byte
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if got = []byte(scr.String()); bytes.Contains(got, []byte("C")) {
				break
			}
		}
		master.Close()
		if !bytes.Contains(got, []byte("A")) || !bytes.Contains(got, []byte("C")) {
			t.Fatalf("fd %s: the command's text did not reach the terminal: %q", stream, got)
		}
		if bytes.Contains(got, []byte("\x1b]52")) || bytes.Contains(got, []byte("\x1b[21t")) {
			t.Errorf("fd %s: the terminal got the command's OSC sequences unfiltered: %q", stream, got)
		}
	}
}
