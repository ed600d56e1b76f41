package agentcfg

import (
	"testing"
)

// TestCommandScriptsMoreInterpreters: a script named without a slash after
// an interpreter, in a directory a cd moved to, is a path of the line
// whatever the interpreter (review15c: julia, java's single-file source
// launcher, awk -f, tclsh, elixir, csh and others ran
// a script the scanner did not name, so the agent could rewrite it and it
// ran on the host next time). Seen failing on main (30093d6): no path for
// each line below.
func TestCommandScriptsMoreInterpreters(t *testing.T) {
	for _, line := range []string{
		`cd ~/.claude/hooks && julia h.x`,
		`cd ~/.claude/hooks && java h.x`,
		`cd ~/.claude/hooks && awk -f h.x`,
		`cd ~/.claude/hooks && gawk -f h.x`,
		`cd ~/.claude/hooks && tclsh h.x`,
		`cd ~/.claude/hooks && elixir h.x`,
		`cd ~/.claude/hooks && csh h.x`,
		`cd ~/.claude/hooks && tcsh h.x`,
		`cd ~/.claude/hooks && guile h.x`,
		`cd ~/.claude/hooks && racket h.x`,
		`cd ~/.claude/hooks && groovy h.x`,
		`cd ~/.claude/hooks && nu h.x`,
		`cd ~/.claude/hooks && xonsh h.x`,
		`cd ~/.claude/hooks && yash h.x`,
		`cd ~/.claude/hooks && R -f h.x`,
		`cd ~/.claude/hooks && expect h.x`,
	} {
		found := false
		for _, p := range commandScripts(line, "/h", "/w") {
			found = found || p.path == "/h/.claude/hooks/h.x"
		}
		if !found {
			t.Errorf("commandScripts(%q) = %v: the script /h/.claude/hooks/h.x is not named", line, commandScripts(line, "/h", "/w"))
		}
	}
}
