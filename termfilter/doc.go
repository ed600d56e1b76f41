// Package termfilter is a streaming filter for what a sandboxed program
// writes to the user's terminal: it passes what renders a screen and drops
// what reaches beyond it.
//
// A terminal is a host program that the bytes drive. Besides drawing, it
// writes the clipboard (OSC 52), changes fonts, colours, log files and
// window properties (OSC 50, 4, 46, 3), transfers files (OSC 1337, 5113),
// posts desktop notifications (OSC 9, 777, 99), defines what function keys
// type (DECUDK), prints (media copy) and answers queries. Some answers
// carry content the program chose, such as the window title (CSI 21 t) or a
// DECRQSS echo, or the host's screen or clipboard (DECRQCRA checksums,
// OSC 52 reads). An answer that arrives after the sandbox has exited is
// read by the user's shell: the classic title-report injection.
//
// What passes by default: text (valid UTF-8; invalid bytes become U+FFFD),
// C0 controls except ENQ (answerback), and every CSI and ESC sequence that
// draws, moves, scrolls, colours (SGR) or sets a mode: alternate screen,
// bracketed paste, mouse and focus reporting, synchronized output, kitty
// keyboard flags, cursor style, charset designation. Queries whose answer
// is fixed by the terminal pass too (device attributes, cursor position,
// DECRQM mode reports, XTVERSION, the key modifier levels), because
// full-screen programs wait for them; their answers hold only digits and
// the terminal's own strings. So do queries of the terminal's colours (OSC
// 4, 5 and 10 to 19 whose every colour is "?"): agent CLIs ask for the
// background to choose a light or dark theme, and the answer is the
// terminal's colour. Setting or resetting a colour is dropped. OSC 0, 1 and 2 (window and icon title) pass
// with control characters removed: no title report can be asked for, so
// the title cannot come back.
//
// What is dropped: every other OSC (unless a class is allowed, see
// Options), all DCS (DECRQSS, XTGETTCAP, DECUDK, sixel, tmux passthrough),
// APC, PM and SOS strings, screen's ESC k title, CSI t window operations
// and reports other than the title stack (22/23), XTSMTITLE/XTRMTITLE,
// media copy (CSI i), DECRQCRA/DECCKSR checksums, DECRQPSR, DECRQTSR,
// DECRQUPSS, DECRQLP, status line control (DECSASD/DECSSDT), DECTID,
// DECTST, VT52 mode (DECANM), keyboard lock (KAM), Linux console setterm
// (CSI ... ]), DECID (ESC Z), character-set mode switches (ESC %, which
// could take a terminal out of UTF-8) and C1 transmission modes (ESC SP).
//
// The filter keeps the terminal in its ground state between the pieces it
// emits: it only ever writes text without ESC or C1 controls, and complete
// sequences it has parsed and allowed. C1 controls sent as 8-bit bytes or
// as their UTF-8 encoding (U+0080 to U+009F) are handled as their 7-bit
// equivalents. With Options.EightBit (a terminal not decoding UTF-8),
// every byte 0x80 to 0x9F is a C1 control.
//
// Sequences may be split across writes. Memory is bounded: a control
// sequence longer than 256 bytes is dropped, a string (OSC and the like)
// longer than 4 KiB (1 MiB for an allowed clipboard write) is dropped whole,
// and output resumes at its terminator or, once past the limit, at the
// next line feed, so an unterminated OSC cannot swallow output forever.
//
// Dropped counts each kind dropped, a DCS by what it is (DECRQSS,
// XTGETTCAP, sixel, DECUDK, tmux passthrough, vim's probe). Summary, the
// line a user reads at the end, leaves out the Quiet kinds: queries left
// unanswered and vim's probe, which leave the screen as a terminal
// without the feature would (every vim sends the probe), and colour
// resets, which leave the user's colours as they were.
package termfilter
