//go:build linux

package tests

// Issue 10, class 10: the terminal. What the agent prints reaches the
// user's terminal through jail's pty relay; sequences that act beyond the
// screen (clipboard writes, reports whose answer the shell reads after
// jail exits, file and font operations) must not, while everything a
// full-screen program draws with still does.

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// termHostile prints, between markers, what a hostile agent would send the
// host terminal, and ordinary colour output.
const termHostile = `printf 'begin\n'
printf '\033[1;31mred\033[0m plain \033[38;2;1;2;3mrgb\033[0m\n'
printf '\033]52;c;cm0gLXJmIH4K\007'
printf '\033]52;c;?\033\\'
printf '\033[21t\033[20t'
printf '\033]1337;File=inline=1:QUFB\007'
printf '\033P$qm\033\\'
printf '\033Ptmux;\033\033]52;c;eA==\007\033\\'
printf '\302\233''21t'
printf '\005'
printf '\033]0;title ok\007'
printf '\033[?1049h\033[?2004h\033[?2004l\033[?1049l'
printf 'end\n'
`

// termRun runs script in jail on a fresh host pty (stdin and stdout both
// terminals: the relay is on) and returns everything the host terminal
// received.
func termRun(t *testing.T, dir string, flags []string, script string) string {
	t.Helper()
	master, slave := openPty(t)
	defer master.Close()
	args := append(append([]string{}, flags...), "--", "/bin/sh", "-c", script)
	cmd := exec.Command(jail(t), args...)
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=", "LC_CTYPE=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	scr := watch(master)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("jail: %v\nterminal got: %q", err, scr.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("jail did not exit; terminal got: %q", scr.String())
	}
	scr.waitFor(t, "end", 5*time.Second)
	time.Sleep(100 * time.Millisecond) // the exit notice follows the output
	return scr.String()
}

func TestTerminalHostileSequencesDropped(t *testing.T) {
	ws := workspace(t)
	trail := filepath.Join(t.TempDir(), "trail.jsonl")
	got := termRun(t, ws, []string{"--audit", trail}, termHostile)
	begin := strings.Index(got, "begin")
	end := strings.Index(got, "end")
	if begin < 0 || end < begin {
		t.Fatalf("markers missing: %q", got)
	}
	out := got[begin:end]
	for _, bad := range []string{
		"\x1b]52", "\x1b[21t", "\x1b[20t", "\x1b]1337", "\x1bP", "\x9b", "\u009b", "\x05", "cm0gLXJmIH4K", "QUFB",
	} {
		if strings.Contains(out, bad) {
			t.Errorf("the host terminal received %q:\n%q", bad, out)
		}
	}
	// Ordinary output arrives byte for byte (the sandbox's own line
	// discipline turns \n into \r\n, as any terminal would).
	for _, good := range []string{
		"\x1b[1;31mred\x1b[0m plain \x1b[38;2;1;2;3mrgb\x1b[0m\r\n",
		"\x1b]0;title ok\x07",
		"\x1b[?1049h\x1b[?2004h\x1b[?2004l\x1b[?1049l",
	} {
		if !strings.Contains(out, good) {
			t.Errorf("the host terminal did not receive %q unchanged:\n%q", good, out)
		}
	}
	if !strings.Contains(got[end:], "terminal: dropped") || !strings.Contains(got[end:], "OSC 52 (clipboard)") {
		t.Errorf("no exit notice of what was dropped:\n%q", got[end:])
	}
	// The flag named is the class that would have let some through (the
	// clipboard write), not a list of every class.
	if !strings.Contains(got[end:], "(--allow-terminal clipboard lets some through)") {
		t.Errorf("the exit notice does not name the class that lets some through:\n%q", got[end:])
	}
	// The trail records each kind.
	kinds := terminalDenies(t, trail)
	for _, k := range []string{"OSC 52 (clipboard)", "CSI 20/21 t (title report)", "DCS DECRQSS (a setting query)", "DCS tmux passthrough", "ENQ (answerback)"} {
		if !kinds[k] {
			t.Errorf("trail lacks a terminal deny for %q (has %v)", k, kinds)
		}
	}
}

// What every vim sends (its xterm compatibility probe, an unknown DCS
// that terminals ignore), the queries of neovim and others (DECRQSS,
// XTGETTCAP) and Claude Code's probes at every start (kitty graphics
// support, the cell's size in pixels, OSC 7501) are dropped unanswered,
// which changes nothing on the screen:
// the trail records them, the user's screen gets no line about them
// (it did after every vim, git commit's editor among them).
func TestTerminalQuietDropsUnsaid(t *testing.T) {
	ws := workspace(t)
	trail := filepath.Join(t.TempDir(), "trail.jsonl")
	got := termRun(t, ws, []string{"--audit", trail}, `printf 'begin\n'
printf '\033Pzz\033\\\033P$q q\033\\\033P+q524742\033\\'
printf '\033_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\033\\\033[16t\033]7501;?\007'
printf 'end\n'
`)
	end := strings.Index(got, "end")
	if end < 0 || strings.Contains(got, "\x1bP") {
		t.Fatalf("markers missing or a DCS passed: %q", got)
	}
	if strings.Contains(got[end:], "terminal: dropped") {
		t.Errorf("a notice for drops that change nothing on the screen:\n%q", got[end:])
	}
	kinds := terminalDenies(t, trail)
	for _, k := range []string{"DCS zz (vim's xterm compatibility probe)", "DCS DECRQSS (a setting query)", "DCS XTGETTCAP (a terminfo query)",
		"APC kitty graphics (a support query)", "CSI t (a size or state query)", "OSC 7501 (a query)"} {
		if !kinds[k] {
			t.Errorf("trail lacks a terminal deny for %q (has %v)", k, kinds)
		}
	}
}

// Agent CLIs ask the terminal for its colours as they start (Claude Code,
// Gemini CLI and Codex the background, Codex and Copilot CLI the
// foreground and the palette), and Copilot CLI resets them as it leaves.
// The queries reach the terminal, whose answer is its own colour; the
// resets are dropped without a word, since no colour could be set. Seen on
// 7226858: the queries were dropped and every interactive agent session
// ended with "dropped escape sequences that act beyond the screen: OSC 11
// (colours)", Copilot CLI's with 21 of them.
func TestTerminalColourQueriesPass(t *testing.T) {
	ws := workspace(t)
	trail := filepath.Join(t.TempDir(), "trail.jsonl")
	queries := `\033]10;?\033\\\033]11;?\007\033]4;0;?\033\\\033]4;15;?\033\\`
	got := termRun(t, ws, []string{"--audit", trail}, `printf 'begin\n'
printf '`+queries+`'
printf '\033]110\033\\\033]111\033\\\033]104\007'
printf 'end\n'
`)
	end := strings.Index(got, "end")
	if end < 0 {
		t.Fatalf("markers missing: %q", got)
	}
	for _, q := range []string{"\x1b]10;?\x1b\\", "\x1b]11;?\a", "\x1b]4;0;?\x1b\\", "\x1b]4;15;?\x1b\\"} {
		if !strings.Contains(got[:end], q) {
			t.Errorf("the colour query %q did not reach the terminal: %q", q, got[:end])
		}
	}
	if strings.Contains(got, "\x1b]11"+"1") || strings.Contains(got, "\x1b]104") {
		t.Errorf("a colour reset passed: %q", got)
	}
	if strings.Contains(got[end:], "terminal: dropped") {
		t.Errorf("a notice for colour queries and resets:\n%q", got[end:])
	}
	kinds := terminalDenies(t, trail)
	for _, k := range []string{"OSC 110 (a colour reset)", "OSC 111 (a colour reset)", "OSC 104 (a colour reset)"} {
		if !kinds[k] {
			t.Errorf("trail lacks a terminal deny for %q (has %v)", k, kinds)
		}
	}
	// A colour set is still dropped and said, with the class to allow.
	got = termRun(t, ws, nil, `printf '\033]11;#ffffff\007\033]11;?\007end\n'`)
	if end = strings.Index(got, "end"); end < 0 || strings.Contains(got, "#ffffff") {
		t.Fatalf("a colour set passed or the marker is missing: %q", got)
	}
	if !strings.Contains(got[end:], "OSC 11 (colours) x1 (--allow-terminal colors lets them through)") {
		t.Errorf("the dropped colour set unsaid:\n%q", got[end:])
	}
}

// terminalDenies are the kinds of the trail's terminal denies.
func terminalDenies(t *testing.T, trail string) map[string]bool {
	t.Helper()
	f, err := os.Open(trail)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kinds := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct{ Type, Layer, Target string }
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "deny" && ev.Layer == "terminal" {
			kinds[ev.Target] = true
		}
	}
	return kinds
}

// --allow-terminal clipboard lets clipboard writes through, never reads,
// and nothing else.
func TestTerminalAllowClipboard(t *testing.T) {
	ws := workspace(t)
	got := termRun(t, ws, []string{"--allow-terminal", "clipboard"}, termHostile)
	if !strings.Contains(got, "\x1b]52;c;cm0gLXJmIH4K\x07") {
		t.Errorf("clipboard write did not pass with --allow-terminal clipboard:\n%q", got)
	}
	for _, bad := range []string{"\x1b]52;c;?", "\x1b[21t", "\x1bP"} {
		if strings.Contains(got, bad) {
			t.Errorf("%q passed with --allow-terminal clipboard:\n%q", bad, got)
		}
	}
	r := run(t, runOpts{dir: ws}, "--allow-terminal", "clipbaord", "--", "/bin/true")
	if r.code != 125 || !strings.Contains(r.stderr, "--allow-terminal") {
		t.Errorf("unknown class: exit %d, stderr %q", r.code, r.stderr)
	}
}

// Throughput of the relay: a large file cat'ed inside a relayed terminal
// arrives whole, and not much slower with the filter than without.
func TestTerminalRelayThroughput(t *testing.T) {
	ws := workspace(t)
	line := strings.Repeat("0123456789abcdef", 7) + "\x1b[32mok\x1b[0m\n"
	big := strings.Repeat(line, (16<<20)/len(line))
	if err := os.WriteFile(filepath.Join(ws, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	want := strings.Count(big, "\n")
	measure := func(flags ...string) time.Duration {
		master, slave := openPty(t)
		defer master.Close()
		cmd := exec.Command(jail(t), append(flags, "--", "cat", "big.txt")...)
		cmd.Dir = ws
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		slave.Close()
		// Count lines as they arrive (EIO once jail and its pty are gone).
		n, buf, tail := 0, make([]byte, 256<<10), ""
		for {
			k, err := master.Read(buf)
			chunk := tail + string(buf[:k])
			if i := strings.LastIndex(chunk, "\n"); i >= 0 {
				n += strings.Count(chunk[:i+1], "\x1b[32mok\x1b[0m")
				tail = chunk[i+1:]
			} else {
				tail = chunk
			}
			if err != nil {
				n += strings.Count(tail, "\x1b[32mok\x1b[0m")
				break
			}
		}
		d := time.Since(t0)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("jail: %v", err)
		}
		if n != want {
			t.Fatalf("%d of %d lines arrived", n, want)
		}
		return d
	}
	// The best of three each, alternating: the machine may be busy.
	var on, off time.Duration
	for i := 0; i < 3; i++ {
		if d := measure("--allow-terminal", "all"); off == 0 || d < off {
			off = d
		}
		if d := measure(); on == 0 || d < on {
			on = d
		}
	}
	t.Logf("%d MiB through the relay: %v with the filter (%.0f MB/s), %v without (%.0f MB/s)", len(big)>>20,
		on, float64(len(big))/on.Seconds()/1e6, off, float64(len(big))/off.Seconds()/1e6)
	if on > 2*off+time.Second {
		t.Errorf("the filter slows the relay down: %v with, %v without", on, off)
	}
}

// Without a terminal on stdin (a pipe, a file, </dev/null), jail used to
// hand the host terminal itself to the agent as stdout and stderr: every
// byte reached it unfiltered. It must pass the same filter, and each of
// stdout and stderr must still go where it was redirected.
func TestTerminalOutputOnly(t *testing.T) {
	ws := workspace(t)
	master, slave := openPty(t)
	defer master.Close()
	logf := filepath.Join(t.TempDir(), "stderr.log")
	errFile, err := os.Create(logf)
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	script := termHostile + `[ -t 1 ] && echo stdout-is-a-tty; [ -t 0 ] || echo stdin-is-not; read line; echo "read:$line"; printf 'to-stderr\n' >&2; printf 'all-done\n'`
	cmd := exec.Command(jail(t), "--", "/bin/sh", "-c", script)
	cmd.Dir = ws
	cmd.Stdin = strings.NewReader("from-pipe\n")
	cmd.Stdout, cmd.Stderr = slave, errFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 1}
	scr := watch(master)
	if err := cmd.Run(); err != nil {
		t.Fatalf("jail: %v\nterminal got: %q", err, scr.String())
	}
	if !scr.waitUntil("all-done", 5*time.Second) {
		// jail's own words (a relay that could not write says so at exit).
		b, _ := os.ReadFile(logf)
		t.Fatalf("terminal never showed %q; it shows:\n%q\njail's stderr:\n%s", "all-done", scr.String(), b)
	}
	got := scr.String()
	for _, bad := range []string{"\x1b]52", "\x1b[21t", "\x1b]1337", "\x1bP", "\x05", "\u009b"} {
		if strings.Contains(got, bad) {
			t.Errorf("the host terminal received %q without a pty relay:\n%q", bad, got)
		}
	}
	for _, good := range []string{"\x1b[1;31mred\x1b[0m", "stdout-is-a-tty", "stdin-is-not", "read:from-pipe"} {
		if !strings.Contains(got, good) {
			t.Errorf("the host terminal lacks %q:\n%q", good, got)
		}
	}
	b, _ := os.ReadFile(logf)
	if !strings.Contains(string(b), "to-stderr") || strings.Contains(got, "to-stderr") {
		t.Errorf("stderr went astray: file %q, terminal %q", b, got)
	}
}

// TestTerminalSummaryOnItsOwnLine: a command that ends mid-line (a prompt
// it was waiting at when the user pressed Ctrl-C: Gemini CLI's "Enter the
// authorization code: ^C") had jail's summary glued to that line
// ("...code: ^Cjail: refused ...", session 49). The summary now starts on
// a line of its own, and a command that ended its line gets no blank one.
func TestTerminalSummaryOnItsOwnLine(t *testing.T) {
	ws := workspace(t)
	refuse := "/bin/bash -c 'exec 3<>/dev/tcp/" + refusedHost + "/443' 2>/dev/null; "
	out := termRun(t, ws, nil, refuse+`printf 'end\nEnter the code: \033[0m'; exit 0`)
	if !strings.Contains(out, "Enter the code: ") {
		t.Fatalf("the prompt never came: %q", out)
	}
	after := out[strings.Index(out, "Enter the code: "):]
	if i := strings.Index(after, "jail: refused"); i < 0 {
		t.Fatalf("no summary after the prompt: %q", after)
	} else if !strings.Contains(after[:i], "\n") {
		t.Errorf("the summary is on the prompt's line: %q", after[:i+20])
	}
	out = termRun(t, ws, nil, refuse+`printf 'end\nlast line\n'; exit 0`)
	after = out[strings.Index(out, "last line"):]
	if i := strings.Index(after, "jail: refused"); i < 0 {
		t.Fatalf("no summary after the last line: %q", after)
	} else if strings.Count(after[:i], "\n") > 1 {
		t.Errorf("a blank line before the summary: %q", after[:i+20])
	}
}
