package sandbox

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/ptyrelay"
	"github.com/jail-sandbox/jail/termfilter"
)

// This file: the terminal relay.

// newTermFilter is what stands between the sandbox's pty and the user's
// terminal: clipboard writes, reports and other host-affecting sequences
// are dropped unless allow-terminal names their class.
func newTermFilter(p *policy.Policy, w io.Writer) (*termfilter.Writer, error) {
	var allow []string
	for _, a := range p.AllowTerminal {
		allow = append(allow, strings.Split(a, ",")...)
	}
	f, err := termfilter.New(w, termfilter.Options{Allow: allow, EightBit: !localeUTF8(os.Environ())})
	if err != nil {
		return nil, &policy.FieldError{Key: "allow-terminal", Value: strings.Join(p.AllowTerminal, ","), Reason: err.Error()}
	}
	return f, nil
}

// localeUTF8 tells whether the user's locale decodes UTF-8, as the terminal
// then does. Only a locale naming another charset (de_DE.ISO-8859-1) says
// no: an unset or C locale is common where the terminal is UTF-8 (CI,
// ssh), and treating it as 8-bit would strip every UTF-8 character.
func localeUTF8(env []string) bool {
	loc := ""
	for _, name := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := lookupEnv(env, name); v != "" {
			loc = v
			break
		}
	}
	_, charset, ok := strings.Cut(loc, ".")
	if !ok {
		return true
	}
	charset, _, _ = strings.Cut(charset, "@")
	charset = strings.ToLower(strings.ReplaceAll(charset, "-", ""))
	return charset == "utf8"
}

// reportTerminal says what the filter dropped, once, at exit: a notice and
// one audit deny event per kind.
func (r *runner) reportTerminal() {
	r.mu.Lock()
	rl := r.relay
	r.mu.Unlock()
	if rl != nil {
		// Never a silent loss: the output the user did not see is said,
		// with why (a hung-up terminal is the run's SIGHUP besides).
		if n, err := rl.Lost(); n > 0 {
			r.notef("terminal: %d bytes of the agent's output were not shown: writing to the terminal failed: %v", n, err)
		}
		r.mu.Lock()
		left := r.relayCut - 1 // -1: not cut
		r.mu.Unlock()
		if left != -1 {
			more := ""
			if left > 0 {
				more = fmt.Sprintf(" (%d bytes and the write under way)", left)
			}
			r.notef("terminal: the agent's last output was not all shown%s: the terminal took none of it for %v after the agent ended (output stopped with Ctrl-S? a paused pane?)", more, relayQuiet)
		}
	}
	if r.term == nil {
		return
	}
	d := r.term.Dropped()
	if len(d) == 0 {
		return
	}
	// Queries left unanswered and vim's probe change nothing on the
	// screen: the trail keeps them, the user's screen is spared a line
	// after every vim (termfilter.Quiet).
	if s := r.term.Summary(); s != "" {
		// The flag named is the one that would have let some through,
		// if any does: a list of every class read as advice to allow
		// what no class covers (an image, a window operation).
		hint := ""
		switch classes, all := r.term.Lift(); {
		case all:
			hint = " (`allow-terminal` " + strings.Join(classes, ",") + " lets them through)"
		case len(classes) > 0:
			hint = " (`allow-terminal` " + strings.Join(classes, ",") + " lets some through)"
		}
		r.notef("terminal: dropped escape sequences that act beyond the screen: %s%s", s, hint)
	}
	kinds := make([]string, 0, len(d))
	for k := range d {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		r.record(audit.Deny{Layer: "terminal", What: "escape", Target: k, Reason: fmt.Sprintf("dropped %d", d[k])})
	}
}

func (r *runner) ptyFile() *os.File {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pty
}

func (r *runner) resizePty() {
	pty := r.ptyFile()
	if pty == nil {
		return
	}
	if ws, err := unix.IoctlGetWinsize(r.ttyFD, unix.TIOCGWINSZ); err == nil {
		_ = unix.IoctlSetWinsize(int(pty.Fd()), unix.TIOCSWINSZ, ws)
	}
}

// startRelay starts the relay between the host terminal and the sandbox's
// own pty (package ptyrelay). Interactive (stdin a terminal too), the host
// terminal goes raw and input is copied in: Ctrl-C, Ctrl-Z and friends are
// then interpreted by the sandbox's line discipline for its foreground job,
// nothing inside can reach the host terminal's ioctls (TIOCSTI injection),
// and the kill key (Enter ~ .) kills the sandbox at once. Otherwise the pty
// is output-only and stdin reaches the agent directly. Either way the
// output passes r.term, and term (the user's terminal) hung up is the
// run's SIGHUP.
func (r *runner) startRelay(interactive bool, term *os.File) {
	var out io.Writer = term
	if r.term != nil {
		out = r.term
	}
	rl := &ptyrelay.Relay{Pty: r.ptyFile(), Out: out, Term: term}
	// The terminal gone (hung up) is the run's SIGHUP (run's hupCh).
	rl.OnHangup = func() {
		select {
		case r.hupCh <- struct{}{}:
		default:
		}
	}
	if interactive {
		rl.In = os.Stdin
		rl.OnKillKey = func() { r.kill("user", "kill key ("+ptyrelay.KillKey+") typed on the terminal") }
	}
	if err := rl.Start(); err != nil {
		r.notef("terminal: %v (the relay runs without raw mode)", err)
	}
	r.mu.Lock()
	r.relay = rl
	r.ptyDone = rl.Done()
	r.mu.Unlock()
	if r.screen != nil {
		// From here the screen is the agent's and notices are held; a
		// security event (a mask the host took away) cannot wait for the
		// agent's exit: it is put on the agent's screen between two of the
		// filter's writes, as one restored line (ptyrelay.UrgentLine).
		r.notes.SetUrgent(r.screen.Urgent)
		// A timely notice (a server the host cannot reach) goes on the
		// screen as a line of its own where that harms nothing (a
		// command writing lines: a dev server's log), else it waits for
		// the summary (a full-screen or self-drawing agent's screen).
		r.notes.SetTimely(r.screen.Plain)
	}
}

// relayQuiet is how long the run's end waits for a relay that has the
// agent's last output to write and whose terminal takes none of it. A
// terminal that reads takes a writer's output in bursts, not steadily: the
// line discipline wakes a blocked writer only once its reader has emptied
// the buffer (~20 KiB: 3 s at 7 KiB/s, a slow link's pace).
const relayQuiet = 5 * time.Second

// awaitRelay waits, once the sandbox has ended, for the relay to write the
// agent's last output to the terminal (done: the pty read to its end):
// for as long as the terminal takes some, and relayQuiet at most while it
// takes none. A terminal that takes nothing (output stopped with Ctrl-S, a
// paused pane, a stalled link) would otherwise hold jail's exit, and the
// user's Ctrl-C with it, for ever; what it did not get is then said at
// exit (reportTerminal), never dropped in silence.
func (r *runner) awaitRelay(done <-chan struct{}) {
	r.mu.Lock()
	rl := r.relay
	r.mu.Unlock()
	if rl == nil {
		// A kept terminal's (jail run -d -t): its log and attached client
		// are copied apart; 2 s, as before.
		select {
		case <-done:
		case <-time.After(2 * time.Second):
		}
		return
	}
	quiet := time.NewTimer(relayQuiet)
	defer quiet.Stop()
	tick := time.NewTicker(relayQuiet / 20)
	defer tick.Stop()
	last := rl.Written()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			if w := rl.Written(); w != last {
				last = w
				quiet.Reset(relayQuiet)
			}
		case <-quiet.C:
			r.mu.Lock()
			r.relayCut = max(rl.Pending(), 0) + 1 // unknown (-1) is said as nothing left
			r.mu.Unlock()
			return
		}
	}
}

// restoreTerminal gives the host terminal back as it was.
func (r *runner) restoreTerminal() {
	r.mu.Lock()
	rl := r.relay
	r.mu.Unlock()
	if rl != nil {
		rl.Restore()
	}
	if r.screen != nil {
		// The screen is the user's again: no urgent line may land on it
		// now (the summary says them).
		r.screen.Close()
	}
	r.restoreStdinTerm()
}

// TerminalFilter wraps w, a terminal, in the filter the pty relay uses,
// letting through the classes allow names (the allow-terminal option):
// for jail exec -t, whose output reaches the user's terminal too.
func TerminalFilter(allow []string, w io.Writer) (io.Writer, error) {
	return newTermFilter(&policy.Policy{AllowTerminal: allow}, w)
}
