package notice

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/jail-sandbox/jail/internal/termsafe"
)

// Severity orders notices; --quiet and -v choose which are shown.
type Severity int

// Severities, least to most important.
const (
	// Trace lines (JAIL_TRACE=1) are shown when Options.Trace is set and
	// never recorded.
	Trace Severity = iota
	// Debug is shown with -v only and not recorded.
	Debug
	// Info and Warning are shown unless --quiet, and recorded.
	Info
	Warning
	// Error is always shown and recorded.
	Error
)

func (s Severity) String() string {
	switch s {
	case Trace:
		return "trace"
	case Debug:
		return "debug"
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// Notice is one message to the user.
type Notice struct {
	// Kind is the area it comes from: "net", "exec", "fs", "limit",
	// "terminal", "setup", "init", "job", "jail".
	Kind     string
	Severity Severity
	// Text is one line without the "jail: " prefix; control characters
	// are shown escaped.
	Text string
	// Group, when set, makes notices of one Kind with the same Group one
	// thing: the first is shown (and recorded), later ones are counted.
	Group string
	// Urgent marks a security event the user must see now (a mask the
	// host took away: the sandbox can read what it hid): it is shown
	// whatever --quiet says, and while notices are held it is also
	// written at once through the Sink's urgent writer (SetUrgent), not
	// only in the summary after the agent's exit.
	Urgent bool
	// Timely marks a notice the user needs while the command runs, not
	// only after it (a server inside the host cannot reach: the user is
	// opening it in a browser now). While notices are held it is also
	// given to the Sink's timely writer (SetTimely), which puts it on the
	// screen as a line of its own when the screen allows one without
	// harm; it is in the summary too.
	Timely bool
}

// Options configure a Sink.
type Options struct {
	Quiet   bool // --quiet: Info and Warning are recorded, not shown
	Verbose bool // -v: Debug is shown
	Trace   bool // JAIL_TRACE=1: Trace is shown
	// Record receives every notice of severity Info or above that is the
	// first of its group, before it is shown or held. It may be nil.
	Record func(Notice)
}

// Sink is the channel. Its zero value is not usable; use New.
type Sink struct {
	mu     sync.Mutex
	w      io.Writer
	eol    func() string
	o      Options
	held   bool
	urgent func(line string) // writes an urgent line on a held screen (SetUrgent)
	timely func(line string) // puts a timely line on a held screen when it may (SetTimely)
	also   func(line string) // gets every urgent line besides (AlsoUrgent)
	kept   []*entry          // held entries, in order of first appearance
	groups map[string]*entry
}

type entry struct {
	n     Notice
	count int
	shown bool // written at once (not held)
}

// New returns a Sink writing to w (jail's stderr).
func New(w io.Writer, o Options) *Sink {
	return &Sink{w: w, eol: lineEnding(w), o: o, groups: map[string]*entry{}}
}

// visible: n is shown (at once, or in the summary). An urgent notice is
// shown whatever --quiet says: a security event the user asked not to
// hear about routine things for is not routine.
func (s *Sink) visible(n Notice) bool {
	if n.Urgent {
		return true
	}
	switch n.Severity {
	case Trace:
		return s.o.Trace
	case Debug:
		return s.o.Verbose
	case Info, Warning:
		return !s.o.Quiet
	}
	return true
}

// Add sends one notice: recorded, then written at once or held.
func (s *Sink) Add(n Notice) {
	n.Text = oneLine(n.Text)
	s.mu.Lock()
	var e *entry
	if n.Group != "" {
		key := n.Kind + "\x00" + n.Group
		if e = s.groups[key]; e != nil {
			e.count++
			s.mu.Unlock()
			return
		}
		e = &entry{n: n, count: 1}
		s.groups[key] = e
	} else {
		e = &entry{n: n, count: 1}
	}
	held, urgent, timely, also := s.held, s.urgent, s.timely, s.also
	if held && s.visible(n) {
		s.kept = append(s.kept, e)
	}
	s.mu.Unlock()
	if n.Severity >= Info && s.o.Record != nil {
		s.o.Record(n)
	}
	if n.Urgent && also != nil {
		also("jail: " + n.Text)
	}
	if held && n.Timely && !n.Urgent && timely != nil && s.visible(n) {
		timely("jail: " + n.Text)
		return
	}
	if !s.visible(n) || held && !n.Urgent {
		return
	}
	if held && urgent != nil {
		// The screen is the agent's: the supervisor's writer puts the
		// line where it does not scramble it. It is in the summary too.
		urgent("jail: " + n.Text)
		return
	}
	// Held without an urgent writer (no screen relayed yet): the
	// terminal is not drawn on by the agent, the line goes out as usual.
	s.mu.Lock()
	defer s.mu.Unlock()
	e.shown = true
	io.WriteString(s.w, "jail: "+n.Text+s.eol())
}

// Notef adds a notice of kind and severity with a formatted text.
func (s *Sink) Notef(kind string, sev Severity, format string, a ...any) {
	s.Add(Notice{Kind: kind, Severity: sev, Text: fmt.Sprintf(format, a...)})
}

// Hold keeps every notice from now on until Release: a terminal is being
// relayed and the screen is the agent's.
func (s *Sink) Hold() {
	s.mu.Lock()
	s.held = true
	s.mu.Unlock()
}

// SetUrgent sets how an urgent notice is written while notices are held
// (the supervisor's: a line on the agent's screen that does not scramble
// it); nil writes it as any other line. It is called without the Sink's
// lock, with the line ("jail: " and the escaped text, no line ending).
func (s *Sink) SetUrgent(write func(line string)) {
	s.mu.Lock()
	s.urgent = write
	s.mu.Unlock()
}

// SetTimely sets how a timely notice is put on the screen while notices
// are held (the supervisor's: a line of its own when the screen allows
// one); nil keeps it for the summary only. It is called without the
// Sink's lock, with the line ("jail: " and the escaped text, no line
// ending), and must not wait for the terminal.
func (s *Sink) SetTimely(write func(line string)) {
	s.mu.Lock()
	s.timely = write
	s.mu.Unlock()
}

// AlsoUrgent sets a function that gets every urgent notice's line ("jail: "
// and the escaped text, no line ending) besides how the Sink shows it: the
// client attached to a background sandbox's terminal (jail attach) and jail
// exec clients, whose screens are not the Sink's writer. Called without the Sink's lock.
func (s *Sink) AlsoUrgent(fn func(line string)) {
	s.mu.Lock()
	s.also = fn
	s.mu.Unlock()
}

// Holding tells whether notices are being kept.
func (s *Sink) Holding() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// Pending tells whether Release would write anything: notices are held
// and some were kept.
func (s *Sink) Pending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held && len(s.kept) > 0
}

// Release writes what was kept since Hold as a short summary, each notice
// once with its count, followed by footer (the trail's path) when anything
// was kept, and writes later notices at once again. Call it after the
// terminal is restored.
func (s *Sink) Release(footer string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.held {
		return
	}
	s.held = false
	kept := s.kept
	s.kept = nil
	if len(kept) == 0 {
		return
	}
	var b bytes.Buffer
	eol := s.eol()
	for _, e := range kept {
		b.WriteString("jail: " + e.n.Text)
		if e.count > 1 {
			fmt.Fprintf(&b, " (%d times)", e.count)
		}
		b.WriteString(eol)
	}
	if footer != "" {
		b.WriteString("jail: " + oneLine(footer) + eol)
	}
	s.w.Write(b.Bytes())
}

// Counts returns, for every group seen, how many notices it had (for
// tests and the exit report).
func (s *Sink) Counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, e := range s.groups {
		out[k] = e.count
	}
	return out
}

// Writer returns an io.Writer that turns each line written to it into a
// notice of kind and severity (for code that logs to a writer, such as
// netproxy's Proxy.Log). A "jail: " prefix is removed; a line's text is its
// own group, so a repeated line is counted, not repeated.
func (s *Sink) Writer(kind string, sev Severity) io.Writer {
	return &lineWriter{s: s, kind: kind, sev: sev}
}

type lineWriter struct {
	mu   sync.Mutex
	s    *Sink
	kind string
	sev  Severity
	buf  []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.buf = append(l.buf, p...)
	var lines []string
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > 4096 { // a line without end: flush it rather than grow
		lines = append(lines, string(l.buf))
		l.buf = nil
	}
	l.mu.Unlock()
	for _, line := range lines {
		line = strings.TrimPrefix(strings.TrimRight(line, "\r"), "jail: ")
		if line != "" {
			l.s.Add(Notice{Kind: l.kind, Severity: l.sev, Text: line, Group: line})
		}
	}
	return len(p), nil
}

// Line is how a notice of text is shown: "jail: " and the text on one
// line, inert on a terminal (oneLine). For a line sent elsewhere than the
// Sink (a jail exec client's).
func Line(text string) string { return "jail: " + oneLine(text) }

// oneLine keeps a notice on one line and its text inert on a terminal, by
// termsafe's rule (one rule for every output of agent-chosen text): control
// characters (an agent-chosen name could carry escape sequences, a lone
// 0x9b is CSI to a terminal reading 8-bit controls) and bytes that are not
// UTF-8 are written as \xNN, bidi controls as \uNNNN. Only the line's own
// ending is dropped, and a tab is shown as a space (it moves the cursor
// but starts no sequence); every other newline stays escaped.
func oneLine(s string) string {
	return termsafe.Escape(strings.ReplaceAll(strings.TrimRight(s, "\r\n"), "\t", " "))
}
