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

	"github.com/jail-sandbox/jail/fsrules"
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
//
// running words the fix for a sandbox that runs already (jail exec): the
// flags are for its next start.
func hiddenArgNotes(args []string, cwd, home, sd string, mounts []ns.Mount, running bool) []string {
	var notes []string
	for _, a := range argPaths(args, cwd, home, true) {
		if len(notes) == argNoteMaxNotes {
			break
		}
		p, final := a.path, a.final
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
		fix := fmt.Sprintf("`read` %s shows it read-only, `write` %s writable", shown, shown)
		if running {
			fix = fmt.Sprintf("start the sandbox with `read` %s to see it read-only, or `write` %s writable", shown, shown)
		}
		notes = append(notes, fmt.Sprintf("%s%s is hidden inside (in %s): %s", argNotePrefix, shown, where, fix))
	}
	return notes
}

// maskedArgNotes names each argument of args that is a file the
// protections make unreadable inside (masks: the walk's, a built-in's or
// the user's --deny): `jail -- cat .env` or `jail -- openssl x509 -in
// certs/dev.pem` got the program's "Permission denied" and nothing from
// jail. A bare name counts here (.env has no slash): only the exact path
// of a mask, or one inside a hidden directory, is said. Each says the
// rule, and for a built-in that can be lifted there the lift that shows
// that one path, the rest staying protected.
func maskedArgNotes(args []string, cwd, home string, masks []fsrules.Mask, running bool) []string {
	var notes []string
	said := map[string]bool{}
	for _, a := range argPaths(args, cwd, home, false) {
		if len(notes) == argNoteMaxNotes {
			break
		}
		// As typed (.env, not /ws/.env): --no-default-deny-at resolves it
		// from the same directory.
		shown := a.typed
		m := hidingMask(a.path, masks)
		if m == nil {
			if m = hidingMask(a.final, masks); m == nil {
				continue
			}
			// Through a link: the lift names the file itself (one through
			// a link is refused).
			shown = a.final
			if r, err := filepath.Rel(cwd, a.final); err == nil && !strings.HasPrefix(r, "../") {
				shown = r
			}
		}
		if said[shown] {
			continue // a link and its file, both named
		}
		said[shown] = true
		var how string
		switch {
		case fsrules.Liftable(m.Rule):
			// The path named itself, not its tree: the user asked for this
			// file, and a lift wider than that would show its neighbours.
			how = fmt.Sprintf("the built-in protection %s hides it; `no-default-deny-at` %s shows it, and the rest stays protected", strings.TrimPrefix(m.Rule, "default: "), shown)
			if running {
				how = fmt.Sprintf("the built-in protection %s hides it; start the sandbox with `no-default-deny-at` %s to see it, the rest staying protected", strings.TrimPrefix(m.Rule, "default: "), shown)
			}
		case strings.HasPrefix(m.Rule, "deny "):
			how = "your `deny` " + strings.TrimPrefix(m.Rule, "deny ") + " hides it"
		default:
			how = "jail's built-in protections hide it (" + strings.TrimPrefix(m.Rule, "default: ") + ")"
		}
		notes = append(notes, fmt.Sprintf("%s%s is unreadable inside: %s", argNotePrefix, shown, how))
	}
	return notes
}

// execArgNotes are the notes of both kinds for a jail exec's command
// argv started in cwd inside the running sandbox of plan: its mounts are
// what the start decided, the protections' masks among them (a built-in's
// or a deny's: the rule is the mount's why).
func execArgNotes(argv []string, cwd string, plan *Plan) []string {
	if len(argv) < 2 || plan == nil {
		return nil
	}
	var masks []fsrules.Mask
	for _, m := range plan.Mounts {
		if m.Kind == ns.KindMask && (strings.HasPrefix(m.Why, "default: ") || strings.HasPrefix(m.Why, "deny ")) {
			masks = append(masks, fsrules.Mask{Path: m.Path, Kind: fsrules.Hide, Dir: m.Dir, Rule: m.Why})
		}
	}
	notes := hiddenArgNotes(argv[1:], cwd, plan.Home, plan.StateDir, plan.Mounts, true)
	return append(notes, maskedArgNotes(argv[1:], cwd, plan.Home, masks, true)...)
}

// hidingMask is the mask of masks that makes p unreadable: a hidden file
// at p, or a hidden directory holding it; nil if none.
func hidingMask(p string, masks []fsrules.Mask) *fsrules.Mask {
	for i := range masks {
		m := &masks[i]
		if m.Kind != fsrules.Hide {
			continue
		}
		if m.Path == p || m.Dir && strings.HasPrefix(p, m.Path+"/") {
			return m
		}
	}
	return nil
}

// argPath is one argument naming a host file: as shown to the user, its
// absolute path and that path with its links resolved; typed is the
// argument cleaned (an option's value).
type argPath struct {
	shown, typed, path, final string
}

// argPaths are the arguments of args (the command's, after its name)
// that name a file or directory the host has: a path the user typed or
// the shell expanded (absolute, ./, ../, ~/, a name with a slash, an
// option's =value), and with slashed false also a bare name (resolved in
// cwd). Each once; at most argNoteMaxArgs arguments looked at.
func argPaths(args []string, cwd, home string, slashed bool) []argPath {
	var out []argPath
	seen := map[string]bool{}
	for i, a := range args {
		if i == argNoteMaxArgs {
			break
		}
		if strings.HasPrefix(a, "-") {
			_, v, ok := strings.Cut(a, "=")
			if !ok {
				continue
			}
			a = v
		}
		if slashed && !pathLike(a) || !slashed && !pathWord(a) {
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
		out = append(out, argPath{shown: tildePath(p, home), typed: filepath.Clean(a), path: p, final: final})
	}
	return out
}

// pathWord reports whether an argument could name a file, bare names
// included: not empty, no spaces (a shell's -c script, a message), not a
// URL.
func pathWord(a string) bool {
	return a != "" && a != "." && a != ".." && !strings.ContainsAny(a, " \t\n") && !strings.Contains(a, "://")
}

// pathLike reports whether an argument names a path rather than a word:
// absolute, relative with a slash, or ~/. Words with spaces (a shell's -c
// script) are not paths.
func pathLike(a string) bool {
	return pathWord(a) && strings.Contains(a, "/")
}
