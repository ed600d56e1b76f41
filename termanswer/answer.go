// Package termanswer answers, in place of a terminal, the few queries a
// program sends its terminal as it starts, for when no terminal is there.
//
// A background sandbox with a kept terminal (jail run -d -t) has nobody at
// its pty until jail attach: what the program prints goes to a log. Full-
// screen programs ask their terminal questions before they draw (where the
// cursor is, what kind of terminal this is) and wait for the answers;
// unanswered, they wait until some input comes, so a later attach shows a
// blank screen until the user presses a key. A real terminal, and tmux for
// its detached panes, always answers these.
//
// Only queries whose answer is fixed by the terminal are answered, with
// answers that hold nothing the program chose: the primary device
// attributes (CSI c, as a VT100 with advanced video, what tmux says), the
// operating status (CSI 5 n: "OK") and the cursor position (CSI 6 n) as the
// home position, row 1 column 1 (there is no screen model; the program
// redraws when a client attaches and its size is set). The answers go to
// the program's own input: it could type them itself, so they give it
// nothing.
package termanswer

// maxParams bounds the parameter bytes of one CSI sequence that can still
// be a query we answer (the longest, "0", is one byte): a longer one is not
// ours, and the scanner keeps no more state than this across calls.
const maxParams = 4

// maxAnswer bounds the answers of one Scan: a program printing queries in a
// loop gets some answers, not unbounded writes to its own input.
const maxAnswer = 256

// The answers a terminal would give.
const (
	answerDA1    = "\x1b[?1;2c"
	answerStatus = "\x1b[0n"
	answerCursor = "\x1b[1;1R"
)

type state uint8

const (
	ground   state = iota
	escape         // after ESC
	csi            // after ESC [
	csiOther       // a CSI sequence that is not a query we answer: skip to its end
)

// Scanner finds queries in a program's output, chunk by chunk: a sequence
// split across two chunks is still found. The zero value is ready.
type Scanner struct {
	st     state
	params [maxParams]byte
	n      int
}

// Scan reads the next chunk of output and returns the answers to the
// queries it completes, in order (nil when there are none).
func (s *Scanner) Scan(p []byte) []byte {
	var out []byte
	for _, b := range p {
		switch s.st {
		case ground:
			if b == 0x1b {
				s.st = escape
			}
		case escape:
			switch b {
			case '[':
				s.st, s.n = csi, 0
			case 0x1b:
				// ESC ESC: the second one starts a sequence.
			default:
				s.st = ground
			}
		case csi, csiOther:
			switch {
			case b == 0x1b:
				// A sequence cut short by a new one (ECMA-48: ESC cancels).
				s.st = escape
			case b == 0x18 || b == 0x1a:
				// CAN and SUB cancel a sequence.
				s.st = ground
			case b < 0x20:
				// Other C0 controls act and the sequence goes on.
			case b >= 0x30 && b <= 0x3f:
				// A parameter byte.
				if s.st == csi {
					if s.n == maxParams {
						s.st = csiOther
					} else {
						s.params[s.n] = b
						s.n++
					}
				}
			case b >= 0x20 && b <= 0x2f:
				// An intermediate byte: none of our queries has one.
				s.st = csiOther
			case b >= 0x40 && b <= 0x7e:
				if s.st == csi && len(out) < maxAnswer {
					out = append(out, answerTo(string(s.params[:s.n]), b)...)
				}
				s.st = ground
			default:
				// DEL and bytes past 0x7f inside a sequence: not one we know.
				s.st = csiOther
			}
		}
	}
	return out
}

// answerTo is the answer to CSI params final, or "" when it is not a query
// we answer.
func answerTo(params string, final byte) string {
	switch {
	case final == 'c' && (params == "" || params == "0"):
		return answerDA1
	case final == 'n' && params == "5":
		return answerStatus
	case final == 'n' && params == "6":
		return answerCursor
	}
	return ""
}
