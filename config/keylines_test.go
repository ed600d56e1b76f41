package config

import (
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2/unstable"
)

// keyLinesShape is keyLines as it was, with the parser's Shape for every
// line: the reference lineIndex must match.
func keyLinesShape(data []byte) (map[string]int, error) {
	lines := map[string]int{}
	var p unstable.Parser
	p.Reset(data)
	parts := func(e *unstable.Node) ([]string, int) {
		var out []string
		line := 0
		it := e.Key()
		for it.Next() {
			n := it.Node()
			out = append(out, string(n.Data))
			if line == 0 {
				line = p.Shape(n.Raw).Start.Line
			}
		}
		return out, line
	}
	prefix := ""
	arrayTables := map[string]int{}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			ps, line := parts(e)
			name := strings.Join(ps, ".")
			if e.Kind == unstable.ArrayTable {
				i := arrayTables[name]
				arrayTables[name] = i + 1
				lines[name+"\x00"+strconv.Itoa(i)] = line
				prefix = name + "\x00" + strconv.Itoa(i) + "\x00"
			} else {
				prefix = name + "\x00"
			}
			if _, ok := lines[name]; !ok {
				lines[name] = line
			}
		case unstable.KeyValue:
			ps, line := parts(e)
			key := prefix + strings.Join(ps, ".")
			lines[key] = line
			if v := e.Value(); v.Kind == unstable.Array {
				c := v.Children()
				for i := 0; c.Next(); i++ {
					if n := c.Node(); n.Raw.Length > 0 {
						lines[key+"\x00"+strconv.Itoa(i)] = p.Shape(n.Raw).Start.Line
					} else {
						lines[key+"\x00"+strconv.Itoa(i)] = line
					}
				}
			}
		}
	}
	return lines, p.Error()
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
