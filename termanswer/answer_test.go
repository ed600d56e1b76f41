package termanswer

import (
	"bytes"
	"testing"
)

func TestScan(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"cursor", "\x1b[6n", answerCursor},
		{"da1", "\x1b[c", answerDA1},
		{"da1 zero", "\x1b[0c", answerDA1},
		{"status", "\x1b[5n", answerStatus},
		{"codex's start", "\x1b[?2004h\x1b[>4;0m\x1b[>7u\x1b[?1004h\x1b[?u\x1b[?1007$p\x1b[c\x1b[6n\x1b]10;?\x1b\\\x1b]11;?\x1b\\", answerDA1 + answerCursor},
		{"text around", "hello\x1b[6nworld", answerCursor},
		{"in order", "\x1b[5n\x1b[6n\x1b[c", answerStatus + answerCursor + answerDA1},
		{"secondary DA is not answered", "\x1b[>c", ""},
		{"DECXCPR is not answered", "\x1b[?6n", ""},
		{"tertiary DA is not answered", "\x1b[=c", ""},
		{"other DSR", "\x1b[15n", ""},
		{"long params", "\x1b[00000006n", ""},
		{"intermediate", "\x1b[6 n", ""},
		{"drawing", "\x1b[1;1H\x1b[J\x1b[31mred\x1b[0m", ""},
		{"cancelled by CAN", "\x1b[6\x18n", ""},
		{"cut by ESC", "\x1b[6\x1b[6n", answerCursor},
		{"ESC ESC", "\x1b\x1b[c", answerDA1},
		{"C0 inside", "\x1b[6\rn", answerCursor},
		{"not CSI", "\x1b6n\x1bc", ""},
		{"high byte", "\x1b[6\xc3n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Scanner
			if got := s.Scan([]byte(tc.in)); string(got) != tc.want {
				t.Errorf("Scan(%q) = %q, want %q", tc.in, got, tc.want)
			}
			// Split at every point: the same answers.
			for i := 0; i <= len(tc.in); i++ {
				var s Scanner
				got := append(s.Scan([]byte(tc.in[:i])), s.Scan([]byte(tc.in[i:]))...)
				if string(got) != tc.want {
					t.Errorf("split at %d: Scan = %q, want %q", i, got, tc.want)
				}
			}
		})
	}
}

// A program printing queries in a loop gets a bounded answer per chunk.
func TestScanBounded(t *testing.T) {
	var s Scanner
	got := s.Scan(bytes.Repeat([]byte("\x1b[6n"), 8192))
	if len(got) > maxAnswer+len(answerDA1) {
		t.Fatalf("answers of one chunk: %d bytes, want at most %d", len(got), maxAnswer+len(answerDA1))
	}
	if len(got) == 0 {
		t.Fatal("no answer at all")
	}
}

// Whatever the output, the answers are only the fixed ones, whole: nothing
// of the program's own bytes comes back to it.
func FuzzScan(f *testing.F) {
	f.Add([]byte("\x1b[6n"), 2)
	f.Add([]byte("\x1b[?1007$p\x1b[c\x1b]11;?\x1b\\"), 5)
	f.Fuzz(func(t *testing.T, in []byte, cut int) {
		var s Scanner
		if cut < 0 || cut > len(in) {
			cut = len(in)
		}
		out := append(s.Scan(in[:cut]), s.Scan(in[cut:])...)
		for len(out) > 0 {
			switch {
			case bytes.HasPrefix(out, []byte(answerDA1)):
				out = out[len(answerDA1):]
			case bytes.HasPrefix(out, []byte(answerStatus)):
				out = out[len(answerStatus):]
			case bytes.HasPrefix(out, []byte(answerCursor)):
				out = out[len(answerCursor):]
			default:
				t.Fatalf("an answer that is not one of the fixed ones: %q", out)
			}
		}
	})
}
