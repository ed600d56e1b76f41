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
