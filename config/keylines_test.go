package config

import (
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/pelletier/go-toml/v2/unstable"
)

// keyLinesShape is keyLines as it was: each line from the parser's Shape,
// which lineIndex must match.
func keyLinesShape(data []byte) (map[string]int, error) {
	return keyLinesAt(data, func(p *unstable.Parser, r unstable.Range) int { return p.Shape(r).Start.Line })
}

// keyLines gives the lines the parser's Shape gives, for every built-in
// profile and for keys on a file's first and last lines, after blank
// lines, CRLF line ends and multi-line arrays.
func TestKeyLinesAsShape(t *testing.T) {
	files, err := filepath.Glob("../profile/profiles/*.toml")
	if err != nil || len(files) < 5 {
		t.Fatalf("the built-in profiles: %v %v", files, err)
	}
	var inputs [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, b)
	}
	inputs = append(inputs, []byte("a = 1"), []byte("\n\n\nb = [\n 1,\n\n 2]\n[t]\nc = \"x\"\n[[create]]\npath = \"~/x\"\n"),
		[]byte("a = 1\r\nb = [\r\n \"x\",\r\n]\r\n"), []byte(""))
	keys := 0
	for i, in := range inputs {
		got, gerr := keyLines(in)
		want, werr := keyLinesShape(in)
		if (gerr == nil) != (werr == nil) || !maps.Equal(got, want) {
			t.Errorf("input %d: keyLines %v (%v), Shape %v (%v)", i, got, gerr, want, werr)
		}
		keys += len(got)
	}
	if keys < 200 {
		t.Errorf("%d keys in all: the table tests little", keys)
	}
}

// FuzzKeyLines: the same for any input.
func FuzzKeyLines(f *testing.F) {
	f.Add([]byte("a = 1\nb = [\n 1,\n 2]\n[t]\nc = 2\n"))
	f.Add([]byte("[[create]]\npath = 1\n\n[[create]]\npath = 2\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, gerr := keyLines(in)
		want, werr := keyLinesShape(in)
		if (gerr == nil) != (werr == nil) || !maps.Equal(got, want) {
			t.Fatalf("keyLines %v (%v), Shape %v (%v)", got, gerr, want, werr)
		}
	})
}
