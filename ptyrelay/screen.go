package ptyrelay

import (
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/jail-sandbox/jail/internal/blockio"
	"github.com/jail-sandbox/jail/internal/termsafe"
)

// Screen is the user's terminal as the relay writes it: the agent's
// output (through the terminal filter) and jail's urgent lines share one
// lock, so that a line of jail's lands between two of the filter's writes,
// where the filter has left the terminal in its ground state (it emits
// only whole sequences), never inside one of the agent's sequences. (With
// allow-terminal=all the filter passes bytes as they come and that is not
// so: a line may then land inside a sequence, a cosmetic fault.)
type Screen struct {
	mu sync.Mutex
	f  *os.File
	// w writes to f, waiting out an O_NONBLOCK another process of the
	// terminal set meanwhile (package blockio): the agent's output
	// is never dropped for it.
	w *blockio.Writer

	// The urgent lines' queue and writer (Urgent). qmu guards queue and
	// is never held across a write; closed is read by the writer under mu.
	qmu    sync.Mutex
	queue  chan string
	closed atomic.Bool

	// line follows where the agent's output left the cursor (MidLine);
	// guarded by mu, as are lastWrite and lastMove (the last write of the
	// output, the last that moved its cursor: Plain).
	line      lineState
	lastWrite time.Time
	lastMove  time.Time

	// The lines Plain keeps until the screen takes them, and whether
	// their writer runs (guarded by qmu).
	plain        []string
	plainRunning bool
}

// lineState follows a terminal's output far enough to tell whether the
// cursor was left after text on its line: text sets it, a line feed or
// carriage return clears it, escape sequences (CSI, OSC and the other
// strings, two-byte ones) change nothing. A sequence that moves the cursor
// is not followed: the answer is for the usual end, a line of text or a
// prompt.
type lineState struct {
	mid bool
	esc byte // 0; ESC seen; '[' in a CSI; ']' in a string (OSC, DCS, APC, PM, SOS)
	st  bool // in a string, ESC seen: a '\' ends it (ST)

	// What a line of jail's between two of the output's writes would
	// meet (Screen.Plain): the alternate screen (a full-screen program),
	// a hidden cursor (a program that draws its own: ink's, ratatui's),
	// a move of the cursor up or to a place (a redraw of lines written
	// before, which would draw over a line put among them). moved is
	// set by such a move and cleared by the Screen, which stamps it.
	alt, hidden, moved bool
	// A CSI's parameters as they come, parsed in place (this runs for
	// every byte of a TUI's redraws): whether any came, whether they
	// are private ('?' first), the private modes so far (the first 4),
	// the number being read.
	params, priv bool
	modes        [4]int
	nmodes, num  int
}

func (l *lineState) feed(p []byte) {
	for _, b := range p {
		switch l.esc {
		case 0:
			switch {
			case b == 0x1b:
				l.esc = 0x1b
			case b == '\n' || b == '\r':
				l.mid = false
			case b >= 0x20 && b != 0x7f:
				l.mid = true
			}
		case 0x1b:
			switch b {
			case '[':
				l.esc, l.params, l.priv, l.nmodes, l.num = '[', false, false, 0, 0
			case ']', 'P', '_', '^', 'X':
				l.esc, l.st = ']', false
			default:
				if b < 0x20 || b > 0x2f { // an intermediate (ESC ( B) waits for its final byte
					l.esc = 0 // ESC 7, ESC ( B, ...: done
					switch b {
					case '8', 'M': // DECRC, reverse index
						l.moved = true
					case 'c': // a full reset
						l.alt, l.hidden, l.moved = false, false, true
					}
				}
			}
		case '[':
			switch {
			case b >= 0x30 && b <= 0x3f:
				switch {
				case !l.params && b == '?':
					l.priv = true
				case b >= '0' && b <= '9':
					l.num = l.num*10 + int(b-'0')
				case b == ';':
					l.mode()
				}
				l.params = true
			case b >= 0x40 && b <= 0x7e:
				l.esc = 0
				l.csi(b)
			}
		case ']':
			switch {
			case b == 0x07 || l.st && b == '\\':
				l.esc = 0
			default:
				l.st = b == 0x1b
			}
		}
	}
}

// mode ends a CSI parameter: a private mode number is kept.
func (l *lineState) mode() {
	if l.priv && l.nmodes < len(l.modes) {
		l.modes[l.nmodes] = l.num
		l.nmodes++
	}
	l.num = 0
}

// csi follows a control sequence's effect on where a plain line could go
// (final is its final byte; its parameters were followed as they came).
func (l *lineState) csi(final byte) {
	switch final {
	case 'A', 'F', 'H', 'f', 'd', 'r':
		// Up, to a row, home; a scroll region homes the cursor too.
		l.moved = true
	case 'u':
		if !l.params { // SCORC (with parameters: a keyboard protocol's)
			l.moved = true
		}
	case 'h', 'l':
		if !l.priv {
			return
		}
		l.mode()
		for _, m := range l.modes[:l.nmodes] {
			switch m {
			case 25:
				l.hidden = final == 'l'
			case 47, 1047, 1049:
				l.alt = final == 'h'
			}
		}
	}
}

// urgentQueue is how many urgent lines wait for a terminal that does not
// read; more are dropped from the screen (the summary at exit says each).
const urgentQueue = 8

// NewScreen returns the Screen writing to f, the user's terminal.
func NewScreen(f *os.File) *Screen { return &Screen{f: f, w: blockio.NewWriter(f)} }

// Write writes p (the filter's output) as one piece.
func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.w.Write(p)
	s.line.feed(p[:n])
	s.lastWrite = time.Now()
	if s.line.moved {
		s.line.moved, s.lastMove = false, s.lastWrite
	}
	return n, err
}

// Plain puts text on the screen as a line of its own, below the output
// as the output's own lines go, for a notice the user needs while the
// command runs (a server the host cannot reach): at once when the screen
// takes one without harm (plainNow), else at the first check, every
// plainEvery, that finds it so; never after Close (the summary at exit
// says it). Unlike Urgent it neither rings nor draws over a row: a
// full-screen or self-drawing program's screen never gets it. It never
// waits for the terminal: a writer of its own does.
func (s *Screen) Plain(text string) {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.closed.Load() {
		return
	}
	s.plain = append(s.plain, text)
	if !s.plainRunning {
		s.plainRunning = true
		go s.writePlain()
	}
}

// writePlain writes the lines Plain keeps, each time the screen takes
// them, until none waits or the screen is closed.
func (s *Screen) writePlain() {
	for {
		s.mu.Lock()
		closed := s.closed.Load()
		now := !closed && s.plainNow()
		if now {
			s.qmu.Lock()
			lines := s.plain
			s.plain = nil
			s.qmu.Unlock()
			var b strings.Builder
			for _, text := range lines {
				for _, r := range text {
					b.WriteRune(inert(r))
				}
				b.WriteString("\r\n") // the terminal is raw: no output processing
			}
			_, _ = s.w.WriteString(b.String())
		}
		s.mu.Unlock()
		s.qmu.Lock()
		if closed || len(s.plain) == 0 {
			s.plain, s.plainRunning = nil, false
			s.qmu.Unlock()
			return
		}
		s.qmu.Unlock()
		time.Sleep(plainEvery)
	}
}

// How the screen must have been for a plain line (plainNow): the output
// quiet for plainQuiet (not inside a burst) and its cursor not moved for
// plainCalm (a redraw of lines written before would draw over it). Checked
// every plainEvery while a line waits.
const (
	plainQuiet = 150 * time.Millisecond
	plainCalm  = time.Second
	plainEvery = 250 * time.Millisecond
)

// plainNow tells whether a line of jail's can go on the screen now without
// harm to the output's own: at the start of a line (not after a prompt or
// a progress bar's text), outside any sequence, not on the alternate
// screen, the cursor shown, not moved lately, the output quiet. Called
// with mu held.
func (s *Screen) plainNow() bool {
	l := &s.line
	now := time.Now()
	return !l.mid && l.esc == 0 && !l.alt && !l.hidden &&
		now.Sub(s.lastWrite) >= plainQuiet && now.Sub(s.lastMove) >= plainCalm
}

// MidLine tells whether the output left the cursor after text on its line
// (a prompt the command was waiting at when it was ended): what jail
// writes next starts a line of its own.
func (s *Screen) MidLine() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.line.mid
}

// WriteString writes str as one piece, as Write does.
func (s *Screen) WriteString(str string) (int, error) { return s.Write([]byte(str)) }

// Urgent puts text on the agent's screen (UrgentLine), for a security
// event that cannot wait for the agent's exit. It never waits for the
// terminal: a writer of the Screen's own takes the lock and writes.
// Why: a terminal that stops reading (a stalled link, a paused pane)
// blocks the relay's write, which holds the lock; the caller is the mask
// watch, whose stop the run's end waits for before its exit check and
// its trail's exit event (review14c: they never came while the terminal
// stalled). A line that finds urgentQueue lines waiting is dropped from
// the screen only (the caller's summary says it at exit).
func (s *Screen) Urgent(text string) {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.closed.Load() {
		return
	}
	if s.queue == nil {
		s.queue = make(chan string, urgentQueue)
		go s.writeUrgent(s.queue)
	}
	select {
	case s.queue <- text:
	default:
	}
}

// writeUrgent writes the queued lines, each between two of the filter's
// writes, until Close.
func (s *Screen) writeUrgent(q <-chan string) {
	for text := range q {
		s.mu.Lock()
		if !s.closed.Load() {
			cols, _, err := term.GetSize(int(s.f.Fd()))
			if err != nil {
				cols = 80
			}
			_, _ = s.w.WriteString(UrgentLine(text, cols))
		}
		s.mu.Unlock()
	}
}

// Close ends the urgent lines: the terminal is the user's again (what
// was held, urgent lines included, is said in the summary). Lines still
// queued are not written; a write under way is not waited for.
func (s *Screen) Close() {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.closed.Swap(true) || s.queue == nil {
		return
	}
	close(s.queue)
	s.queue = nil
}

// UrgentLine is text as one line on a screen a full-screen program owns,
// disturbing the least that still makes it seen: a bell; the cursor, its
// attributes, character sets and origin mode saved (DECSC); plain
// attributes and the ASCII set; the screen's (or scroll region's) last row
// erased and the text written there in reverse video, cut to the width
// less one (no wrap, no scroll); then all restored (DECRC). The program
// draws over it at its next redraw of that row; the summary at exit says
// it again. What the program loses: its own DECSC slot (one per screen),
// which now holds the cursor as it was at this line. Control characters
// left in text are written as "?".
func UrgentLine(text string, cols int) string {
	if cols < 2 {
		cols = 80
	}
	var b strings.Builder
	b.WriteString("\a\x1b7\x1b[0m\x1b(B\x0f\x1b[999;1H\x1b[2K\x1b[7m")
	width := 0
	for _, r := range text {
		w := 1
		if r >= utf8.RuneSelf {
			w = 2 // wide or not: never more than the row holds
		}
		if width+w > cols-1 {
			break
		}
		width += w
		b.WriteRune(inert(r))
	}
	b.WriteString("\x1b[0m\x1b8")
	return b.String()
}

// inert is r as jail writes it among a command's output (an urgent or a
// plain line): a control character or an invalid byte is "?".
func inert(r rune) rune {
	if r == utf8.RuneError || termsafe.Control(r) {
		return '?'
	}
	return r
}
