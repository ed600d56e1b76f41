package sandbox

// This file: the note that names the command's own arguments the sandbox
// hides. `jail -- python3 ~/datasets/prep.py` or `jail -- cat
// ~/notes/todo.md` name a file of the user's home, which the sandbox sees
// empty: the program says "No such file or directory", which reads as a
// typo, and jail, which knew at start, said nothing.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jail-sandbox/jail/hostpath"
	"github.com/jail-sandbox/jail/ns"
)

// argNotePrefix begins the note (shownNote).
const argNotePrefix = "argument "

// argNoteMax bounds the arguments looked at, and the notes made.
const (
	argNoteMaxArgs  = 64
	argNoteMaxNotes = 3
)

// hiddenArgNotes names each argument of args (the command's, after its
// name) that is a path on the host, the user typed or the shell expanded
// (absolute, ./, ../, ~/, a name with a slash, an option's =value), and
// that mounts (the plan's) hide: a file or directory that exists on the
// host and lies, itself or through a link on the way, in a place the
// sandbox replaces with an empty one. Each says where and the flag that
// shows it. A path in a secret place (~/.ssh, a key) or in jail's state
// directory sd gets no note: jail hides those on purpose, and refuses a
// --read of one.
func hiddenArgNotes(args []string, cwd, home, sd string, mounts []ns.Mount) []string {
	var notes []string
	seen := map[string]bool{}
	for i, a := range args {
		if i == argNoteMaxArgs || len(notes) == argNoteMaxNotes {
			break
		}
		if strings.HasPrefix(a, "-") {
			_, v, ok := strings.Cut(a, "=")
			if !ok {
				continue
			}
			a = v
		}
		if !pathLike(a) {
			continue
		}
		p := a
		if strings.HasPrefix(p, "~/") && home != "" {
			p = filepath.Join(home, p[2:]) // quoted from the shell: the program will not expand it either
		} else if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		p = filepath.Clean(p)
		if seen[p] {
			continue
		}
		seen[p] = true
		if _, err := os.Lstat(p); err != nil {
			continue // not on the host either: the program's own error is right
		}
		final, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		if visibleIn(p, mounts) && visibleIn(final, mounts) {
			continue
		}
		f := hostpath.File{Path: p, Final: final}
		if secretPlace(f, home) != "" || sd != "" && (enclosing(final, []string{sd}) != "" || enclosing(p, []string{sd}) != "") {
			continue
		}
		where := "a place the sandbox replaces with an empty one"
		hidden := final
		if !visibleIn(p, mounts) {
			hidden = p
		}
		if m := deepestMount(hidden, mounts); m != nil && home != "" && m.Path == home {
			where = "your home, which the sandbox sees empty"
		} else if m != nil {
			where = m.Path + ", which the sandbox replaces with an empty one"
		}
		shown := tildePath(p, home)
		notes = append(notes, fmt.Sprintf("%s%s is hidden inside (in %s): `read` %s shows it read-only, `write` %s writable", argNotePrefix, shown, where, shown, shown))
	}
	return notes
}

// pathLike reports whether an argument names a path rather than a word:
// absolute, relative with a slash, or ~/. Words with spaces (a shell's -c
// script) are not paths.
func pathLike(a string) bool {
	if a == "" || strings.ContainsAny(a, " \t\n") || strings.Contains(a, "://") {
		return false
	}
	return strings.Contains(a, "/")
}
