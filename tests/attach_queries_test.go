//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A full-screen program asks its terminal questions as it starts (where is
// the cursor, what terminal is this) and waits for the answers before it
// draws. Started with jail run -d -t, nobody is attached to answer: codex
// then stayed blank until the first key of a later attach. While no client
// is attached the supervisor answers the two every terminal answers (the
// primary device attributes and the cursor position, as a terminal at its
// home position); while one is, its own terminal does, and the supervisor
// must not answer too (the program would read two answers, one of them
// wrong).
func TestSessionDetachedQueriesAnswered(t *testing.T) {
	ws := workspace(t)
	m := strings.ReplaceAll(marker(), ".", "")
	name := "q" + m
	os.Chmod(ws, 0o777)
	// ask QUERY END FILE: send the query, read the answer up to its last
	// byte, write what came (the ESC made printable) to FILE.
	script := `ask() { printf "$1"; IFS= read -r -d "$2" a; printf '%s%s' "${a#?}" "$2" > "$3"; }
stty raw -echo
ask '\033[6n' R pos.log
ask '\033[c' c da.log
ask '\033[5n' n status.log
echo ready > ready
while [ ! -e go ]; do sleep 0.05; done
ask '\033[6n' R attached.log
echo done > done
sleep 60`
	startSession(t, ws, name, "-t", "--", "/bin/bash", "--norc", "--noprofile", "-c", script)
	waitFile := func(f string) string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			if b, err := os.ReadFile(filepath.Join(ws, f)); err == nil && len(b) > 0 {
				return string(b)
			}
			if time.Now().After(deadline) {
				r := sessJail(t, ws, "", "logs", name)
				t.Fatalf("%s never came: a query made while nobody was attached went unanswered (log: %q)", f, r.stdout)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFile("ready")
	for f, want := range map[string]string{"pos.log": "[1;1R", "da.log": "[?1;2c", "status.log": "[0n"} {
		if got, _ := os.ReadFile(filepath.Join(ws, f)); string(got) != want {
			t.Errorf("%s: the detached answer is %q, want %q", f, got, want)
		}
	}
	// Attached, the client's terminal answers (here: the test, as 7;9), and
	// only it.
	a := attachOnPty(t, ws, name, 24, 80)
	time.Sleep(300 * time.Millisecond) // the attach's first resize
	os.WriteFile(filepath.Join(ws, "go"), []byte("1"), 0o644)
	a.scr.waitFor(t, "\x1b[6n", 10*time.Second)
	a.master.Write([]byte("\x1b[7;9R"))
	waitFile("done")
	if got, _ := os.ReadFile(filepath.Join(ws, "attached.log")); string(got) != "[7;9R" {
		t.Errorf("attached, the program read %q for its cursor position, want the client's own [7;9R (the supervisor must not answer too)", got)
	}
	a.master.Write([]byte{0x10, 0x11})
	a.wait(t, 10*time.Second)
}
