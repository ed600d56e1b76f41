package ptyrelay

// KillKey names the key sequence that kills the sandbox at once, for
// messages and the README.
const KillKey = "Enter ~ ."

// keyScanner finds the kill key in the input stream: "~" right after a
// line ended (Enter sends \r in raw mode; \n counts too) or at the very
// start, then ".". Bytes inside a bracketed paste (ESC [200~ ... ESC
// [201~) never count: pasted text that happens to hold a line "~." is
// text. The "~" is passed on at once (nothing is held back); only the "."
// that completes the sequence is kept from the agent.
type keyScanner struct {
	lineStart bool // the next byte starts a line
	tilde     bool // the previous byte was a "~" at a line start
	paste     bool // inside a bracketed paste
	esc       []byte
}

func newKeyScanner() *keyScanner { return &keyScanner{lineStart: true} }

const (
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
)

// scan looks at p and returns the index of the "." that completes the
// kill key, or -1.
func (k *keyScanner) scan(p []byte) int {
	for i, c := range p {
		if k.esc != nil {
			k.esc = append(k.esc, c)
			s := string(k.esc)
			switch {
			case s == pasteStart:
				k.paste, k.esc = true, nil
				continue
			case s == pasteEnd:
				k.paste, k.esc = false, nil
				continue
			case s == pasteStart[:len(s)] || s == pasteEnd[:len(s)]:
				continue // maybe still one of them
			}
			k.esc = nil // another sequence: c counts as itself below
		}
		if c == 0x1b {
			k.esc = []byte{c}
			k.lineStart, k.tilde = false, false
			continue
		}
		if k.paste {
			continue
		}
		switch {
		case k.tilde && c == '.':
			return i
		case k.lineStart && c == '~':
			k.tilde, k.lineStart = true, false
		case c == '\r' || c == '\n':
			k.tilde, k.lineStart = false, true
		default:
			k.tilde, k.lineStart = false, false
		}
	}
	return -1
}

// SaneModes turns off what a killed full-screen program may have left on
// and the user's shell cannot work with: mouse tracking (1000, 1002, 1003,
// 1006), focus reports (1004), bracketed paste (2004), the kitty keyboard
// protocol (CSI < u pops one level), attributes; it shows the cursor and
// starts a new line. Each is harmless when it was not on. (The alternate
// screen is left alone: leaving it when not in it moves the cursor.)
const SaneModes = "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1004l\x1b[?2004l\x1b[<u\x1b[0m\x1b[?25h\r\n"
