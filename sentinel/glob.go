package sentinel

import (
	"os"
	"path"

	"github.com/jail-sandbox/jail/internal/asciifold"
)

// This file: directories watched for new names matching a pattern
// (Config.Globs).

// List returns g with Had set to the names in g.Dir matching its pattern
// now (none when g.Dir cannot be listed: it does not exist). Call it
// before the sandbox starts: what it lists is the user's, and kept.
func List(g Glob) Glob {
	g.Had = nil
	names, _ := os.ReadDir(g.Dir)
	for _, e := range names {
		if g.matches(e.Name()) {
			g.Had = append(g.Had, e.Name())
		}
	}
	return g
}

// matches reports whether name matches g's pattern, ASCII letters in any
// case.
func (g *Glob) matches(name string) bool {
	ok, _ := path.Match(g.Pattern, asciifold.Lower(name))
	return ok
}
