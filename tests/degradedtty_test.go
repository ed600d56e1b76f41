//go:build linux

package tests

// Adversarial (review14d): the host's terminals in degraded mode. Without
// a mount namespace /dev is the host's, and the plan's Landlock rules
// granted /dev/pts read, write and ioctl (under namespaces that is the
// sandbox's own devpts). So in degraded mode the agent reopened the
// user's terminal that jail hands on read-only as stdin (review14a) for
// writing through /proc/self/fd/0, and opened the user's other terminals
// (another window, a tmux pane: /dev/pts/N, the user's own) to write
// escape sequences to them around termfilter, or to read the keys typed
// there.

import (
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestDegradedHostTerminals(t *testing.T) {
	// The user's other terminal: a pty pair of the test's, nobody reading.
	otherM, otherS := openPty(t)
	defer otherM.Close()
	defer otherS.Close()
	n, err := unix.IoctlGetInt(int(otherM.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	other := "/dev/pts/" + strconv.Itoa(n)
	scrOther := watch(otherM)
	script := `test -t 0 && echo STDIN-IS-TTY
(printf '\033]0;PWNED-REOPEN\007' > /proc/self/fd/0) 2>/dev/null && echo REOPENED-STDIN-FOR-WRITING
(printf '\033]0;PWNED-OTHER\007' > "$1") 2>/dev/null && echo WROTE-OTHER-TERMINAL
(exec 3< "$1") 2>/dev/null && echo OPENED-OTHER-FOR-READING
(exec 3< /dev/null) && echo DEVNULL-OK
head -c 4 /dev/urandom | wc -c | grep -q 4 && echo URANDOM-OK
(exec 3<> /dev/tty) 2>/dev/null || echo NO-CTTY
echo DONE`
	r := startOnTty(t, false, "--x-degraded", "--", "/bin/sh", "-c", script, "sh", other)
	r.wait(t)
	so, se, scr := &r.so, &r.se, r.scr
	out := so.String()
	if !strings.Contains(se.String(), "degraded") {
		t.Fatalf("not a degraded run:\n%s", se.String())
	}
	if strings.Contains(out, "REOPENED-STDIN-FOR-WRITING") || strings.Contains(scr.String(), "PWNED-REOPEN") {
		t.Errorf("degraded: the agent reopened the user's terminal (its read-only stdin) for writing:\nterminal: %q\nstdout: %s", scr.String(), out)
	}
	if strings.Contains(out, "WROTE-OTHER-TERMINAL") || strings.Contains(scrOther.String(), "PWNED-OTHER") {
		t.Errorf("degraded: the agent wrote to another of the user's terminals (%s):\nthat terminal: %q\nstdout: %s", other, scrOther.String(), out)
	}
	if strings.Contains(out, "OPENED-OTHER-FOR-READING") {
		t.Errorf("degraded: the agent opened another of the user's terminals (%s) to read the keys typed there:\n%s", other, out)
	}
	// What the agent needs of /dev still works, and the script ran to its end.
	for _, w := range []string{"STDIN-IS-TTY", "DEVNULL-OK", "URANDOM-OK", "NO-CTTY", "DONE"} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q:\n%s\nstderr: %s", w, out, se.String())
		}
	}
}

// Degraded mode with a terminal on stdin and stdout: the agent's own pty
// comes from the host's devpts, whose ptmx node is mode 0 on many hosts
// (ptmxmode=000, the kernel's default): as a user, init's open of
// /dev/pts/ptmx failed with EACCES and the run did not start (review14d;
// seen failing on main's binary as jailtest: "open /dev/pts/ptmx:
// permission denied"). /dev/ptmx is the same multiplexer.
func TestDegradedInteractivePty(t *testing.T) {
	r := startOnTty(t, true, "--x-degraded", "--quiet", "--", "/bin/sh", "-c", `tty; echo via-devtty > /dev/tty; echo DONE`)
	r.wait(t)
	scr := r.scr
	for _, w := range []string{"/dev/pts/", "via-devtty", "DONE"} {
		if !strings.Contains(scr.String(), w) {
			t.Errorf("terminal lacks %q: %q", w, scr.String())
		}
	}
}
