package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/jail-sandbox/jail/fsrules"
)

// This file: the note that names a project's .env files the built-in
// protections hide. A Python project's tests call load_dotenv(), which
// opens .env and stops with PermissionError inside (python-dotenv does
// not catch it); docker compose and Rails' dotenv read it the same way.
// The user saw a traceback and nothing from jail.

// dotenvNotePrefix starts the note (shownNote says it at start).
const dotenvNotePrefix = "secrets: "

// dotenvNoteMax bounds the files the note names.
const dotenvNoteMax = 4

// dotenvNote names the .env files (the built-ins .env, .env.* and *.env)
// the walk masked where a program finds them: in the workspace's top
// level, the directory the command starts in, and those between. It
// says what loading one does inside and the two ways out: the lift of
// one file, or the variable the run needs passed by name. "" for none.
func dotenvNote(masks []fsrules.Mask, ws, cwd string) string {
	var rels []string
	for _, m := range masks {
		if m.Kind != fsrules.Hide || m.Dir || !dotenvRule(m.Rule) {
			continue
		}
		dir := filepath.Dir(m.Path)
		if dir != ws && !(strings.HasPrefix(cwd, dir+"/") || cwd == dir) || !strings.HasPrefix(dir+"/", ws+"/") {
			continue // elsewhere in the tree: not where a program looks
		}
		rel, err := filepath.Rel(cwd, m.Path)
		if err != nil {
			continue
		}
		rels = append(rels, rel)
	}
	if len(rels) == 0 {
		return ""
	}
	first := rels[0]
	shown := rels
	more := ""
	if len(rels) > dotenvNoteMax {
		shown, more = rels[:dotenvNoteMax], fmt.Sprintf(" and %d more", len(rels)-dotenvNoteMax)
	}
	verb, them := "is", "it"
	if len(rels) > 1 {
		verb, them = "are", "them"
	}
	return fmt.Sprintf("%s%s%s %s unreadable inside (built-in protection): a program that loads %s (dotenv, docker compose) fails with \"Permission denied\"; if the run needs %s, pass the variables it needs (`env` NAME) or show %s (`no-default-deny-at` %s)",
		dotenvNotePrefix, strings.Join(shown, ", "), more, verb, them, them, first, first)
}

// dotenvRule reports whether a mask's rule is one of the .env built-ins
// (their own hit: not a link's or a hard link's).
func dotenvRule(rule string) bool {
	switch rule {
	case "default: .env", "default: .env.*", "default: *.env":
		return true
	}
	return false
}
