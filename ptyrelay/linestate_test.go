package ptyrelay

import (
	"bytes"
	"testing"
)

// BenchmarkLineStateFeed: what following the output costs the relay per
// byte, on a dev server's coloured log and on a TUI's redraws.
func BenchmarkLineStateFeed(b *testing.B) {
	for _, c := range []struct {
		name string
		unit string
	}{
		{"log", "\x1b[32m12:00:01\x1b[0m [vite] page reload src/App.tsx (x3)\r\n"},
		{"redraw", "\x1b[?25l\x1b[3A\x1b[2K> prompt text here\x1b[1B\x1b[2K\x1b[38;2;10;20;30mstatus line\x1b[0m\r\n"},
	} {
		buf := bytes.Repeat([]byte(c.unit), (1<<20)/len(c.unit))
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			var l lineState
			for i := 0; i < b.N; i++ {
				l.feed(buf)
			}
		})
	}
}

// FuzzLineState: any output is followed without a panic, and the same
// whether it comes in one write or split anywhere in two (a sequence cut
// by the pty's reads).
func FuzzLineState(f *testing.F) {
	f.Add([]byte("\x1b[?1049;25l\x1b[2Aok\r\n"), 5)
	f.Add([]byte("\x1b]0;t\x07$ "), 3)
	f.Fuzz(func(t *testing.T, out []byte, cut int) {
		var whole, split lineState
		whole.feed(out)
		if cut < 0 {
			cut = -cut
		}
		if len(out) > 0 {
			cut %= len(out) + 1
		} else {
			cut = 0
		}
		split.feed(out[:cut])
		split.feed(out[cut:])
		if whole != split {
			t.Errorf("%q cut at %d: %+v, whole %+v", out, cut, split, whole)
		}
	})
}
