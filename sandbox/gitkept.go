package sandbox

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/jail-sandbox/jail/gitkeep"
	"github.com/jail-sandbox/jail/statedir"
)

// keepGitHistory brings the store of every repository the plan found in
// its writable trees up to date (package gitkeep: loose objects
// hard-linked, refs recorded) before anything of the sandbox runs, so that
// what this run's agent deletes from them is in the store, which no
// sandbox reaches. Linked worktrees' git dirs hold no objects: their
// repository's own git dir is kept. Nothing with --allow-git-config (the
// user trusts the command with git: plan.Git is nil) or without a state
// directory. It returns the notices to say: a store on another file system
// (no object kept) and a start that had more objects to link than one
// start links.
func keepGitHistory(plan *Plan) []string {
	if plan.StateDir == "" || plan.Git == nil {
		return nil
	}
	base := filepath.Join(plan.StateDir, statedir.GitKept)
	budget := gitkeep.MaxLinks
	var notes []string
	for _, d := range plan.Git.Repos {
		if _, err := os.Lstat(filepath.Join(d, "commondir")); err == nil {
			continue
		}
		res, err := gitkeep.Keep(gitkeep.Store(base, d), d, &budget)
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("git: the loose objects and refs of %s are not kept outside the sandbox: %v", d, err))
		case res.CrossFS:
			notes = append(notes, fmt.Sprintf("git: the loose objects of %s are not kept outside the sandbox: %s is on another file system (its refs are)", d, base))
		case res.Full:
			notes = append(notes, fmt.Sprintf("git: only %d loose objects are kept outside the sandbox at one start; the others of %s can be deleted in this run (git gc on the host packs them)", gitkeep.MaxLinks, d))
		}
	}
	return notes
}
