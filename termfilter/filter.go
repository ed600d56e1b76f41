package termfilter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Classes of host-affecting sequences that Options.Allow can let through.
const (
	// Clipboard lets OSC 52 clipboard writes through. Reads (OSC 52 with
	// "?") never pass: their answer would hand the host's clipboard to
	// the sandbox.
	Clipboard = "clipboard"
	// Hyperlinks lets OSC 8 links through (printable ASCII targets only).
	Hyperlinks = "hyperlinks"
	// Notify lets desktop notifications through (OSC 9, 99, 777).
	Notify = "notify"
	// Colors lets palette and default colour changes and queries through
	// (OSC 4, 5, 10 to 19, 104, 105, 110 to 119).
	Colors = "colors"
	// Cwd lets OSC 7 (the working directory the terminal opens new tabs in)
	// through.
	Cwd = "cwd"
	// All turns the filter off: every byte passes, as without jail.
	All = "all"
)

// Classes lists the names Options.Allow accepts.
var Classes = []string{Clipboard, Hyperlinks, Notify, Colors, Cwd, All}

// ErrUnknownClass is returned by New for a name not in Classes.
var ErrUnknownClass = errors.New("unknown terminal class")

// Options configure a Writer. The zero value is the default policy.
type Options struct {
	// Allow names classes (see Classes) to let through.
	Allow []string
	// EightBit: the host terminal does not decode UTF-8 (a Latin-1 or
	// other 8-bit locale), so every byte 0x80 to 0x9F is a C1 control.
	EightBit bool
}

const (
	maxSeq       = 256     // bytes of one ESC or CSI sequence
	maxString    = 4 << 10 // bytes of one string sequence (OSC, DCS...)
	maxClipboard = 1 << 20 // bytes of an allowed OSC 52 write
	maxKinds     = 32      // distinct kinds counted by Dropped
)

type class uint8

const (
	cClipboard class = 1 << iota
	cHyperlinks
	cNotify
	cColors
	cCwd
)

type state uint8

const (
	stGround    state = iota
	stEsc             // after ESC: intermediates held in seq
	stCSI             // after CSI: parameters and intermediates held in seq
	stCSIIgnore       // an over-long or malformed CSI: discard to its final byte
	stStr             // the body of a string sequence
	stStrEsc          // ESC inside a string: ST, or the start of something else
)

type strKind uint8

const (
	sOSC strKind = iota
	sDCS
	sSOS
	sPM
	sAPC
	sTitle // GNU screen / tmux ESC k title ESC \
)

var strNames = [...]string{sOSC: "OSC", sDCS: "DCS (device control string)", sSOS: "SOS string", sPM: "PM string", sAPC: "APC (application program command)", sTitle: "ESC k (screen/tmux window title)"}

// Writer filters what is written to it and writes the result to the
// underlying writer: one Write of the underlying writer per Write, or none.
// It is not safe for concurrent Writes; Dropped may be called at any time.
type Writer struct {
	w     io.Writer
	all   bool
	allow class
	eight bool

	st    state
	seq   []byte // held ESC/CSI bytes, 7-bit form ("\x1b[" + params...)
	str   strKind
	keep  bool   // the string may still pass: its body is held in sbuf
	query bool   // kept only if it turns out a colour query (colourQuery)
	num   int    // OSC number, -1 while unknown / not numeric
	sbuf  []byte // held string body
	slen  int    // length of the current string body
	limit int    // cap of sbuf for the current string
	pend  []byte // an incomplete UTF-8 character from the previous Write
	out   []byte
	tmp   []byte

	mu    sync.Mutex
	drops map[string]int
	lift  class // the classes of drops an allowed class would have passed
	other bool  // a drop no class would pass, not Quiet
}

// New returns a filter writing to w.
func New(w io.Writer, o Options) (*Writer, error) {
	f := &Writer{w: w, eight: o.EightBit}
	for _, c := range o.Allow {
		switch c {
		case Clipboard:
			f.allow |= cClipboard
		case Hyperlinks:
			f.allow |= cHyperlinks
		case Notify:
			f.allow |= cNotify
		case Colors:
			f.allow |= cColors
		case Cwd:
			f.allow |= cCwd
		case All:
			f.all = true
		default:
			return nil, fmt.Errorf("%w %q (want one of %s)", ErrUnknownClass, c, strings.Join(Classes, ", "))
		}
	}
	return f, nil
}

// special marks the bytes the ground state cannot copy blindly.
var special = func() (t [256]bool) {
	t[0x05] = true // ENQ
	t[0x1b] = true // ESC
	for b := 0x80; b < 0x100; b++ {
		t[b] = true
	}
	return t
}()

// Write filters p. It always consumes all of p unless the underlying
// writer fails.
func (f *Writer) Write(p []byte) (int, error) {
	if f.all {
		return f.w.Write(p)
	}
	// Fast path: plain text in the ground state goes out as it is.
	if f.st == stGround && len(f.pend) == 0 {
		i := 0
		for i < len(p) && !special[p[i]] {
			i++
		}
		if i == len(p) {
			if len(p) == 0 {
				return 0, nil
			}
			return f.w.Write(p)
		}
	}
	f.out = f.out[:0]
	in := p
	if len(f.pend) > 0 {
		f.tmp = append(append(f.tmp[:0], f.pend...), p...)
		f.pend = f.pend[:0]
		in = f.tmp
	}
	f.feed(in)
	if len(f.out) > 0 {
		if _, err := f.w.Write(f.out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Dropped returns how many sequences of each kind were dropped so far.
func (f *Writer) Dropped() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := make(map[string]int, len(f.drops))
	for k, v := range f.drops {
		m[k] = v
	}
	return m
}

// Summary is Dropped as one line, most frequent first, without the Quiet
// kinds ("" when nothing else was dropped).
func (f *Writer) Summary() string {
	d := f.Dropped()
	kinds := make([]string, 0, len(d))
	for k := range d {
		if !Quiet(k) {
			kinds = append(kinds, k)
		}
	}
	sort.Slice(kinds, func(i, j int) bool {
		if d[kinds[i]] != d[kinds[j]] {
			return d[kinds[i]] > d[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s x%d", k, d[k])
	}
	return strings.Join(parts, ", ")
}

// Lift names the classes (Options.Allow) whose sequences were dropped for
// want of that class, in Classes' order, and whether they are all that
// was dropped besides the Quiet kinds.
func (f *Writer) Lift() (classes []string, all bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, name := range []string{Clipboard, Hyperlinks, Notify, Colors, Cwd} {
		if f.lift&(1<<i) != 0 {
			classes = append(classes, name)
		}
	}
	return classes, len(classes) > 0 && !f.other
}

func (f *Writer) drop(kind string) { f.dropOf(kind, 0) }

// dropOf counts kind, a sequence of class c that c, allowed, would have
// passed (0: no class would, Lift's other unless the kind is Quiet).
func (f *Writer) dropOf(kind string, c class) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case Quiet(kind):
		// Nothing to lift: the screen is as it would have been.
	case c != 0:
		f.lift |= c
	default:
		f.other = true
	}
	if f.drops == nil {
		f.drops = map[string]int{}
	}
	if _, ok := f.drops[kind]; !ok && len(f.drops) >= maxKinds-1 {
		kind = "other"
	}
	f.drops[kind]++
}

// feed runs the state machine over p, appending to f.out.
func (f *Writer) feed(p []byte) {
	for i := 0; i < len(p); {
		b := p[i]
		switch f.st {
		case stGround:
			j := f.scanText(p, i)
			f.out = append(f.out, p[i:j]...)
			if i = j; i == len(p) {
				return
			}
			b = p[i]
			switch {
			case b == 0x1b:
				f.st, f.seq = stEsc, append(f.seq[:0], 0x1b)
				i++
			case b == 0x05:
				f.drop("ENQ (answerback)")
				i++
			case f.eight:
				if b < 0xa0 {
					f.c1(b)
				} else {
					f.out = append(f.out, b)
				}
				i++
			default:
				r, size := utf8.DecodeRune(p[i:])
				switch {
				case r == utf8.RuneError && size <= 1:
					if !utf8.FullRune(p[i:]) {
						// Split across writes: wait for the rest.
						f.pend = append(f.pend[:0], p[i:]...)
						return
					}
					// Invalid UTF-8 is never passed on: a terminal might
					// take a stray 0x9b for CSI.
					f.out = append(f.out, "\uFFFD"...)
					i++
				case r < 0xa0:
					// U+0080..U+009F: a C1 control, encoded in UTF-8.
					f.c1(byte(r))
					i += size
				default:
					f.out = append(f.out, p[i:i+size]...)
					i += size
				}
			}

		case stEsc:
			i++
			switch {
			case b >= 0x20 && b <= 0x2f:
				if len(f.seq) < 8 {
					f.seq = append(f.seq, b)
				} else {
					f.seq = append(f.seq[:1], 0x7f) // poisoned: dropped at the final byte
				}
			case b >= 0x30 && b <= 0x7e:
				inter := f.seq[1:]
				f.st = stGround
				f.escFinal(b, inter)
			default:
				i = f.interrupt(p, i-1, b)
			}

		case stCSI, stCSIIgnore:
			if f.st == stCSI && len(f.seq) == 2 {
				// Fast path: the whole sequence is in p. Its bound is the
				// held path's (below): ESC, '[' and the parameters within
				// maxSeq; a sequence passed whole and dropped when cut
				// between writes would make the output depend on how the
				// agent's writes fell.
				j := i
				for j < len(p) && j-i < maxSeq-2 && p[j] >= 0x20 && p[j] <= 0x3f {
					j++
				}
				if j < len(p) && p[j] >= 0x40 && p[j] <= 0x7e {
					f.st = stGround
					if reason := csiDeny(p[i : j+1]); reason != "" {
						f.drop(reason)
					} else {
						f.out = append(append(f.out, 0x1b, '['), p[i:j+1]...)
					}
					i = j + 1
					continue
				}
			}
			i++
			switch {
			case b >= 0x20 && b <= 0x3f:
				if f.st == stCSI {
					if len(f.seq) >= maxSeq {
						f.st = stCSIIgnore
						f.drop("CSI longer than 256 bytes")
					} else {
						f.seq = append(f.seq, b)
					}
				}
			case b >= 0x40 && b <= 0x7e:
				if f.st == stCSI {
					f.seq = append(f.seq, b)
					if reason := csiDeny(f.seq[2:]); reason != "" {
						f.drop(reason)
					} else {
						f.out = append(f.out, f.seq...)
					}
				}
				f.st = stGround
			default:
				i = f.interrupt(p, i-1, b)
			}

		case stStr:
			i++
			switch b {
			case 0x07:
				if f.str == sOSC || f.str == sTitle {
					f.endString("\x07")
				} else {
					f.strByte(b)
				}
			case 0x1b:
				f.st = stStrEsc
			case 0x18, 0x1a: // CAN, SUB: abort
				f.dropString()
				f.st = stGround
			default:
				if f.eight && b == 0x9c {
					f.endString("\x1b\\")
					continue
				}
				f.strByte(b)
				if !f.keep && f.slen > maxString && b == '\n' {
					// Past the limit, a line feed ends what looked like a
					// string: the rest is output again (the terminal never
					// saw the introducer).
					f.dropString()
					f.st = stGround
					f.out = append(f.out, '\n')
				}
			}

		case stStrEsc:
			if b == '\\' {
				i++
				f.endString("\x1b\\")
				continue
			}
			// ESC followed by anything else ends the string without a
			// valid terminator: drop it, and start over with the ESC.
			f.dropString()
			f.st, f.seq = stEsc, append(f.seq[:0], 0x1b)
		}
	}
}

// scanText returns the end of the run of text at p[i:] that passes as it
// is: ASCII other than ESC and ENQ, and (unless EightBit) complete, valid
// UTF-8 characters from U+00A0 up.
func (f *Writer) scanText(p []byte, i int) int {
	for i < len(p) {
		c := p[i]
		if !special[c] {
			i++
			continue
		}
		if c < 0x80 || f.eight {
			return i
		}
		r, size := utf8.DecodeRune(p[i:])
		if r < 0xa0 || r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return i
}

// interrupt handles a byte that breaks an ESC or CSI sequence (whose held
// bytes are discarded): ESC starts a new one, CAN and SUB cancel, other C0
// controls are executed as a terminal would (passed, ENQ dropped), DEL is
// ignored, and anything from 0x80 up is reprocessed as text. It returns
// the index to continue at.
func (f *Writer) interrupt(p []byte, i int, b byte) int {
	switch {
	case b == 0x1b:
		f.st, f.seq = stEsc, append(f.seq[:0], 0x1b)
		return i + 1
	case b == 0x18 || b == 0x1a:
		f.st = stGround
		return i + 1
	case b == 0x05:
		f.drop("ENQ (answerback)")
		return i + 1
	case b < 0x20:
		f.out = append(f.out, b) // executed mid-sequence; the sequence goes on
		return i + 1
	case b == 0x7f:
		return i + 1
	}
	f.st = stGround
	return i
}

// c1 acts on a C1 control as on its 7-bit form ESC (c - 0x40): the string
// and CSI introducers, ST, and the few a program might use (IND, NEL, HTS,
// RI, SS2, SS3, and SCI, dropped as DECID). Others are dropped.
func (f *Writer) c1(c byte) {
	if strings.IndexByte("DEHMNO[]PX^_\\Z", c-0x40) < 0 {
		f.drop("C1 control")
		return
	}
	f.escFinal(c-0x40, nil)
}

// escFinal acts on ESC inter final.
func (f *Writer) escFinal(final byte, inter []byte) {
	if len(inter) == 0 {
		switch final {
		case '[':
			f.st, f.seq = stCSI, append(f.seq[:0], 0x1b, '[')
			return
		case ']':
			f.startString(sOSC)
			return
		case 'P':
			f.startString(sDCS)
			return
		case 'X':
			f.startString(sSOS)
			return
		case '^':
			f.startString(sPM)
			return
		case '_':
			f.startString(sAPC)
			return
		case 'k':
			f.startString(sTitle)
			return
		case 'Z':
			f.drop("ESC Z (DECID)")
			return
		case '\\':
			return // ST with no string: nothing to end
		}
		f.out = append(f.out, 0x1b, final)
		return
	}
	switch inter[0] {
	case '(', ')', '*', '+', '-', '.', '/', '#':
		// Character set designation (ESC ( B, ESC ( % 5), DEC line
		// attributes and DECALN (ESC # 8).
		if len(inter) <= 2 {
			f.out = append(append(append(f.out, 0x1b), inter...), final)
			return
		}
	case '%':
		// DOCS: could switch the terminal out of UTF-8, after which
		// UTF-8 text would hold C1 controls.
		f.drop("ESC % (character set mode)")
		return
	case ' ':
		f.drop("ESC SP (C1 transmission mode)")
		return
	}
	f.drop("ESC sequence")
}

func (f *Writer) startString(k strKind) {
	f.st, f.str = stStr, k
	f.slen, f.sbuf = 0, f.sbuf[:0]
	f.keep = k == sOSC // only OSC may pass, decided by its number
	f.query = false
	f.num, f.limit = -1, maxString
}

// strByte takes one byte of a string body.
func (f *Writer) strByte(b byte) {
	f.slen++
	if !f.keep {
		// The first bytes of a dropped DCS, APC or numbered OSC, to name
		// it (dcsName, apcName, oscDropName): an OSC's number is in sbuf
		// already, its payload follows.
		if (f.str == sDCS || f.str == sAPC || f.str == sOSC && f.num >= 0) && len(f.sbuf) < strHead {
			f.sbuf = append(f.sbuf, b)
		}
		return
	}
	if f.num < 0 {
		// Still reading the OSC number: decide as soon as it ends.
		if b >= '0' && b <= '9' && len(f.sbuf) < 6 {
			f.sbuf = append(f.sbuf, b)
			return
		}
		n, err := strconv.Atoi(string(f.sbuf))
		if err != nil || b != ';' {
			f.keep = false
			f.num = -2
			return
		}
		f.num = n
		c := oscClass(n)
		if c == cColors && f.allow&c == 0 && !colourReset(n) {
			// Decided at its end: a query of the terminal's colours
			// passes, anything else of the class is dropped.
			f.query = true
		} else if c == 0 && n > 2 || c != 0 && f.allow&c == 0 {
			f.keep = false
			return
		}
		if c == cClipboard {
			f.limit = maxClipboard
		}
		f.sbuf = append(f.sbuf, b)
		return
	}
	if len(f.sbuf) >= f.limit {
		if f.query {
			// No query is this long: dropped at its end as its class.
			f.keep, f.query = false, false
			return
		}
		f.keep = false
		f.drop(fmt.Sprintf("OSC %d longer than %d bytes", f.num, f.limit))
		f.num = -3 // counted already
		return
	}
	f.sbuf = append(f.sbuf, b)
}

// endString handles a terminated string: an allowed OSC is emitted,
// sanitized, with the terminator it came with.
func (f *Writer) endString(term string) {
	f.st = stGround
	if f.keep && f.num < 0 {
		// "ESC ] digits" then the terminator: OSC 104 (reset colours) and
		// the like have no parameters.
		if n, err := strconv.Atoi(string(f.sbuf)); err == nil && len(f.sbuf) > 0 {
			f.num = n
			if c := oscClass(n); c == 0 || f.allow&c == 0 {
				f.keep = false
			} else {
				f.sbuf = append(f.sbuf, ';')
			}
		} else {
			f.keep = false
		}
	}
	if !f.keep {
		f.dropString()
		return
	}
	_, payload, _ := strings.Cut(string(f.sbuf), ";")
	if f.query && !colourQuery(f.num, payload) {
		f.dropOf(oscName(f.num), cColors)
		return
	}
	clean, ok := f.sanitize(f.num, payload)
	if !ok {
		f.drop(oscName(f.num) + " (refused content)")
		return
	}
	f.out = append(f.out, "\x1b]"...)
	f.out = strconv.AppendInt(f.out, int64(f.num), 10)
	f.out = append(f.out, ';')
	f.out = append(f.out, clean...)
	f.out = append(f.out, term...)
}

func (f *Writer) dropString() {
	switch {
	case f.str == sDCS:
		f.drop(dcsName(f.sbuf, f.slen))
	case f.str == sAPC:
		f.drop(apcName(f.sbuf))
	case f.str != sOSC:
		f.drop(strNames[f.str])
	case f.num >= 0:
		// A clipboard read never passes, whatever is allowed: only
		// writes are the clipboard class's to lift.
		if c := oscClass(f.num); c != 0 && f.allow&c == 0 && (c != cClipboard || !oscRead(f.num, f.sbuf, f.slen)) {
			f.dropOf(oscClassName(f.num, f.sbuf, f.slen), c)
		} else {
			f.drop(oscDropName(f.num, f.sbuf, f.slen))
		}
	case f.num == -3:
		// counted when it grew too long
	default:
		f.drop("OSC (not numbered)")
	}
	f.keep = false
}

// strHead is how much of a dropped string's body is kept to name it.
const strHead = 64

// The kinds of strings dropped, as Dropped counts them, where the kind
// says more than the introducer. A kind ending in "query)" is a question
// to the terminal that goes unanswered, which a program takes as a
// terminal without the feature, and vim's probe is a DCS that every
// terminal ignores: none of these changes what the user sees (Quiet).
const (
	dcsDECRQSS    = "DCS DECRQSS (a setting query)"
	dcsXTGETTCAP  = "DCS XTGETTCAP (a terminfo query)"
	dcsProbe      = "DCS zz (vim's xterm compatibility probe)"
	dcsSixel      = "DCS sixel image"
	dcsDECUDK     = "DCS DECUDK (function key definitions)"
	dcsTmux       = "DCS tmux passthrough"
	apcKitty      = "APC kitty graphics"
	apcKittyQuery = "APC kitty graphics (a support query)"
	querySuffix   = " query)"
	resetSuffix   = " (a colour reset)"
)

// colourReset: OSC n of the colour class resets colours (104, 105, 110 to
// 119); the class's others (4 and 5 by index, 10 to 19 the dynamic
// colours) set them or ask for them.
func colourReset(n int) bool { return n == 104 || n == 105 || n >= 110 && n <= 119 }

// colourQuery reports whether an OSC 4, 5 or 10 to 19 payload only asks for
// colours: "index;?" pairs for 4 and 5, "?" items for the dynamic colours
// (OSC 10;?;? asks for 10 and 11). The terminal answers with its own
// colours (rgb:hhhh/hhhh/hhhh), nothing the program chose, and every agent
// CLI asks for the background to pick a light or dark theme.
func colourQuery(n int, payload string) bool {
	parts := strings.Split(payload, ";")
	if len(parts) > 16 {
		return false
	}
	for i, p := range parts {
		index := (n == 4 || n == 5) && i%2 == 0
		switch {
		case index && (p == "" || len(p) > 3 || !only(p, "0123456789")):
			return false
		case !index && p != "?":
			return false
		}
	}
	return (n != 4 && n != 5) || len(parts)%2 == 0
}

// oscClassName names a dropped OSC of a class not allowed. Two kinds are
// Quiet: a colour reset (104, 105, 110 to 119) left undone leaves the
// user's colours as they were, which is all the program could have found
// there, sets being dropped too; and kitty's notification support query
// (OSC 99 whose metadata holds p=? and whose body is empty: opencode's at
// its start), left unanswered as a terminal without notifications would.
func oscClassName(n int, head []byte, size int) string {
	if colourReset(n) {
		return "OSC " + strconv.Itoa(n) + resetSuffix
	}
	if n == 99 {
		if p, whole := oscPayload(n, head, size); whole {
			meta, body, _ := bytes.Cut(p, []byte(";"))
			for _, kv := range bytes.Split(meta, []byte(":")) {
				if len(body) == 0 && string(kv) == "p=?" {
					return "OSC 99 (a notification support" + querySuffix
				}
			}
		}
	}
	return oscName(n)
}

// apcName names an APC by its first bytes: kitty's graphics protocol
// ("G" and its control data up to ";"), a=q being its support query.
func apcName(head []byte) string {
	if len(head) == 0 || head[0] != 'G' {
		return strNames[sAPC]
	}
	ctl, _, _ := bytes.Cut(head[1:], []byte(";"))
	for _, kv := range bytes.Split(ctl, []byte(",")) {
		if string(kv) == "a=q" {
			return apcKittyQuery
		}
	}
	return apcKitty
}

// oscPayload is a dropped OSC's payload as kept, from head (its number
// n, then the payload without the ";" between) and the body's size, and
// whether that is the whole payload.
func oscPayload(n int, head []byte, size int) (payload []byte, whole bool) {
	digits := len(strconv.Itoa(n))
	payload = head[min(digits, len(head)):]
	return payload, size == digits+1+len(payload)
}

// oscRead reports whether a dropped OSC asks for a value: its whole
// payload ends in ";?" (a clipboard read, "c;?").
func oscRead(n int, head []byte, size int) bool {
	p, whole := oscPayload(n, head, size)
	return whole && bytes.HasSuffix(p, []byte(";?"))
}

// oscDropName names a dropped OSC: "OSC N (a query)" when no class could
// let it through and its whole payload is "?" (Claude Code's OSC 7501
// program status probe), iTerm2's reports asked for, else oscName.
func oscDropName(n int, head []byte, size int) string {
	p, whole := oscPayload(n, head, size)
	switch {
	case oscClass(n) == 0 && whole && string(p) == "?":
		return "OSC " + strconv.Itoa(n) + " (a" + querySuffix
	case n == 1337 && whole && (string(p) == "Capabilities" || string(p) == "ReportCellSize"):
		// iTerm2's feature and cell size reports (opencode asks at
		// its start): unanswered, as by a terminal without them.
		return "OSC 1337 (a capability" + querySuffix
	}
	return oscName(n)
}

// dcsName names a DCS by its first bytes (parameters, intermediates,
// final byte) and its length n.
func dcsName(head []byte, n int) string {
	if n == 2 && string(head) == "zz" {
		return dcsProbe
	}
	if strings.HasPrefix(string(head), "tmux;") {
		return dcsTmux
	}
	i := 0
	for i < len(head) && head[i] >= 0x30 && head[i] <= 0x3f { // parameters
		i++
	}
	j := i
	for j < len(head) && head[j] >= 0x20 && head[j] <= 0x2f { // intermediates
		j++
	}
	if j < len(head) {
		switch inter, final := string(head[i:j]), head[j]; {
		case inter == "$" && final == 'q':
			return dcsDECRQSS
		case inter == "+" && final == 'q':
			return dcsXTGETTCAP
		case inter == "" && final == 'q':
			return dcsSixel
		case inter == "" && final == '|':
			return dcsDECUDK
		}
	}
	return strNames[sDCS]
}

// Quiet reports whether a kind of Dropped leaves the user's screen as it
// would have been: a query left unanswered (the program goes on as with a
// terminal that lacks the feature), a colour reset (the colours stay the
// user's, which the program could not change) or vim's probe, which
// terminals ignore. Summary leaves these out; an audit trail keeps them.
func Quiet(kind string) bool {
	return strings.HasSuffix(kind, querySuffix) || strings.HasSuffix(kind, resetSuffix) || kind == dcsProbe
}

// oscClass is the class an OSC number belongs to; 0 for titles (always
// allowed, 0 to 2) and for numbers no class allows.
func oscClass(n int) class {
	switch {
	case n == 52:
		return cClipboard
	case n == 8:
		return cHyperlinks
	case n == 7:
		return cCwd
	case n == 9 || n == 99 || n == 777:
		return cNotify
	case n == 4 || n == 5 || n >= 10 && n <= 19 || colourReset(n):
		return cColors
	}
	return 0
}

// oscName names a dropped OSC for the user.
func oscName(n int) string {
	what := ""
	switch {
	case n == 52:
		what = "clipboard"
	case n == 8:
		what = "hyperlink"
	case n == 7:
		what = "working directory"
	case n == 3:
		what = "X window property"
	case n == 46:
		what = "log file"
	case n == 50:
		what = "font"
	case n == 51:
		what = "Emacs"
	case n == 60 || n == 61:
		what = "feature query"
	case n == 133 || n == 633:
		what = "shell integration"
	case n == 1337:
		what = "iTerm2: files, variables"
	case n == 5113:
		what = "kitty file transfer"
	case n == 5522:
		what = "kitty clipboard"
	case oscClass(n) == cNotify:
		what = "notification"
	case oscClass(n) == cColors:
		what = "colours"
	}
	if what == "" {
		if n > 99999 {
			return "OSC (large number)"
		}
		return "OSC " + strconv.Itoa(n)
	}
	return "OSC " + strconv.Itoa(n) + " (" + what + ")"
}
