package fsrules

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/jail-sandbox/jail/internal/asciifold"
)

// This file: the places where the user lifted the built-in protections
// (--no-default-deny-at, Input.Lifted), and only there. A repository's
// test keys (testdata/server.key, a TLS package's *.pem), its committed
// .env.example and its fixtures named like credentials were hidden, and
// --no-default-deny, the only way to read them inside, dropped every
// built-in everywhere: the home's secrets, the startup files, the agents'
// hooks.
//
// What a lift does not take off: the user's own --deny rules; git's
// protections (--allow-git-config; package gitguard guards more of them
// than these rules); a file that a protected name outside the lift leads
// to, as a symlink or another hard link (the protection is that name's);
// and what is no built-in rule: jail's config and state directories, the
// agents' configuration keys (package agentcfg), a directory the walk
// cannot read.

// ErrNotLiftable: a lift names what it cannot take off.
var ErrNotLiftable = errors.New("cannot be lifted there")

// liftable reports whether rule r is one a lift takes off: a built-in
// that is not git's.
func liftable(r *rule) bool { return !r.user && !r.git }

// liftedAt returns the lift p lies at or below, or "".
func liftedAt(lifts []string, p string) string {
	for _, l := range lifts {
		if under(p, l) {
			return l
		}
	}
	return ""
}

// Liftable reports whether a mask of rule (Mask.Rule) is one a lift at
// its path would take off: a built-in's own hit, not git's, not one
// reached through a symlink or another hard link of a protected name
// ("default: *.pem (via symlink /ws/k.pem)"), not a directory hidden
// because it cannot be read.
func Liftable(rule string) bool {
	name, ok := strings.CutPrefix(rule, "default: ")
	if !ok || strings.Contains(name, " (") {
		return false
	}
	for _, b := range Builtins {
		if b.Name == name {
			return !b.Git
		}
	}
	return false
}

// lifted reports whether rule r does not apply at p because the user
// lifted it there, and counts the lift as used.
func (w *walker) lifted(r *rule, p string) bool {
	if len(w.lifts) == 0 || !liftable(r) {
		return false
	}
	l := liftedAt(w.lifts, p)
	if l == "" {
		return false
	}
	w.liftUsed[l] = true
	return true
}

// liftedBuiltin is lifted for built-in b at p (the absent and glob passes,
// which go by the Builtins table).
func (w *walker) liftedBuiltin(b Builtin, p string) bool {
	return w.lifted(&rule{git: b.Git}, p)
}

// checkLifts refuses a lift that cannot do what it says: one of git's
// protections (--allow-git-config is the switch for those), or a path
// inside a directory a built-in protects whole (the directory's mask
// covers it; the directory itself must be lifted). Errors are *Error.
func checkLifts(in Input, all []rule) error {
	for _, l := range in.Lifted {
		if l == "" || l[0] != '/' || path.Clean(l) != l {
			return &Error{Key: "no-default-deny-at", Value: l, Err: fs.ErrInvalid, Hint: "paths must be absolute and clean (a bug in jail if you see this)"}
		}
		for a := l; ; a = path.Dir(a) {
			la := asciifold.Lower(a)
			for i := range all {
				ru := &all[i]
				if ru.user {
					continue
				}
				x := a
				if ru.pat.Fold {
					x = la
				}
				if !ru.pat.Match(x, true) {
					continue
				}
				if ru.git {
					return &Error{Key: "no-default-deny-at", Value: l, Err: fmt.Errorf("%w: %s is one of git's protections", ErrNotLiftable, ru.name),
						Hint: "`allow-git-config` trusts the command with git's config and hooks", Rule: ru.name}
				}
				if a == l || liftedAt(in.Lifted, a) != "" {
					continue // lifted here, or by another lift above
				}
				what := "hides whole"
				if ru.kind == ReadOnly {
					what = "keeps read-only whole"
				}
				return &Error{Key: "no-default-deny-at", Value: l, Err: fmt.Errorf("%w: inside %s, which %s %s", ErrNotLiftable, a, ru.name, what),
					Hint: fmt.Sprintf("give `no-default-deny-at` %s itself if you mean it", a), Rule: ru.name}
			}
			if a == "/" {
				break
			}
		}
	}
	return nil
}

// LiftNotePrefix starts the note of a lift that took nothing off.
const LiftNotePrefix = "`no-default-deny-at` "

// liftNotes says which lifts took nothing off.
func (w *walker) liftNotes() []string {
	var out []string
	for _, l := range w.lifts {
		if !w.liftUsed[l] {
			out = append(out, fmt.Sprintf("%s%s: no built-in protection applies there: nothing lifted", LiftNotePrefix, l))
		}
	}
	return out
}
