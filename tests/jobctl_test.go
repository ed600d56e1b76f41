//go:build linux

package tests

// Issue 12: job control. Ctrl-Z stops the agent and jail together and the
// shell gets its prompt back; fg resumes with the terminal raw again and
// the agent redrawn. A child that stops while nothing can resume it does
// not hang jail.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/proctest"
)

// hostShell starts an interactive bash with job control on a fresh pty, as
// a user's terminal has, with prompt "host$ " and jail's path in $J.
func hostShell(t *testing.T, dir string, env ...string) *ptySession {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		if inCI() {
			t.Fatal("bash is needed for the job-control tests")
		}
		t.Skip("no bash")
	}
	cmd := exec.Command("bash", "--norc", "--noprofile", "-i")
	cmd.Dir = dir
	cmd.Env = screenEnv(append([]string{"PS1=host$ ", "PROMPT_COMMAND=", "HISTFILE=/dev/null", "J=" + jail(t)}, env...)...)
	s := startOnPty(t, cmd)
	s.scr.waitFor(t, "host$ ", 10*time.Second)
	return s
}

// since returns what the terminal received after mark.
func (s *ptySession) since(mark int) string {
	out := s.scr.String()
	if mark > len(out) {
		return ""
	}
	return out[mark:]
}

// waitSince waits until the terminal shows want after mark.
func (s *ptySession) waitSince(t *testing.T, mark int, want string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if strings.Contains(s.since(mark), want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("terminal never showed %q; since the mark it shows:\n%q", want, s.since(mark))
}

// send types text and returns the mark of what comes after it.
func (s *ptySession) send(text string) int {
	mark := len(s.scr.String())
	s.master.Write([]byte(text))
	return mark
}

// rawMode tells whether the host terminal is in jail's raw mode (output
// processing and signal keys off), read from the pty master (TCGETS on a
// master reports its slave's settings).
func (s *ptySession) rawMode(t *testing.T) bool {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(s.master.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return tio.Oflag&unix.OPOST == 0 && tio.Lflag&unix.ISIG == 0
}

func (s *ptySession) waitRaw(t *testing.T, want bool, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if s.rawMode(t) == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("host terminal raw=%v, want %v; the terminal shows:\n%q", !want, want, s.scr.String())
}

// stopJob types Ctrl-Z and waits for the shell to say the job stopped and
// give its prompt back.
func (s *ptySession) stopJob(t *testing.T) {
	t.Helper()
	s.stoppedBy(t, "\x1a")
}

// innerShell starts an interactive bash under jail exec -it in sandbox
// name and waits for its prompt, "inside$ ".
func (s *ptySession) innerShell(t *testing.T, name string) {
	t.Helper()
	s.send("$J exec -it " + name + " -- bash --norc --noprofile -i\r")
	s.waitRaw(t, true, 30*time.Second)
	time.Sleep(300 * time.Millisecond)
	m := s.send("PS1='in''side$ '\r")
	s.waitSince(t, m, "inside$ ", 10*time.Second)
}

// stoppedBy types key and waits for the shell to say the job stopped and
// give its prompt back, its terminal cooked again; it returns the mark
// from before the key.
func (s *ptySession) stoppedBy(t *testing.T, key string) int {
	t.Helper()
	m := s.send(key)
	s.waitSince(t, m, "Stopped", 10*time.Second)
	s.waitSince(t, m, "host$ ", 5*time.Second)
	if s.rawMode(t) {
		t.Fatalf("%q: the terminal is still raw after the stop", key)
	}
	return m
}

// endJob types keys (Ctrl-C, q) to end the foreground job and wants the
// shell's prompt back and the job's exit status to be rc.
func (s *ptySession) endJob(t *testing.T, keys string, rc int) {
	t.Helper()
	m := s.send(keys)
	s.waitSince(t, m, "host$ ", 10*time.Second)
	m = s.send("echo rc=$?\r")
	s.waitSince(t, m, fmt.Sprintf("rc=%d", rc), 5*time.Second)
}

// killedJobGone waits until the shell no longer lists a job it was told
// to kill as stopped: an exit before then meets "There are stopped jobs."
// (seen once in CI). bash takes in a job's end when it next waits for a
// child (under load its SIGCHLD alone was not enough, seen for 10 s with
// the process long gone), so a program runs before jobs.
func (s *ptySession) killedJobGone(t *testing.T, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		m := s.send("/bin/true; jobs; echo jo\"\"bs-listed\r")
		s.waitSince(t, m, "jobs-listed", 5*time.Second)
		if !strings.Contains(s.since(m), "Stopped") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shell still lists %s as stopped:\n%q", what, s.since(m))
		}
	}
}

// fileSize returns a function giving the size of the file at path, -1
// while it is absent: the tests' commands append to a tick file as they
// run.
func fileSize(path string) func() int64 {
	return func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			return -1
		}
		return fi.Size()
	}
}

// growsPast tells whether size goes past from within 5 s.
func growsPast(size func() int64, from int64) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if size() > from {
			return true
		}
	}
	return false
}

// stillFor fails the test if size changes over 1.5 s (what names what
// wrote), once a write begun at a stop has landed; it returns the size.
func stillFor(t *testing.T, size func() int64, what string) int64 {
	t.Helper()
	time.Sleep(300 * time.Millisecond) // a write begun at the stop lands
	held := size()
	time.Sleep(1500 * time.Millisecond)
	if now := size(); now != held {
		t.Errorf("%s: tick %d -> %d bytes", what, held, now)
	}
	return held
}

// Ctrl-Z on `jail -- sleep` stops it and jail; the shell's prompt comes
// back and the terminal is cooked; fg makes it raw again and Ctrl-C then
// reaches the sleep inside.
func TestJobCtrlZSleep(t *testing.T) {
	ws := workspace(t)
	s := hostShell(t, ws)
	m := s.send("$J --quiet -- sh -c 'echo sl\"\"eeping; exec sleep 100'\r")
	s.waitSince(t, m, "sleeping", 30*time.Second)
	s.waitRaw(t, true, 5*time.Second)
	m = s.send("\x1a")
	s.waitSince(t, m, "Stopped", 10*time.Second)
	s.waitSince(t, m, "host$ ", 5*time.Second)
	if s.rawMode(t) {
		t.Fatal("the terminal is still raw after the stop")
	}
	m = s.send("jobs -l; ps -o stat= -p $(jobs -p)\r")
	s.waitSince(t, m, "T", 5*time.Second)
	m = s.send("fg\r")
	s.waitSince(t, m, "--quiet", 5*time.Second)
	s.waitRaw(t, true, 10*time.Second)
	time.Sleep(200 * time.Millisecond)
	s.endJob(t, "\x03", 130)
	// And once more: a second stop and resume work as the first.
	m = s.send("$J --quiet -- sh -c 'echo ag\"\"ain; exec sleep 100'\r")
	s.waitSince(t, m, "again", 30*time.Second)
	s.waitRaw(t, true, 5*time.Second)
	m = s.send("\x1a")
	s.waitSince(t, m, "Stopped", 10*time.Second)
	m = s.send("fg\r")
	s.waitRaw(t, true, 10*time.Second)
	time.Sleep(200 * time.Millisecond)
	m = s.send("\x03")
	s.waitSince(t, m, "host$ ", 10*time.Second)
	m = s.send("exit\r")
	s.wait(t, 10*time.Second)
}

// A full-screen program (curses) stops on Ctrl-Z with jail, and after fg
// it is running again in raw mode and redraws: ncurses restores its screen
// on SIGCONT, and jail sends SIGWINCH (the program draws "winch N RxC"
// with the size its terminal has), also when the size did not change; a
// size the terminal got while the program was stopped reaches it.
//
// ncurses sets SIGTSTP to SIG_IGN for the whole of each screen update
// (doupdate), after its text is written: a Ctrl-Z typed the moment the
// text shows can be discarded by the kernel, inside jail or out. So the
// program writes the file "drawn" (the number of its last redraw) once
// each refresh has returned, and the test types Ctrl-Z only after that.
func TestJobCtrlZCurses(t *testing.T) {
	py := needPython(t)
	ws := workspace(t)
	prog := filepath.Join(ws, "tui.py")
	if err := os.WriteFile(prog, []byte(`
import curses, fcntl, os, signal, struct, termios
winches = 0
def winch(sig, frame):
    global winches
    winches += 1
def main(scr):
    signal.signal(signal.SIGWINCH, winch)
    scr.timeout(50)
    scr.clear()
    scr.addstr(1, 2, "tui drawn")
    scr.refresh()
    seen = 0
    drawn(seen)
    while True:
        c = scr.getch()
        if c == ord("q"):
            return
        if winches != seen:
            seen = winches
            rows, cols = struct.unpack("hh", fcntl.ioctl(0, termios.TIOCGWINSZ, b"1234"))
            scr.addstr(3, 2, "winch %d %dx%d " % (seen, rows, cols))
            scr.refresh()
            drawn(seen)
def drawn(n):
    with open("drawn.tmp", "w") as f:
        f.write(str(n))
    os.rename("drawn.tmp", "drawn")
curses.wrapper(main)
`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := hostShell(t, ws)
	m := s.send("$J --quiet -- " + py + " tui.py\r")
	s.waitSince(t, m, "tui drawn", 30*time.Second)
	s.waitRaw(t, true, 5*time.Second)
	waitDrawn(t, ws, "0")
	m = s.send("\x1a")
	s.waitSince(t, m, "Stopped", 10*time.Second)
	s.waitSince(t, m, "host$ ", 5*time.Second)
	if s.rawMode(t) {
		t.Fatal("the terminal is still raw after the stop")
	}
	m = s.send("fg\r")
	s.waitSince(t, m, "tui drawn", 10*time.Second) // ncurses redrew its screen
	s.waitSince(t, m, "winch 1 24x80", 10*time.Second)
	s.waitRaw(t, true, 5*time.Second)
	waitDrawn(t, ws, "1")
	// Stopped again, the terminal grows; fg brings the new size.
	m = s.send("\x1a")
	s.waitSince(t, m, "Stopped", 10*time.Second)
	s.waitSince(t, m, "host$ ", 5*time.Second)
	unix.IoctlSetWinsize(int(s.master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 30, Col: 100})
	m = s.send("fg\r")
	s.waitSince(t, m, "30x100", 10*time.Second)
	s.waitRaw(t, true, 5*time.Second)
	s.endJob(t, "q", 0)
	s.send("exit\r")
	s.wait(t, 10*time.Second)
}

// waitDrawn waits until the curses program of TestJobCtrlZCurses has
// finished its redraw number n (its file "drawn" says n).
func waitDrawn(t *testing.T, ws, n string) {
	t.Helper()
	var b []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, _ = os.ReadFile(filepath.Join(ws, "drawn")); string(b) == n {
			return
		}
	}
	t.Fatalf("the program never finished redraw %s (its file \"drawn\" says %q)", n, b)
}

// A child that stops while no terminal is relayed, and no shell could
// resume jail, must not hang jail: it is continued.
func TestJobStoppedChildWithoutTerminal(t *testing.T) {
	trail := filepath.Join(t.TempDir(), "trail.jsonl")
	r := sh(t, runOpts{timeout: 30 * time.Second}, `echo before; kill -STOP $$; echo resumed`, "--audit", trail)
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "resumed") {
		t.Fatalf("the stopped command was not continued:\n%s\n%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "stopped") {
		t.Errorf("no notice that the command stopped and was continued:\n%s", r.stderr)
	}
}

// While jail is stopped as a job, nothing of the sandbox runs: a process
// the agent moved out of its process group (setsid) is held too, and goes
// on after fg. jail's own records trust a stopped run's last beat as its
// end (a credential file changed after it is taken for the user's own
// when the stopped jail is then killed): a sandbox process writing on
// while jail was stopped broke that (suspendswap, session 22).
func TestJobCtrlZHoldsSandbox(t *testing.T) {
	ws := workspace(t)
	tick := filepath.Join(ws, "tick")
	s := hostShell(t, ws)
	// Builtins only, no program started in the loop: every execve in the
	// sandbox waits for the supervisor's answer (exec notification), so a
	// loop that ran sleep would stop with jail anyway.
	m := s.send("$J --quiet -- sh -c 'setsid sh -c \"while :; do echo x >> tick; i=0; while [ \\$i -lt 2000 ]; do i=\\$((i+1)); done; done\" </dev/null >/dev/null 2>&1 & echo ru\"\"nning; exec sleep 100'\r")
	s.waitSince(t, m, "running", 30*time.Second)
	s.waitRaw(t, true, 5*time.Second)
	size := fileSize(tick)
	for deadline := time.Now().Add(10 * time.Second); size() < 4 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if size() < 4 {
		t.Fatalf("the background process never wrote tick (%d bytes); the terminal shows:\n%q", size(), s.scr.String())
	}
	s.stopJob(t)
	held := stillFor(t, size, "a process of the sandbox wrote while jail was stopped")
	m = s.send("fg\r")
	s.waitRaw(t, true, 10*time.Second)
	if !growsPast(size, held) {
		t.Errorf("the held process did not go on after fg: tick stayed %d bytes", size())
	}
	time.Sleep(200 * time.Millisecond)
	m = s.send("\x03")
	s.waitSince(t, m, "host$ ", 10*time.Second)
	s.send("exit\r")
	s.wait(t, 10*time.Second)
}

// Ctrl-Z on `jail exec -t NAME -- CMD` (no -i: the user's terminal cooked,
// output processing left to the sandbox's pty) stops the command with jail
// exec, as a shell's job: nothing of it runs while the shell has its prompt,
// the terminal is as jail exec found it, and fg continues both with jail
// exec's mode again; Ctrl-C then ends the command. Seen failing on
// d017ba5's binary: jail exec stopped alone and the command wrote on while
// the shell had its prompt; with the stop (then SIGSTOP), a jail exec
// killed while stopped left its command stopped in the sandbox.
func TestJobCtrlZExec(t *testing.T) {
	ws := workspace(t)
	name := "z" + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name)
	tick := filepath.Join(ws, "tick")
	s := hostShell(t, ws)
	opost := func() bool {
		tio, err := unix.IoctlGetTermios(int(s.master.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		return tio.Oflag&unix.OPOST != 0
	}
	waitOpost := func(want bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); opost() != want; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the terminal's output processing is %v, want %v; it shows:\n%q", !want, want, s.scr.String())
			}
		}
	}
	size := fileSize(tick)
	// Builtins only: the loop's writes are the command running.
	m := s.send("$J exec -t " + name + " -- sh -c 'echo ru\"\"nning; while :; do echo x >> tick; i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; done'\r")
	s.waitSince(t, m, "running", 30*time.Second)
	waitOpost(false)
	if !growsPast(size, 0) {
		t.Fatalf("the command never wrote tick; the terminal shows:\n%q", s.scr.String())
	}
	s.stopJob(t)
	if !opost() {
		t.Error("the terminal was left without output processing after the stop")
	}
	stillFor(t, size, "the command wrote while jail exec was stopped")
	m = s.send("fg\r")
	s.waitSince(t, m, "exec -t", 5*time.Second)
	waitOpost(false)
	if !growsPast(size, size()) {
		t.Errorf("the command did not go on after fg: tick stayed %d bytes", size())
	}
	s.endJob(t, "\x03", 130)
	// jail exec (without -t: its stdio the terminal's) killed while
	// stopped: the command, stopped with it, gets SIGHUP and SIGCONT (as
	// an orphaned job of a hung-up terminal) and ends; it was left stopped
	// in the sandbox for good. (With -t the pty's hangup does that.)
	m = s.send("$J exec " + name + " -- sh -c 'echo ag\"\"ain; while :; do echo x >> tick; i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; done'\r")
	s.waitSince(t, m, "again", 30*time.Second)
	if !growsPast(size, size()) {
		t.Fatalf("the second command never wrote tick; the terminal shows:\n%q", s.scr.String())
	}
	s.stopJob(t)
	m = s.send("kill -KILL %1\r")
	s.waitSince(t, m, "host$ ", 5*time.Second)
	for deadline := time.Now().Add(10 * time.Second); sessInspect(t, name).Execs != 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the command of a jail exec killed while stopped still runs (stopped) in the sandbox")
		}
	}
	s.killedJobGone(t, "the killed jail exec")
	s.send("exit\r")
	s.wait(t, 10*time.Second)
}

// Ctrl-Z while jail exec awaits its command's start (init held stopped)
// stops the job once the command runs, the command with it: nothing shows
// "Stopped" before, the command writes nothing while the job is stopped,
// and fg continues both. By default the SIGTSTP stopped jail exec alone at
// once, and the command, started meanwhile, ran on unseen while the shell
// had its prompt (seen failing on 3d9995d: "Stopped" before init served).
func TestJobCtrlZExecStart(t *testing.T) {
	ws := workspace(t)
	name := "zs" + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name)
	in := sessInspect(t, name)
	tick := filepath.Join(ws, "tick")
	size := fileSize(tick)
	s := hostShell(t, ws)
	resume := proctest.Hold(t, in.InitPid)
	s.send("$J exec " + name + " -- sh -c 'while :; do echo x >> tick; i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; done'\r")
	// jail exec awaits the start once the trail has its request.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(in.Audit)
		if strings.Contains(string(b), "exec 1 requested") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jail exec's request never reached the trail; the terminal shows:\n%q", s.scr.String())
		}
	}
	z := s.send("\x1a")
	time.Sleep(500 * time.Millisecond)
	if strings.Contains(s.since(z), "Stopped") {
		t.Errorf("jail exec stopped alone while its start was awaited: %q", s.since(z))
	}
	resume()
	s.waitSince(t, z, "Stopped", 10*time.Second)
	s.waitSince(t, z, "host$ ", 5*time.Second)
	stillFor(t, size, "the command wrote while the job was stopped")
	held := size()
	m := s.send("fg\r")
	s.waitSince(t, m, "exec "+name, 5*time.Second)
	if !growsPast(size, held) {
		t.Errorf("the command did not go on after fg: tick stayed %d bytes", size())
	}
	s.endJob(t, "\x03", 130)
	s.send("exit\r")
	s.wait(t, 10*time.Second)
}

// Ctrl-Z on `jail exec -it NAME -- CMD` (the user's terminal raw, keys
// going to the sandbox's pty) where CMD does no job control of its own:
// CMD leads the pty's session, so its process group is orphaned (its
// parent, init, is in another session) and the kernel discards the
// SIGTSTP the pty's line discipline makes of the key. jail exec sees the
// key instead and stops the command with itself, as with -t alone: the
// shell says "Stopped", the terminal is as it was, nothing of the command
// runs, and fg continues both with the terminal raw again. A job-control
// shell inside (bash -i) keeps the key: its own job stops, jail exec does
// not. Seen failing on fe71cc2's binary: the key did nothing, the command
// ran on and the shell never said "Stopped".
func TestJobCtrlZExecInteractive(t *testing.T) {
	ws := workspace(t)
	name := "zi" + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name)
	tick := filepath.Join(ws, "tick")
	size := fileSize(tick)
	s := hostShell(t, ws)
	// Builtins only: the loop's writes are the command running.
	m := s.send("$J exec -it " + name + " -- sh -c 'echo ru\"\"nning; while :; do echo x >> tick; i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; done'\r")
	s.waitSince(t, m, "running", 30*time.Second)
	s.waitRaw(t, true, 5*time.Second)
	if !growsPast(size, 0) {
		t.Fatalf("the command never wrote tick; the terminal shows:\n%q", s.scr.String())
	}
	s.stopJob(t)
	if s.rawMode(t) {
		t.Fatal("the terminal is still raw after the stop")
	}
	held := stillFor(t, size, "the command wrote while jail exec was stopped")
	m = s.send("fg\r")
	s.waitSince(t, m, "exec -it", 5*time.Second)
	s.waitRaw(t, true, 10*time.Second)
	if !growsPast(size, held) {
		t.Errorf("the command did not go on after fg: tick stayed %d bytes", size())
	}
	time.Sleep(200 * time.Millisecond)
	s.endJob(t, "\x03", 130)

	// A job-control shell inside: Ctrl-Z stops its job, not jail exec.
	s.innerShell(t, name)
	m = s.send("sleep 100\r")
	time.Sleep(500 * time.Millisecond)
	z := s.send("\x1a")
	s.waitSince(t, z, "Stopped", 10*time.Second)
	s.waitSince(t, z, "inside$ ", 5*time.Second)
	if strings.Contains(s.since(z), "host$ ") || !s.rawMode(t) {
		t.Fatalf("Ctrl-Z in the shell inside stopped jail exec, not the shell's job:\n%q", s.since(z))
	}
	m = s.send("kill -9 %1\r")
	s.waitSince(t, m, "inside$ ", 10*time.Second)
	s.killedJobGone(t, "the inner shell's killed job")
	m = s.send("exit\r")
	s.waitSince(t, m, "host$ ", 10*time.Second)

	// -i with input from a pipe: a 0x1a in it is data, not the user's
	// key (seen failing on cb8bd42: the job stopped).
	m = s.send("printf 'x\\032y' | $J exec -it " + name + " -- sh -c 'sleep 1; echo sl\"\"ept'\r")
	s.waitSince(t, m, "slept", 30*time.Second)
	s.waitSince(t, m, "host$ ", 10*time.Second)
	if strings.Contains(s.since(m), "Stopped") {
		t.Fatalf("a 0x1a in piped input stopped jail exec:\n%q", s.since(m))
	}
	s.send("exit\r")
	s.wait(t, 10*time.Second)
}

// A program under jail exec -it that stops itself, as vim and Claude Code
// do at Ctrl-Z (the key read in raw mode, the screen left, then a SIGTSTP
// to its own group, to itself, or raise(3)'s; or through ncurses'
// handler, which stops it with a second one), stops with jail exec as a
// shell's job, and fg continues it. It leads its pty's session, so the
// kernel discards that SIGTSTP: the program went on (vim) or waited for a
// SIGCONT that never came, the user's terminal its cooked screen (seen
// failing on 69a6f4f: no "Stopped" after the 'z'). Where no shell could
// resume jail exec the program goes on at once.
func TestJobSelfSuspendExec(t *testing.T) {
	py := needPython(t)
	ws := workspace(t)
	name := "ss" + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name)
	writeSelfStop(t, ws)
	s := hostShell(t, ws)
	m := s.send("$J exec -it " + name + " -- " + py + " selfstop.py\r")
	s.waitSince(t, m, "tui drawn 0", 30*time.Second)
	s.waitRaw(t, true, 5*time.Second)
	waitResumed(t, ws, "0", 10*time.Second)
	for i, key := range []string{"n", "z", "r"} {
		m = s.stoppedBy(t, key)
		last := "left the screen"
		if key == "n" {
			last = "\x1b[?1049l" // ncurses leaving the alternate screen
		}
		if out := s.since(m); !strings.Contains(out[:strings.Index(out, "Stopped")], last) {
			t.Errorf("%s: the program's last words did not reach the terminal before the shell's:\n%q", key, out)
		}
		time.Sleep(300 * time.Millisecond)
		if b, _ := os.ReadFile(filepath.Join(ws, "resumed")); string(b) != strconv.Itoa(i) {
			t.Fatalf("%s: the program went on while stopped (it says %q)", key, b)
		}
		m = s.send("fg\r")
		s.waitSince(t, m, fmt.Sprintf("tui drawn %d", i+1), 10*time.Second)
		s.waitRaw(t, true, 5*time.Second)
		waitResumed(t, ws, strconv.Itoa(i+1), 10*time.Second)
	}
	s.endJob(t, "q", 0)

	// A shell inside that stops itself (its suspend builtin: a SIGSTOP,
	// which the kernel does not discard) stops jail exec with it; fg
	// brings its prompt back (seen failing on 0da85aa: jail exec waited
	// on a stopped shell, and Ctrl-Z, a byte for that shell, did nothing).
	s.innerShell(t, name)
	s.stoppedBy(t, "suspend\r")
	m = s.send("fg\r")
	s.waitRaw(t, true, 10*time.Second)
	m = s.send("echo back\"\"again\r")
	s.waitSince(t, m, "backagain", 10*time.Second)
	s.endJob(t, "exit\r", 0)

	// No shell to resume it (setsid: no controlling terminal): the
	// program's stop is given back at once and it goes on.
	m = s.send("setsid -w $J exec -it " + name + " -- " + py + " selfstop.py\r")
	s.waitSince(t, m, "tui drawn 0", 30*time.Second)
	waitResumed(t, ws, "0", 10*time.Second)
	m = s.send("z")
	waitResumed(t, ws, "1", 5*time.Second)
	if strings.Contains(s.since(m), "Stopped") {
		t.Fatalf("jail exec stopped with no shell to resume it:\n%q", s.since(m))
	}
	s.endJob(t, "q", 0)
	s.send("exit\r")
	s.wait(t, 10*time.Second)
}

// waitResumed waits until TestJobSelfSuspendExec's program has drawn its
// screen the nth time (its file "resumed" says n).
func waitResumed(t *testing.T, ws, n string, d time.Duration) {
	t.Helper()
	var b []byte
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, _ = os.ReadFile(filepath.Join(ws, "resumed")); string(b) == n {
			return
		}
	}
	t.Fatalf("the program never drew its screen the %sth time (its file \"resumed\" says %q)", n, b)
}

// selfStopPy draws "tui drawn N" with curses and stops itself at a key:
// n through ncurses' handler, z by kill(0), r by raise(3); q quits. Its
// file "resumed" says N once drawn.
const selfStopPy = `
import curses, os, signal
def main(scr):
    n = 0
    while True:
        scr.clear()
        scr.addstr(1, 2, "tui drawn %d" % n)
        scr.refresh()
        with open("resumed.tmp", "w") as f:
            f.write(str(n))
        os.rename("resumed.tmp", "resumed")
        c = scr.getch()
        if c == ord("q"):
            return
        if c == ord("n"):
            # ncurses' own handler leaves the screen, then stops the
            # process with the default action (kill(getpid())).
            os.kill(os.getpid(), signal.SIGTSTP)
            n += 1
        if c in (ord("z"), ord("r")):
            curses.endwin()
            print("left the screen", flush=True)
            signal.signal(signal.SIGTSTP, signal.SIG_DFL)
            if c == ord("z"):
                os.kill(0, signal.SIGTSTP)
            else:
                signal.raise_signal(signal.SIGTSTP) # tgkill
            n += 1
curses.wrapper(main)
`

func writeSelfStop(t *testing.T, ws string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(ws, "selfstop.py"), []byte(selfStopPy), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A background sandbox's command that stops (its own suspend key, or
// Ctrl-Z on a cooked terminal) stops jail attach with it as a shell's job:
// no shell can resume the sandbox itself, which continued the command at
// once (seen failing on fad49d1: no "Stopped", the program redrawn). fg
// continues both; the client going away while stopped continues the
// command.
func TestJobAttachSuspend(t *testing.T) {
	py := needPython(t)
	ws := workspace(t)
	writeSelfStop(t, ws)
	name := "as" + strings.ReplaceAll(marker(), ".", "")
	startSession(t, ws, name, "-t", "--", py, "selfstop.py")
	waitResumed(t, ws, "0", 30*time.Second)
	s := hostShell(t, ws)
	m := s.send("$J attach " + name + "\r")
	s.waitSince(t, m, "tui drawn 0", 30*time.Second)
	s.waitRaw(t, true, 5*time.Second)
	m = s.stoppedBy(t, "z")
	if out := s.since(m); !strings.Contains(out[:strings.Index(out, "Stopped")], "left the screen") {
		t.Errorf("the program's last words did not reach the terminal before the shell's:\n%q", out)
	}
	time.Sleep(300 * time.Millisecond)
	if b, _ := os.ReadFile(filepath.Join(ws, "resumed")); string(b) != "0" {
		t.Fatalf("the program went on while jail attach was stopped (it says %q)", b)
	}
	m = s.send("fg\r")
	s.waitSince(t, m, "tui drawn 1", 10*time.Second)
	s.waitRaw(t, true, 5*time.Second)
	waitResumed(t, ws, "1", 10*time.Second)
	// Stopped again, and the stopped client killed: the command goes on.
	s.stoppedBy(t, "z")
	s.send("kill -9 %1\r")
	waitResumed(t, ws, "2", 10*time.Second)
	s.killedJobGone(t, "the killed jail attach")
	// An attach no shell could resume (setsid: no controlling terminal)
	// declines: the command goes on at once, and the log says why.
	m = s.send("setsid -w $J attach " + name + "\r")
	s.waitSince(t, m, "tui drawn 2", 30*time.Second)
	m = s.send("z")
	waitResumed(t, ws, "3", 5*time.Second)
	if strings.Contains(s.since(m), "Stopped") {
		t.Fatalf("jail attach stopped with no shell to resume it:\n%q", s.since(m))
	}
	s.endJob(t, "q", 0)
	if r := sessJail(t, ws, "", "logs", name); !strings.Contains(r.stdout+r.stderr, "no shell could resume its jail attach") {
		t.Errorf("the log does not say why the stopped command went on (jail logs: exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	}
	s.send("exit\r")
	s.wait(t, 10*time.Second)
}
