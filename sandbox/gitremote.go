package sandbox

// This file: the note about a git remote that is a repository on this
// machine (a bare repository in the home, a sibling clone, a mirror under
// /srv) which the sandbox hides or keeps read-only. Git inside then fails
// with words that do not point at jail, "does not appear to be a git
// repository" for a hidden one and "unable to create temporary object
// directory" for a push to a read-only one, and only the agent sees them.

import (
	"fmt"

	"github.com/jail-sandbox/jail/hostgit"
	"github.com/jail-sandbox/jail/hostpath"
	"github.com/jail-sandbox/jail/ns"
)

// gitRemotePrefix begins the note (shownNote).
const gitRemotePrefix = "git remote "

// gitRemoteMax bounds the remotes named, one note each.
const gitRemoteMax = 3

// gitRemoteNotes returns a note for each local remote of the workspace's
// repository (hostgit.LocalRemotes) that mounts (the plan's) hide or keep
// read-only, at most gitRemoteMax. Not named: a remote in the workspace
// (it is the workspace's to write or not), one a read path shows (the
// user chose read-only), in a secret place or in jail's state directory
// sd (no option shows those), or behind a mask.
func gitRemoteNotes(ws, home, sd string, mounts []ns.Mount) []string {
	var notes []string
	for _, r := range hostgit.LocalRemotes(ws, home) {
		if len(notes) == gitRemoteMax {
			break
		}
		if enclosing(r.Path, []string{ws}) != "" || (sd != "" && enclosing(r.Path, []string{sd}) != "") ||
			secretPlace(hostpath.File{Path: r.Path, Final: r.Path}, home) != "" {
			continue
		}
		shown := tildePath(r.Path, home)
		switch m := deepestMount(r.Path, mounts); {
		case m != nil && m.Kind == ns.KindTmpfs:
			// Why a read and a write path both: a fetch reads the
			// repository, a push writes its objects and refs; gitguard
			// keeps a writable repository's hooks and config read-only,
			// so neither runs the sandbox's code on the host.
			notes = append(notes, fmt.Sprintf("%s%s (%s) is hidden inside, so git cannot fetch from it (\"does not appear to be a git repository\"): `read` %s lets git fetch, `write` %s push too (its hooks and config stay read-only)",
				gitRemotePrefix, r.Name, shown, shown, shown))
		case m == nil || m.Kind == ns.KindReadOnly:
			// The host's read-only view (a --read path, ro-bind, is the
			// user's choice: not said).
			notes = append(notes, fmt.Sprintf("%s%s (%s) is read-only inside, so a push to it fails (\"unable to create temporary object directory\"): `write` %s lets git push (its hooks and config stay read-only)",
				gitRemotePrefix, r.Name, shown, shown))
		}
	}
	return notes
}
