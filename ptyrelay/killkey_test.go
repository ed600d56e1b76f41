package ptyrelay

import "testing"

func TestKillKey(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chunks []string
		want   bool
	}{
		{"at start", []string{"~."}, true},
		{"after enter", []string{"ls\r~."}, true},
		{"after newline", []string{"ls\n~."}, true},
		{"split across reads", []string{"ls\r", "~", "."}, true},
		{"mid line", []string{"a~."}, false},
		{"tilde then other", []string{"\r~x."}, false},
		{"tilde tilde dot", []string{"\r~~."}, false},
		{"dot alone", []string{"\r."}, false},
		{"ctrl-c twice", []string{"\x03\x03"}, false},
		{"arrow keys", []string{"\r\x1b[A~."}, false},
		{"in a paste", []string{"\x1b[200~line\r~.\rmore\x1b[201~"}, false},
		{"paste split", []string{"\x1b[20", "0~x\r~", ".\x1b[201~"}, false},
		{"after a paste", []string{"\x1b[200~x\x1b[201~\r~."}, true},
		{"enter after escape", []string{"\x1b\r~."}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKeyScanner()
			got := false
			for _, c := range tc.chunks {
				if i := k.scan([]byte(c)); i >= 0 {
					if c[i] != '.' {
						t.Fatalf("index %d points at %q", i, c[i])
					}
					got = true
				}
			}
			if got != tc.want {
				t.Fatalf("kill key found %v, want %v", got, tc.want)
			}
		})
	}
}

func FuzzKillKey(f *testing.F) {
	f.Add([]byte("\r~."), 1)
	f.Add([]byte("\x1b[200~\r~.\x1b[201~"), 3)
	f.Fuzz(func(t *testing.T, in []byte, split int) {
		// Found or not, and where, does not depend on how reads split
		// the stream.
		whole := newKeyScanner().scan(in)
		if split < 0 || split > len(in) {
			split = len(in) / 2
		}
		k := newKeyScanner()
		got := k.scan(in[:split])
		if got < 0 {
			if j := k.scan(in[split:]); j >= 0 {
				got = split + j
			}
		}
		if got != whole {
			t.Fatalf("whole %d, split at %d: %d", whole, split, got)
		}
		if whole >= 0 && in[whole] != '.' {
			t.Fatalf("index %d is %q", whole, in[whole])
		}
	})
}
