package ptyrelay

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jail-sandbox/jail/internal/termsafe"
)

// The urgent line is one row: saved and restored around, cut to the width
// less one (a full row would wrap or scroll the agent's screen), inert
// (no control character of the text reaches the terminal).
func TestUrgentLine(t *testing.T) {
	got := UrgentLine("jail: /ws/.env was renamed over \x1b]52;c;x\x07 and more text", 40)
	if !strings.HasPrefix(got, "\a\x1b7") || !strings.HasSuffix(got, "\x1b8") {
		t.Fatalf("not saved and restored: %q", got)
	}
	body := got[strings.Index(got, "\x1b[7m")+len("\x1b[7m") : strings.LastIndex(got, "\x1b[0m")]
	if want := "jail: /ws/.env was renamed over ?]52;c;"; body != want {
		t.Fatalf("body %q, want %q (39 cells, controls as ?)", body, want)
	}
	if n := len([]rune(UrgentLine(strings.Repeat("é", 100), 20))); n > 60 {
		t.Fatalf("wide text not cut: %d runes", n)
	}
}

// Whatever the text, the urgent line's body is inert (no control
// character, no invalid UTF-8: nothing the terminal would take for a
// sequence) and at most cols-1 cells wide.
func FuzzUrgentLine(f *testing.F) {
	f.Add("jail: /ws/.env was renamed over", 80)
	f.Add("\x1b]52;c;aGk=\x07\x9b2J\xff\u202e", 10)
	f.Fuzz(func(t *testing.T, text string, cols int) {
		got := UrgentLine(text, cols)
		const head, tail = "\x1b[2K\x1b[7m", "\x1b[0m\x1b8"
		i := strings.Index(got, head)
		if i < 0 || !strings.HasSuffix(got, tail) {
			t.Fatalf("frame lost: %q", got)
		}
		body := got[i+len(head) : len(got)-len(tail)]
		if !utf8.ValidString(body) {
			t.Fatalf("invalid UTF-8 in %q", body)
		}
		width := 0
		for _, r := range body {
			if termsafe.Control(r) {
				t.Fatalf("control %U in %q", r, body)
			}
			width++
			if r >= utf8.RuneSelf {
				width++
			}
		}
		if cols < 2 {
			cols = 80
		}
		if width > cols-1 {
			t.Fatalf("%d cells for %d columns: %q", width, cols, body)
		}
	})
}

// A terminal that does not read holds the Screen's lock (the relay's
// write blocks under it): Urgent must still return at once (review14c:
// the mask watch that calls it is waited for by the run's end, before
// its exit check). Seen failing on main (Urgent waited for the lock).
// The line is written once the terminal reads again; after Close,
// nothing more is.
func TestUrgentDoesNotWaitForTheTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	s := NewScreen(w)
	s.mu.Lock() // the relay's write, blocked on the terminal
	returned := make(chan struct{})
	go func() {
		s.Urgent("jail: first")
		for i := range 2 * urgentQueue {
			s.Urgent(fmt.Sprintf("jail: more %d", i)) // beyond the queue: dropped, not waited for
		}
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		s.mu.Unlock()
		t.Fatal("Urgent waited for a terminal that does not read")
	}
	s.mu.Unlock() // the terminal reads again
	got := make([]byte, 0, 4096)
	buf := make([]byte, 4096)
	for !strings.Contains(string(got), "jail: first") {
		r.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := r.Read(buf)
		if err != nil {
			t.Fatalf("the urgent line never came: %v (got %q)", err, got)
		}
		got = append(got, buf[:n]...)
	}
	s.Close()
	s.Close()
	s.Urgent("jail: after close")
	s.mu.Lock() // a line under way when Close came is written by now
	s.mu.Unlock()
	time.Sleep(100 * time.Millisecond)
	var rest []byte
	for {
		r.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		n, err := r.Read(buf)
		rest = append(rest, buf[:n]...)
		if err != nil {
			break
		}
	}
	if strings.Contains(string(rest), "after close") {
		t.Fatalf("an urgent line was written after Close: %q", rest)
	}
}

func TestLineStateMidLine(t *testing.T) {
	for _, tt := range []struct {
		name string
		out  []string // writes, in order
		mid  bool
	}{
		{"nothing", nil, false},
		{"a line", []string{"done\n"}, false},
		{"a prompt", []string{"Enter the code: "}, true},
		{"a prompt, then colours reset", []string{"code: \x1b[0m"}, true},
		{"a line, then colours reset and the cursor shown", []string{"done\r\n\x1b[0m\x1b[?25h"}, false},
		{"a title after a line", []string{"done\n\x1b]0;title\x07"}, false},
		{"a title ended by ST", []string{"done\n\x1b]0;ti", "tle\x1b\\"}, false},
		{"text after a string", []string{"\n\x1b]0;t\x07$ "}, true},
		{"a CSI split across writes", []string{"done\n\x1b[", "0m"}, false},
		{"an echoed ^C", []string{"code: ", "^C"}, true},
		{"carriage return", []string{"50%\r"}, false},
		{"two-byte sequences", []string{"\n\x1b7\x1b8"}, false},
		{"a character set chosen", []string{"\n\x1b(B\x0f"}, false},
	} {
		var l lineState
		for _, w := range tt.out {
			l.feed([]byte(w))
		}
		if l.mid != tt.mid {
			t.Errorf("%s: mid %v, want %v", tt.name, l.mid, tt.mid)
		}
	}
}

// What a plain line would meet: the alternate screen, a hidden cursor, a
// move of the cursor up or to a place (a redraw), each followed through
// parameters and writes split inside a sequence.
func TestLineStatePlain(t *testing.T) {
	for _, tt := range []struct {
		name               string
		out                []string
		alt, hidden, moved bool
	}{
		{"lines", []string{"VITE ready\n", "  Local: http://localhost:5173/\n"}, false, false, false},
		{"colours", []string{"\x1b[32mok\x1b[0m\n"}, false, false, false},
		{"full screen", []string{"\x1b[?1049h\x1b[H"}, true, false, true},
		{"full screen left", []string{"\x1b[?1049h", "\x1b[?1049l"}, false, false, false},
		{"old alternate screen", []string{"\x1b[?47h"}, true, false, false},
		{"cursor hidden (ink)", []string{"\x1b[?25l", "frame\n"}, false, true, false},
		{"cursor hidden and shown", []string{"\x1b[?25l\x1b[?25h"}, false, false, false},
		{"two modes at once", []string{"\x1b[?1049;25l"}, false, true, false},
		{"split inside", []string{"\x1b[?10", "49h"}, true, false, false},
		{"a redraw: up two lines", []string{"a\nb\n", "\x1b[2A\x1b[2K"}, false, false, true},
		{"to a row", []string{"\x1b[5;1H"}, false, false, true},
		{"cursor restored", []string{"\x1b8"}, false, false, true},
		{"reverse index", []string{"\x1bM"}, false, false, true},
		{"a keyboard protocol, not a restore", []string{"\x1b[>1u"}, false, false, false},
		{"erase a line in place (a progress bar)", []string{"50%\r\x1b[K"}, false, false, false},
		{"a full reset", []string{"\x1b[?1049h\x1b[?25l\x1bc"}, false, false, true},
		{"a private mode of no interest", []string{"\x1b[?2004h"}, false, false, false},
	} {
		var l lineState
		for _, w := range tt.out {
			l.feed([]byte(w))
		}
		if l.alt != tt.alt || l.hidden != tt.hidden || l.moved != tt.moved {
			t.Errorf("%s: alt %v hidden %v moved %v, want %v %v %v", tt.name, l.alt, l.hidden, l.moved, tt.alt, tt.hidden, tt.moved)
		}
	}
}

// Plain puts a line on a screen that writes lines, once its output is
// quiet; it waits while the screen is a self-drawing program's (cursor
// hidden), or after a prompt, or right after a redraw; never after Close.
func TestScreenPlain(t *testing.T) {
	// read reads what comes within d, or until it ends with "timely\r\n".
	read := func(t *testing.T, r *os.File, d time.Duration) string {
		t.Helper()
		var got []byte
		buf := make([]byte, 4096)
		deadline := time.Now().Add(d)
		for !strings.HasSuffix(string(got), "timely\r\n") {
			r.SetReadDeadline(deadline)
			n, err := r.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				break
			}
		}
		return string(got)
	}
	pipe := func(t *testing.T) (*os.File, *Screen) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		return r, NewScreen(w)
	}
	t.Run("lines", func(t *testing.T) {
		r, s := pipe(t)
		s.WriteString("Serving HTTP on 0.0.0.0 port 8000\r\n")
		s.Plain("jail: a server inside\x1b[2J timely")
		got := read(t, r, 2*time.Second)
		if want := "Serving HTTP on 0.0.0.0 port 8000\r\njail: a server inside?[2J timely\r\n"; got != want {
			t.Fatalf("the screen got %q, want %q", got, want)
		}
	})
	for _, c := range []struct {
		name, before, after string
	}{
		{"cursor hidden", "\x1b[?25lframe\n", "\x1b[?25h"},
		{"a prompt", "Password: ", "\r\n"},
		{"full screen", "\x1b[?1049h", "\x1b[?1049l"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, s := pipe(t)
			s.WriteString(c.before)
			s.Plain("jail: timely")
			if got := read(t, r, 3*plainEvery); strings.Contains(got, "timely") {
				t.Fatalf("a plain line on a screen that cannot take one: %q", got)
			}
			s.WriteString(c.after)
			if got := read(t, r, 2*plainCalm); !strings.HasSuffix(got, "jail: timely\r\n") {
				t.Fatalf("the line did not come once the screen could take it: %q", got)
			}
		})
	}
	t.Run("a redraw", func(t *testing.T) {
		r, s := pipe(t)
		s.WriteString("a\nb\n\x1b[2Aa\nb\n")
		start := time.Now()
		s.Plain("jail: timely")
		got := read(t, r, 3*plainCalm)
		if !strings.HasSuffix(got, "jail: timely\r\n") {
			t.Fatalf("the line never came: %q", got)
		}
		if d := time.Since(start); d < plainCalm-100*time.Millisecond {
			t.Fatalf("the line came %v after a redraw, want %v calm", d, plainCalm)
		}
	})
	t.Run("closed", func(t *testing.T) {
		r, s := pipe(t)
		s.WriteString("\x1b[?25l")
		s.Plain("jail: timely")
		s.Close()
		s.WriteString("\x1b[?25h\n")
		if got := read(t, r, 3*plainEvery); strings.Contains(got, "timely") {
			t.Fatalf("a plain line after Close: %q", got)
		}
		s.Plain("jail: after")
		if got := read(t, r, 500*time.Millisecond); got != "" {
			t.Fatalf("Plain after Close wrote %q", got)
		}
	})
}
