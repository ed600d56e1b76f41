package config

import "github.com/pelletier/go-toml/v2/unstable"

// KeyLines is keyLines, for the external tests (keylines_test.go, which
// read the built-in profiles through package profile, which imports this
// one).
var KeyLines = keyLines

// KeyLinesShape is keyLines as it was: each line from the parser's Shape,
// which keyLines' lineIndex must match.
func KeyLinesShape(data []byte) (map[string]int, error) {
	return keyLinesAt(data, func(p *unstable.Parser, r unstable.Range) int { return p.Shape(r).Start.Line })
}
