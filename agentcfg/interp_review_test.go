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

// TestCommandScriptsReview15f: a script named without a slash after an
// interpreter that `uv run` or `bun run` names, after python's -O or -I
// (flags with no value in python), or in a directory a second, relative cd
// moved to, is a path of the line. Seen failing on main (77c4d85): no path
// /h/.claude/hooks/h.x for each line below (uv's "script" was the word
// python, -I took h.x for its value, cd hooks moved nowhere).
func TestCommandScriptsReview15f(t *testing.T) {
	for _, line := range []string{
		`cd ~/.claude/hooks && uv run python h.x`,
		`cd ~/.claude/hooks && uv run python3 h.x`,
		`cd ~/.claude/hooks && uv run --with requests python h.x`,
		`cd ~/.claude/hooks && uv run -- python h.x`,
		`cd ~/.claude/hooks && bun run node h.x`,
		`cd ~/.claude/hooks && python3 -O h.x`,
		`cd ~/.claude/hooks && python3 -I h.x`,
		`cd ~/.claude && cd hooks && python3 h.x`,
		// These held on main: a wrapper in front of the interpreter.
		`cd ~/.claude/hooks && env -S "python3 -u" h.x`,
		`cd ~/.claude/hooks && exec -a x python3 h.x`,
		`cd ~/.claude/hooks && timeout 10 python3 h.x`,
		`cd ~/.claude/hooks && nice -n 5 python3 h.x`,
		`cd ~/.claude/hooks && command python3 h.x`,
		`cd ~/.claude/hooks && xargs python3 h.x`,
		`bash -lc "cd ~/.claude/hooks && python3 h.x"`,
		`cd ~/.claude/hooks && /usr/bin/env python3 h.x`,
		`cd ~/.claude/hooks && bash -O extglob h.x`,
	} {
		var interp string
		found := false
		for _, p := range commandScripts(line, "/h", "/w") {
			if p.path == "/h/.claude/hooks/h.x" {
				found, interp = true, p.interp
			}
		}
		if !found || interp == "" {
			t.Errorf("commandScripts(%q) = %v: the script /h/.claude/hooks/h.x is not named as a script", line, commandScripts(line, "/h", "/w"))
		}
	}
	// Python's -W and -X still take a value; a shell's -O too.
	for _, line := range []string{`python3 -W ignore ~/.claude/h.x`, `python3 -X dev ~/.claude/h.x`, `bash -O extglob ~/.claude/h.x`} {
		for _, p := range commandScripts(line, "/h", "/w") {
			if p.path == "/w/ignore" || p.path == "/w/dev" || p.path == "/w/extglob" {
				t.Errorf("commandScripts(%q): a flag's value taken for the script: %v", line, p)
			}
		}
	}
}
