package ptyrelay

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// fakePty answers StopKeyReader's questions from fields.
type fakePty struct {
	keys     StopKeys
	orphaned bool
}

func (f *fakePty) Keys() StopKeys  { return f.keys }
func (f *fakePty) Discarded() bool { return f.orphaned }

// chunks reads its parts one per Read, then io.EOF.
type chunks struct{ parts []string }

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.parts[0])
	if n < len(c.parts[0]) {
		c.parts[0] = c.parts[0][n:]
	} else {
		c.parts = c.parts[1:]
	}
	return n, nil
}

// The suspend character is withheld only when the line discipline would
// make of it a SIGTSTP the kernel discards (ISIG on, the foreground group
// the session leader's), not after the literal-next character, across
// reads; what comes before a withheld key is passed on before the stop,
// the rest after it. "|" in want marks a stop.
func TestStopKeyReader(t *testing.T) {
	ctrlZ := StopKeys{Susp: 0x1a, Lnext: 0x16, Signals: true}
	tests := []struct {
		name     string
		keys     StopKeys
		orphaned bool
		stopped  bool // what stop returns
		in       []string
		want     string
	}{
		{"no key", ctrlZ, true, true, []string{"hello"}, "hello"},
		{"the key alone", ctrlZ, true, true, []string{"\x1a"}, "|"},
		{"between bytes", ctrlZ, true, true, []string{"ab\x1acd"}, "ab|cd"},
		{"two in one read", ctrlZ, true, true, []string{"a\x1a\x1ab"}, "a||b"},
		{"one a read", ctrlZ, true, true, []string{"a", "\x1a", "b\x1a"}, "a|b|"},
		{"a job's group gets it", ctrlZ, false, true, []string{"a\x1ab"}, "a\x1ab"},
		{"ISIG off (raw mode)", StopKeys{Susp: 0x1a, Lnext: 0x16}, true, true, []string{"a\x1ab"}, "a\x1ab"},
		{"suspend disabled", StopKeys{Susp: 0, Signals: true}, true, true, []string{"a\x1a\x00b"}, "a\x1a\x00b"},
		{"another suspend character", StopKeys{Susp: 0x18, Signals: true}, true, true, []string{"a\x1a\x18b"}, "a\x1a|b"},
		{"quoted", ctrlZ, true, true, []string{"\x16\x1a\x1a"}, "\x16\x1a|"},
		{"quoted across reads", ctrlZ, true, true, []string{"a\x16", "\x1ab"}, "a\x16\x1ab"},
		{"a quoted literal-next quotes nothing", ctrlZ, true, true, []string{"\x16\x16\x1a"}, "\x16\x16|"},
		{"no IEXTEN: no quoting", StopKeys{Susp: 0x1a, Signals: true}, true, true, []string{"\x16\x1a"}, "\x16|"},
		{"stop refused: the key goes on", ctrlZ, true, false, []string{"a\x1ab"}, "a|\x1ab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got bytes.Buffer
			pty := &fakePty{keys: tt.keys, orphaned: tt.orphaned}
			r := StopKeyReader(&chunks{parts: append([]string(nil), tt.in...)}, pty, func() bool {
				got.WriteByte('|')
				return tt.stopped
			})
			buf := make([]byte, 64)
			for {
				n, err := r.Read(buf)
				got.Write(buf[:n])
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if got.String() != tt.want {
				t.Errorf("got %q, want %q", got.String(), tt.want)
			}
		})
	}
}

// A small buffer gets the bytes after a key over several reads, and a key
// among them is found there too; an error that came with a key's read
// comes after the bytes that followed the key.
func TestStopKeyReaderSmallReads(t *testing.T) {
	pty := &fakePty{keys: StopKeys{Susp: 0x1a, Signals: true}, orphaned: true}
	var got bytes.Buffer
	failing := io.MultiReader(strings.NewReader("ab\x1acdef\x1agh"), errReader{})
	r := StopKeyReader(failing, pty, func() bool { got.WriteByte('|'); return true })
	buf := make([]byte, 3)
	var err error
	for err == nil {
		var n int
		n, err = r.Read(buf)
		got.Write(buf[:n])
	}
	if got.String() != "ab|cdef|gh" || !errors.Is(err, errBroken) {
		t.Fatalf("got %q, %v; want \"ab|cdef|gh\", %v", got.String(), err, errBroken)
	}
}

var errBroken = errors.New("broken")

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errBroken }
