package sandbox

import (
	"path/filepath"

	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/pastwrite"
	"github.com/jail-sandbox/jail/statedir"
)

// recordWritten adds the host trees plan makes writable (the workspace
// unless read-only, the write paths, the host's own caches under
// --host-caches, a linked worktree's shared git dir) to the record of trees earlier runs could
// write (package pastwrite), in jail's state directory: a later run's link
// checks (grantLinks, workspaceLinks) then treat a symlink in one as this
// run's command may have left it. Nothing is written when the plan's
// record has them all already (most starts: one stat a tree). No state
// directory ($HOME and $XDG_STATE_HOME unset or relative): nothing to
// record in, as nothing is read.
func recordWritten(plan *Plan) error {
	if plan.StateDir == "" {
		return nil
	}
	var trees []string
	for _, m := range plan.Mounts {
		// Why every writable bind of a host directory at its own path
		// (no Source), not only the workspace and --write: a command can
		// plant links in a host cache --host-caches binds as well
		// (review15b). A bind from elsewhere (jail's own caches) leaves
		// the host's directory at that path untouched.
		if m.Kind == ns.KindBind && m.Dir && m.Source == "" {
			trees = append(trees, m.Path)
		}
	}
	return pastwrite.Record(filepath.Join(plan.StateDir, statedir.Written), plan.past, trees)
}
