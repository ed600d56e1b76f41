package config_test

import (
	"maps"
	"testing"

	"github.com/jail-sandbox/jail/config"
	"github.com/jail-sandbox/jail/profile"
)

// keyLines gives the lines the parser's Shape gives, for every built-in
// profile and for keys on a file's first and last lines, after blank
// lines, CRLF line ends and multi-line arrays.
func TestKeyLinesAsShape(t *testing.T) {
	// From the binary's own copies (package profile embeds them): the
	// test binary may run where the source tree is not (CI's user run).
	var src profile.Source
	list, err := src.List()
	if err != nil || len(list) < 5 {
		t.Fatalf("the built-in profiles: %d, %v", len(list), err)
	}
	var inputs [][]byte
	for _, p := range list {
		b, _, err := src.Raw(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, b)
	}
	inputs = append(inputs, []byte("a = 1"), []byte("\n\n\nb = [\n 1,\n\n 2]\n[t]\nc = \"x\"\n[[create]]\npath = \"~/x\"\n"),
		[]byte("a = 1\r\nb = [\r\n \"x\",\r\n]\r\n"), []byte(""))
	keys := 0
	for i, in := range inputs {
		got, gerr := config.KeyLines(in)
		want, werr := config.KeyLinesShape(in)
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
		got, gerr := config.KeyLines(in)
		want, werr := config.KeyLinesShape(in)
		if (gerr == nil) != (werr == nil) || !maps.Equal(got, want) {
			t.Fatalf("keyLines %v (%v), Shape %v (%v)", got, gerr, want, werr)
		}
	})
}
